/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A Prometheus histogram of durations (cumulative buckets, sum, count, and the largest sample as
 * {@code <name>_max}), recorded in nanoseconds and exposed in seconds. Buckets are a quarter of a
 * power of two wide (each bound 2^(1/4) = 1.19 times the one before, from 1 µs to 2^24 µs = 16.8 s),
 * so histograms of several servers add up bucket by bucket and a quantile read from them is within
 * 19%. The families of {@link PingRtt} and {@link LoopLag}. Thread-safe: recorded on any thread,
 * rendered on any thread.
 */
public final class LogHistogram {

    private static final int STEPS_PER_OCTAVE = 4;
    private static final int OCTAVES = 24;
    /** Finite bucket bounds: 2^(k/4) µs for k = 0..96. */
    private static final int BOUNDS = OCTAVES * STEPS_PER_OCTAVE + 1;
    private static final double NANOS_PER_MICRO = 1e3;
    private static final double NANOS_PER_SECOND = 1e9;

    private final String name;
    private final String help;
    private final String maxHelp;
    /** Samples per bucket (not cumulative); the last one is +Inf. */
    private final AtomicLongArray counts = new AtomicLongArray(BOUNDS + 1);
    private final LongAdder sumNanos = new LongAdder();
    private final AtomicLong maxNanos = new AtomicLong();

    /**
     * @param name the family's name ({@code _bucket}, {@code _sum}, {@code _count} and {@code _max} follow it)
     * @param help the family's HELP text
     * @param maxHelp the HELP text of its {@code _max} gauge
     */
    public LogHistogram(String name, String help, String maxHelp) {
        this.name = name;
        this.help = help;
        this.maxHelp = maxHelp;
    }

    /** Adds one sample, in nanoseconds (below 0 counts as 0). */
    public void record(long nanos) {
        long n = Math.max(0, nanos);
        counts.incrementAndGet(bucket(n));
        sumNanos.add(n);
        maxNanos.accumulateAndGet(n, Math::max);
    }

    /** The index of the first bucket whose bound is at least {@code nanos}; the last one is +Inf. */
    static int bucket(long nanos) {
        double micros = nanos / NANOS_PER_MICRO;
        if (micros <= 1) {
            return 0;
        }
        int k = (int) Math.min(BOUNDS, Math.ceil(STEPS_PER_OCTAVE * Math.log(micros) / Math.log(2) - 1e-9));
        while (k > 0 && bound(k - 1) >= micros) { // guard the floating point at exact bounds
            k--;
        }
        while (k < BOUNDS && bound(k) < micros) {
            k++;
        }
        return k;
    }

    /** Bucket {@code k}'s upper bound in microseconds. */
    private static double bound(int k) {
        return Math.pow(2, (double) k / STEPS_PER_OCTAVE);
    }

    /** Samples recorded. */
    public long count() {
        long n = 0;
        for (int i = 0; i < counts.length(); i++) {
            n += counts.get(i);
        }
        return n;
    }

    /** The Prometheus text of the histogram (version 0.0.4), current as of now. */
    public String exposition() {
        StringBuilder out = new StringBuilder(8192);
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(" histogram\n");
        long cumulative = 0;
        for (int k = 0; k < BOUNDS; k++) {
            cumulative += counts.get(k);
            out.append(name).append("_bucket{le=\"")
                    .append(String.format(Locale.ROOT, "%.9g", bound(k) / 1e6)).append("\"} ")
                    .append(cumulative).append('\n');
        }
        cumulative += counts.get(BOUNDS);
        out.append(name).append("_bucket{le=\"+Inf\"} ").append(cumulative).append('\n');
        out.append(name).append("_sum ").append(sumNanos.sum() / NANOS_PER_SECOND).append('\n');
        out.append(name).append("_count ").append(cumulative).append('\n');
        out.append("# HELP ").append(name).append("_max ").append(maxHelp).append('\n');
        out.append("# TYPE ").append(name).append("_max gauge\n");
        out.append(name).append("_max ").append(maxNanos.get() / NANOS_PER_SECOND).append('\n');
        return out.toString();
    }
}
