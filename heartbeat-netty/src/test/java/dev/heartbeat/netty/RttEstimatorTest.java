/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.RttEstimator;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * {@link RttEstimator} against RFC 6298 values computed by hand. Samples are whole milliseconds, so
 * every expected value is exact in nanoseconds.
 */
class RttEstimatorTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long MIN = 10 * MS;
    private static final long MAX = 5_000 * MS;

    @Test
    void shouldFollowRfc6298ForASequenceOfSamples() {
        RttEstimator rtt = new RttEstimator();

        // First sample R = 100 ms: SRTT = R = 100, RTTVAR = R/2 = 50, RTO = 100 + 4 * 50 = 300.
        rtt.addSample(100 * MS);
        assertEquals(100 * MS, rtt.smoothedNanos());
        assertEquals(50 * MS, rtt.variationNanos());
        assertEquals(300 * MS, rtt.ackTimeoutNanos(MIN, MAX));

        // R' = 200: RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5;
        // RTO = 112.5 + 250 = 362.5.
        rtt.addSample(200 * MS);
        assertEquals(62_500_000, rtt.variationNanos());
        assertEquals(112_500_000, rtt.smoothedNanos());
        assertEquals(362_500_000, rtt.ackTimeoutNanos(MIN, MAX));

        // R' = 50: RTTVAR = 3/4 * 62.5 + 1/4 * |112.5 - 50| = 46.875 + 15.625 = 62.5 (the old SRTT);
        // SRTT = 7/8 * 112.5 + 1/8 * 50 = 98.4375 + 6.25 = 104.6875; RTO = 104.6875 + 250 = 354.6875.
        rtt.addSample(50 * MS);
        assertEquals(62_500_000, rtt.variationNanos());
        assertEquals(104_687_500, rtt.smoothedNanos());
        assertEquals(354_687_500, rtt.ackTimeoutNanos(MIN, MAX));

        // R' = 104.6875 (= SRTT): RTTVAR = 3/4 * 62.5 + 0 = 46.875; SRTT unchanged.
        rtt.addSample(104_687_500);
        assertEquals(46_875_000, rtt.variationNanos());
        assertEquals(104_687_500, rtt.smoothedNanos());
    }

    @Test
    void shouldAgreeWithThePureFunctions() {
        RttEstimator rtt = new RttEstimator();
        long srtt = 0;
        long rttvar = 0;
        long[] samples = {3, 1_000, 7 * MS, 250 * MS, 1, 42 * MS, 42 * MS, 9_999_999_999L};
        for (long r : samples) {
            rtt.addSample(r);
            long v = RttEstimator.nextVariation(srtt, rttvar, r); // from the SRTT before the sample
            srtt = RttEstimator.nextSmoothed(srtt, r);
            rttvar = v;
            assertEquals(srtt, rtt.smoothedNanos(), "srtt after " + r);
            assertEquals(rttvar, rtt.variationNanos(), "rttvar after " + r);
        }
    }

    @Test
    void shouldConvergeOnASteadyRoundTrip() {
        RttEstimator rtt = new RttEstimator();
        rtt.addSample(400 * MS);
        for (int i = 0; i < 200; i++) {
            rtt.addSample(20 * MS);
        }
        // Truncating integer steps stop short of the limit (SRTT 20 ms, RTTVAR 0) once a step rounds to
        // zero: SRTT within 7 ns of it, RTTVAR within 7 + 3 ns.
        assertTrue(Math.abs(rtt.smoothedNanos() - 20 * MS) <= 7, "srtt " + rtt.smoothedNanos());
        assertTrue(rtt.variationNanos() <= 10, "rttvar " + rtt.variationNanos());
        assertEquals(25 * MS, rtt.ackTimeoutNanos(25 * MS, MAX), "clamped to the minimum");
    }

    @Test
    void shouldAnswerMaxBeforeTheFirstSample() {
        RttEstimator rtt = new RttEstimator();
        assertFalse(rtt.hasSample());
        assertNull(rtt.snapshot());
        assertEquals(MAX, rtt.ackTimeoutNanos(MIN, MAX));
    }

    @Test
    void shouldClampTheTimeoutToItsBounds() {
        assertEquals(MIN, RttEstimator.timeoutNanos(MS, 0, MIN, MAX));
        assertEquals(MAX, RttEstimator.timeoutNanos(4_000 * MS, 500 * MS, MIN, MAX));
        assertEquals(Long.MAX_VALUE, RttEstimator.timeoutNanos(RttEstimator.MAX_SAMPLE_NANOS,
                RttEstimator.MAX_SAMPLE_NANOS, 0, Long.MAX_VALUE), "saturates instead of overflowing");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RttEstimator.timeoutNanos(MS, MS, MAX, MIN));
        assertTrue(e.getMessage().contains("min " + MAX + " ns"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RttEstimator.timeoutNanos(MS, MS, -1, MAX));
        assertThrows(IllegalArgumentException.class, () -> new RttEstimator().ackTimeoutNanos(MAX, MIN));
    }

    @Test
    void shouldCountSamplesBelowOneNanosecondAsOne() {
        RttEstimator rtt = new RttEstimator();
        rtt.addSample(0); // a virtual clock that did not move
        assertTrue(rtt.hasSample());
        assertEquals(1, rtt.smoothedNanos());
        assertEquals(0, rtt.variationNanos());
        rtt.addSample(-5);
        assertEquals(1, rtt.smoothedNanos(), "a sample never takes SRTT back to 'no sample'");
    }

    @Test
    void shouldNotOverflowOnHugeSamples() {
        RttEstimator rtt = new RttEstimator();
        rtt.addSample(Long.MAX_VALUE);
        assertEquals(RttEstimator.MAX_SAMPLE_NANOS, rtt.smoothedNanos());
        rtt.addSample(1);
        rtt.addSample(Long.MAX_VALUE);
        assertTrue(rtt.smoothedNanos() > 0 && rtt.variationNanos() > 0);
        long rto = rtt.ackTimeoutNanos(0, Long.MAX_VALUE);
        assertTrue(rto > 0, "no overflow: " + rto);
        assertEquals(rtt.smoothedNanos() + 4 * rtt.variationNanos(), rto);
    }

    @Test
    void shouldSnapshotAsDurations() {
        RttEstimator rtt = new RttEstimator();
        rtt.addSample(100 * MS);
        Rtt snapshot = rtt.snapshot();
        assertEquals(Duration.ofMillis(100), snapshot.smoothed());
        assertEquals(Duration.ofMillis(50), snapshot.variation());
        assertEquals(Duration.ofMillis(300), snapshot.timeout(Duration.ofMillis(10), Duration.ofSeconds(5)));
        assertEquals(Duration.ofMillis(200), snapshot.timeout(Duration.ofMillis(10), Duration.ofMillis(200)));
        assertThrows(IllegalArgumentException.class, () -> new Rtt(Duration.ofMillis(-1), Duration.ZERO));
    }
}
