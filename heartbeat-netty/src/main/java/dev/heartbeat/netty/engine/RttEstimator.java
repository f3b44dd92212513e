/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.Rtt;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;

/**
 * One channel's round-trip time estimate, RFC 6298 style, in two longs of nanoseconds; adding a
 * sample allocates nothing. Meant to be embedded: a per-channel side object extends it, so that the
 * two longs sit in that object's own layout and the channel pays no second object and pointer
 * ({@link ProbeState} does; 16 bytes a channel less than holding one). The static functions below
 * serve a caller that keeps the two longs itself.
 *
 * <p>Threads: one writer, the channel's event loop ({@link #addSample}); any thread may read
 * ({@link #smoothedNanos}, {@link #variationNanos}, {@link #snapshot}). Both fields are stored and
 * loaded opaque: a reader on another thread sees recent values, each field the latest or an earlier
 * one, so a snapshot may pair the SRTT of one sample with the RTTVAR of the one before. That is fine
 * for monitoring; decisions are taken on the event loop, which sees its own writes.
 */
public class RttEstimator {

    /* Implementation notes.
     *
     * [1] RFC 6298, Computing TCP's Retransmission Timer, section 2: on the first sample R,
     *     SRTT <- R, RTTVAR <- R/2; on each later sample R',
     *     RTTVAR <- (1 - beta) * RTTVAR + beta * |SRTT - R'|, then SRTT <- (1 - alpha) * SRTT + alpha * R',
     *     with alpha = 1/8, beta = 1/4 (RTTVAR uses the SRTT from before this sample), and
     *     RTO <- SRTT + max(G, K * RTTVAR), K = 4.
     *
     * Differences, each deliberate: the clock granularity G is replaced by the caller's minimum (our
     * clock is nanoTime, G is a nanosecond); RFC 6298's 1 s floor and 60 s ceiling are the caller's
     * [min, max]; the timeout does not back off (Heartbeat counts missed pings instead). All samples
     * are answers matched to the ping they answer, so Karn's ambiguity does not arise.
     *
     * Integer arithmetic in nanoseconds: SRTT + (R - SRTT) / 8 and RTTVAR + (|SRTT - R| - RTTVAR) / 4
     * truncate toward zero: each step errs by under 1 ns, and on a steady round trip the estimate stops
     * once a step rounds to zero, SRTT within 7 ns of the true value and RTTVAR within 10 ns of 0.
     * Samples are clamped to [1 ns, 2^61 ns], so 0 can mean "no sample yet" and no sum overflows.
     */

    /** The longest sample: {@link HeartbeatConfig#MAX_TIMEOUT}, beyond any real round trip. */
    public static final long MAX_SAMPLE_NANOS = HeartbeatConfig.MAX_TIMEOUT.toNanos(); // 2^61 ns, 73 years

    private static final VarHandle SMOOTHED;
    private static final VarHandle VARIATION;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            SMOOTHED = lookup.findVarHandle(RttEstimator.class, "smoothed", long.class);
            VARIATION = lookup.findVarHandle(RttEstimator.class, "variation", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** SRTT in ns; 0 until the first sample. Written by the event loop (opaque), read by any thread (opaque). */
    @SuppressWarnings("unused") // accessed through SMOOTHED
    private long smoothed;
    /** RTTVAR in ns. Written by the event loop (opaque), read by any thread (opaque). */
    @SuppressWarnings("unused") // accessed through VARIATION
    private long variation;

    /**
     * Event loop: adds a round-trip sample ({@code answerRead - pingWritten} on one ticker). A sample
     * below 1 ns (a coarse or virtual clock that did not move) counts as 1 ns, one above 2^61 ns as
     * 2^61 ns.
     */
    public void addSample(long rttNanos) {
        long srtt = (long) SMOOTHED.getOpaque(this);
        long rttvar = (long) VARIATION.getOpaque(this);
        VARIATION.setOpaque(this, nextVariation(srtt, rttvar, rttNanos));
        SMOOTHED.setOpaque(this, nextSmoothed(srtt, rttNanos));
    }

    /** Whether a sample was added. */
    public boolean hasSample() {
        return (long) SMOOTHED.getOpaque(this) != 0;
    }

    /** SRTT in ns, or 0 before the first sample. */
    public long smoothedNanos() {
        return (long) SMOOTHED.getOpaque(this);
    }

    /** RTTVAR in ns (0 before the first sample). */
    public long variationNanos() {
        return (long) VARIATION.getOpaque(this);
    }

    /**
     * The adaptive answer timeout: {@code clamp(SRTT + 4 * RTTVAR, min, max)}, or {@code max} before
     * the first sample (never earlier than a fixed timeout of {@code max} would be).
     */
    public long ackTimeoutNanos(long minNanos, long maxNanos) {
        long srtt = (long) SMOOTHED.getOpaque(this);
        return srtt == 0 ? checkRange(minNanos, maxNanos) : timeoutNanos(srtt, variationNanos(), minNanos, maxNanos);
    }

    /** The estimate as a value, or null before the first sample. Allocates; for occasional reads. */
    public Rtt snapshot() {
        long srtt = (long) SMOOTHED.getOpaque(this);
        return srtt == 0 ? null : new Rtt(Duration.ofNanos(srtt), Duration.ofNanos(variationNanos()));
    }

    // ---- The estimator as pure functions, for a caller that keeps the two longs itself. Both take the
    // state from before the sample: compute the variation first, then the smoothed value (see [1]).

    /** The sample as used: clamped to [1 ns, {@link #MAX_SAMPLE_NANOS}]. */
    static long sample(long rttNanos) {
        return rttNanos < 1 ? 1 : Math.min(rttNanos, MAX_SAMPLE_NANOS);
    }

    /** RTTVAR after a sample, from SRTT and RTTVAR before it ({@code srtt == 0}: the first sample). */
    public static long nextVariation(long srtt, long rttvar, long rttNanos) {
        long r = sample(rttNanos);
        return srtt == 0 ? r / 2 : rttvar + (Math.abs(srtt - r) - rttvar) / 4;
    }

    /** SRTT after a sample, from SRTT before it ({@code srtt == 0}: the first sample). Never 0. */
    public static long nextSmoothed(long srtt, long rttNanos) {
        long r = sample(rttNanos);
        return srtt == 0 ? r : srtt + (r - srtt) / 8;
    }

    /**
     * {@code clamp(srtt + 4 * rttvar, min, max)}, saturating instead of overflowing.
     *
     * @throws IllegalArgumentException if {@code min} is negative or greater than {@code max}
     */
    public static long timeoutNanos(long srtt, long rttvar, long minNanos, long maxNanos) {
        checkRange(minNanos, maxNanos);
        long rto = rttvar > (Long.MAX_VALUE - srtt) >> 2 ? Long.MAX_VALUE : srtt + (rttvar << 2);
        return Math.min(Math.max(rto, minNanos), maxNanos);
    }

    private static long checkRange(long minNanos, long maxNanos) {
        if (minNanos < 0 || minNanos > maxNanos) {
            throw new IllegalArgumentException("the answer timeout's bounds must satisfy 0 <= min <= max: min "
                    + minNanos + " ns, max " + maxNanos + " ns");
        }
        return maxNanos;
    }

    @Override
    public String toString() {
        return "RttEstimator[srtt=" + smoothedNanos() + "ns, rttvar=" + variationNanos() + "ns]";
    }
}
