/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.BoundConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.micrometer.HeartbeatMetrics;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** The Micrometer binding reports what {@link HeartbeatStats} says, under stable names and tags. */
class HeartbeatMetricsTest {

    @Test
    void reportsChannelsClosesByReasonAndTheWorker() {
        ManualTicker ticker = new ManualTicker(0);
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
                .maxCoalescing(Duration.ZERO).build();
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
        assertEquals(1.0, registry.get("heartbeat.connections.tracked").tag("server", "test").gauge().value());
        assertEquals(1.0, registry.get("heartbeat.connections.closed").tags("reason", "all_idle")
                .functionCounter().count());
        assertEquals(0.0, registry.get("heartbeat.connections.closed").tags("reason", "ping_timeout")
                .functionCounter().count());
        assertEquals(1.0, registry.get("heartbeat.idle.events").tags("state", "reader_idle").functionCounter().count());
        assertEquals((double) monitor.stats().timer().expired(),
                registry.get("heartbeat.worker.expirations").functionCounter().count());
        for (String alert : new String[] {"heartbeat.dispatch.failures", "heartbeat.worker.callback.failures",
                "heartbeat.unmonitored.channels", "heartbeat.actions.deferred", "heartbeat.closes.held",
                "heartbeat.closes.hold.expired", "heartbeat.pings.backoffs", "heartbeat.overload.closes",
                "heartbeat.coarse.clock.late"}) {
            assertEquals(0.0, registry.get(alert).functionCounter().count(), alert);
        }
        assertEquals(0.0, registry.get("heartbeat.actions.deferral.worst").gauge().value());
        assertEquals(0.0, registry.get("heartbeat.actions.busiest.second").gauge().value());
        assertEquals(1.0, registry.get("heartbeat.overload.factor").gauge().value());
        open.finishAndReleaseAll();
        closing.finishAndReleaseAll();
        io.netty.channel.ChannelHandler made = monitor.newHandler(
                HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).build());
        monitor.close();
        EmbeddedChannel late = new EmbeddedChannel(made); // active after the close: not watched
        assertEquals(1.0, registry.get("heartbeat.unmonitored.channels").functionCounter().count());
        late.finishAndReleaseAll();
    }

    @Test
    void countsPingsPerProbeWhetherBoundBeforeOrAfterTheRegistry() {
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(new ManualTicker(0)).build();
        BoundConfig http2 = monitor.engine.bind(HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(10))
                .timeout(Duration.ofSeconds(2)).build().plan); // a probe the monitor counts before any registry
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HeartbeatMetrics(monitor).bindTo(registry);
        BoundConfig ws = monitor.engine.bind(HeartbeatConfig.ping(Probes.webSocket()).interval(Duration.ofSeconds(10))
                .timeout(Duration.ofSeconds(2)).build().plan); // and one it meets after
        monitor.engine.pingSent(http2);
        monitor.engine.pingSent(http2);
        monitor.engine.pingAcked(http2, TimeUnit.MILLISECONDS.toNanos(40));
        monitor.engine.pingMissed(http2);
        monitor.engine.pingSent(ws);
        monitor.engine.pingAcked(ws, -1); // answered, but not timed (any-inbound)

        assertEquals(2.0, registry.get("heartbeat.pings.sent").tag("probe", "http2").functionCounter().count());
        assertEquals(1.0, registry.get("heartbeat.pings.acked").tag("probe", "http2").functionCounter().count());
        assertEquals(1.0, registry.get("heartbeat.pings.timeouts").tag("probe", "http2").functionCounter().count());
        assertEquals(0.0, registry.get("heartbeat.pings.failed").tag("probe", "http2").functionCounter().count());
        assertEquals(1.0, registry.get("heartbeat.pings.acked").tag("probe", "websocket").functionCounter().count());
        Timer rtt = registry.get("heartbeat.ping.rtt").tag("probe", "http2").timer();
        assertEquals(1, rtt.count());
        assertEquals(40.0, rtt.totalTime(TimeUnit.MILLISECONDS), 1e-9);
        assertEquals(0, registry.get("heartbeat.ping.rtt").tag("probe", "websocket").timer().count(),
                "an untimed answer is no RTT sample");
        assertNull(registry.find("heartbeat.pings.sent").tag("probe", "mqtt").functionCounter(),
                "no meters for probes no configuration uses");
        ProbeStats stats = monitor.stats().pings("http2");
        assertEquals(new ProbeStats("http2", 2, 1, 1, 0), stats);
        assertEquals(new ProbeStats("mqtt", 0, 0, 0, 0), monitor.stats().pings("mqtt"));
        monitor.close();
    }

    @Test
    void countsTheWorkersLatenessOncePerCycleWithWork() {
        ManualTicker ticker = new ManualTicker(0);
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
                .maxCoalescing(Duration.ZERO).build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HeartbeatMetrics(monitor).bindTo(registry);
        HeartbeatConfig config = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).build();
        EmbeddedChannel a = new EmbeddedChannel(monitor.newHandler(config));
        EmbeddedChannel b = new EmbeddedChannel(monitor.newHandler(config));
        monitor.runOnce(); // applies the two registrations: no check due, no sample
        FunctionTimer lateness = registry.get("heartbeat.worker.lateness").functionTimer();
        Gauge max = registry.get("heartbeat.worker.lateness.max").gauge();
        assertEquals(0, lateness.count());
        ticker.advance(1_300, TimeUnit.MILLISECONDS); // both checks came due at 1 s (plus the wheel's rounding)
        monitor.runOnce();
        assertEquals(1, lateness.count(), "one sample for the cycle, not one per check");
        double ms = lateness.totalTime(TimeUnit.MILLISECONDS);
        assertTrue(ms > 250 && ms <= 300, "the worker ran the checks about 300 ms late: " + ms + " ms");
        assertEquals(ms, max.value() * 1000, 1e-6, "the maximum since the last read");
        assertEquals(0, max.value(), "read: reset until the next cycle with work");
        a.finishAndReleaseAll();
        b.finishAndReleaseAll();
        monitor.close();
    }
}
