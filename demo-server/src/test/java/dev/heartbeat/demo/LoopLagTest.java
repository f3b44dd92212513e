/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/** The event loops' lag probes ({@code --loop-lag}), on an embedded loop in frozen time. */
class LoopLagTest {

    private static final long MS = 1_000_000;

    private final EmbeddedChannel channel = new EmbeddedChannel();
    private final AtomicLong now = new AtomicLong();

    /** Moves both the loop's clock and the probe's by {@code nanos} and runs what is due. */
    private void advance(long nanos) {
        now.addAndGet(nanos);
        channel.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
        channel.runScheduledPendingTasks();
    }

    @Test
    void eachProbeRecordsHowLateItRanAndAStallOnce() {
        channel.freezeTime();
        LoopLag lag = new LoopLag(now::get);
        lag.start(channel.eventLoop(), Duration.ofMillis(1));
        assertTrue(lag.started());
        advance(MS + 300_000);
        assertEquals(1, lag.count(), "due at 1 ms, ran at 1.3 ms");
        advance(MS);
        assertEquals(2, lag.count(), "due 1 ms after its last run: on time");
        advance(10 * MS);
        // at a fixed rate the 10 overdue runs would record 9, 8, ... 0 ms: one stall counted 10 times
        assertEquals(3, lag.count(), "one sample for the 10 ms stall");
        Map<String, Double> m = TestSupport.parse(lag.exposition());
        assertEquals(0.009, m.get(LoopLag.NAME + "_max"), 1e-12, "the stall: due 1 ms after the last run, ran 9 later");
        assertEquals(0.0093, m.get(LoopLag.NAME + "_sum"), 1e-12);
        assertEquals(1, m.get(LoopLag.NAME + "_bucket{le=\"1.00000000e-06\"}"), "the on-time one");
        assertEquals(2, m.get(LoopLag.NAME + "_bucket{le=\"0.000304437021\"}"), "2^(33/4) us: and the 300 us one");
        assertEquals(3, m.get(LoopLag.NAME + "_count"));

        lag.stop();
        advance(5 * MS);
        assertEquals(3, lag.count(), "stopped: nothing more");
        advance(5 * MS);
        assertEquals(0, channel.runScheduledPendingTasks() > 0 ? 1 : 0, "nothing left scheduled");
        channel.finishAndReleaseAll();
    }

    @Test
    void aPeriodMustBePositive() {
        LoopLag lag = new LoopLag();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> lag.start(channel.eventLoop(), Duration.ZERO));
        assertEquals("--loop-lag must be a positive duration: 0s", e.getMessage());
        assertEquals(false, lag.started());
        e = assertThrows(IllegalArgumentException.class,
                () -> ServerConfig.builder().loopLag(Duration.ofMillis(-1)).build());
        assertEquals("--loop-lag must be a positive duration: " + DurationConverter.format(Duration.ofMillis(-1)),
                e.getMessage());
        channel.finishAndReleaseAll();
    }
}
