/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** The Micrometer binding reports what {@link HeartbeatStats} says, under stable names and tags. */
class HeartbeatMetricsTest {

    @Test
    void reportsChannelsClosesByReasonAndTheWorker() {
        ManualTicker ticker = new ManualTicker(0);
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().ticker(ticker).maxCoalescing(Duration.ZERO).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HeartbeatMetrics(monitor, Tags.of("server", "test")).bindTo(registry);
        EmbeddedChannel open = new EmbeddedChannel(monitor.newHandler(
                HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).build()));
        EmbeddedChannel closing = new EmbeddedChannel(monitor.newHandler(
                HeartbeatConfig.closeWhenIdle().allIdle(Duration.ofSeconds(1)).build()));
        for (int ms = 0; ms < 1_010; ms++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
            open.runPendingTasks();
            closing.runPendingTasks();
        }
        assertFalse(closing.isOpen());
        assertEquals(1.0, registry.get("heartbeat.channels").tag("server", "test").gauge().value());
        assertEquals(1.0, registry.get("heartbeat.closes").tags("reason", "all_idle").functionCounter().count());
        assertEquals(0.0, registry.get("heartbeat.closes").tags("reason", "ping_timeout").functionCounter().count());
        assertEquals(1.0, registry.get("heartbeat.idle.events").tags("kind", "reader").functionCounter().count());
        assertEquals((double) monitor.stats().timer().expired(),
                registry.get("heartbeat.worker.expirations").functionCounter().count());
        open.finishAndReleaseAll();
        closing.finishAndReleaseAll();
        monitor.close();
    }
}
