/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.TreeSet;

import dev.heartbeat.core.ManualTicker;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/**
 * The deprecated names left where classes moved from (issue 26's packages) still give what the new ones
 * give, so code written against them compiles and behaves as before.
 */
@SuppressWarnings("removal") // the deprecated forwarders are what this tests
class DeprecatedForwardersTest {

    @Test
    void theOldProbesGivesTheProbePackagesProbes() {
        assertSame(dev.heartbeat.netty.probe.Probes.http2(), Probes.http2());
        assertSame(dev.heartbeat.netty.probe.Probes.webSocket(), Probes.webSocket());
        assertSame(dev.heartbeat.netty.probe.Probes.mqttClient(), Probes.mqttClient());
        Probe custom = Probes.custom(ch -> "PING\n", "PONG"::equals, false);
        assertEquals(Probe.Matching.IN_ORDER, custom.matching());
        assertEquals(0, custom.classify("PONG", 0, 1), "a PONG answers the waiting ping");
        assertFalse(custom.consumes(0), "passed on, as asked");
        assertTrue(Probes.custom(ch -> "PING\n", "PONG"::equals).consumes(0));
        assertEquals(Probe.Matching.NONE, Probes.of(ch -> "PING\n").matching());
    }

    @Test
    void theOldHeartbeatMetricsBindsTheSameMeters() {
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(new ManualTicker(0)).build();
        SimpleMeterRegistry moved = new SimpleMeterRegistry();
        new dev.heartbeat.netty.micrometer.HeartbeatMetrics(monitor, Tags.of("server", "a")).bindTo(moved);
        SimpleMeterRegistry old = new SimpleMeterRegistry();
        MeterBinder binder = new HeartbeatMetrics(monitor, Tags.of("server", "a"));
        binder.bindTo(old);
        new HeartbeatMetrics(monitor).bindTo(new SimpleMeterRegistry());
        assertEquals(ids(moved), ids(old));
        assertTrue(ids(old).contains("heartbeat.connections.tracked[tag(server=a)]"), ids(old).toString());
        monitor.close();
    }

    private static Set<String> ids(MeterRegistry registry) {
        Set<String> ids = new TreeSet<>();
        for (Meter m : registry.getMeters()) {
            ids.add(m.getId().getName() + m.getId().getTags());
        }
        return ids;
    }
}
