/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.zip.DataFormatException;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

/**
 * The load test's HdrHistograms: microsecond values from 1 us to one hour at three significant
 * digits, their compressed base64 form (how child processes hand them to the coordinator, and how
 * {@code report.json} keeps them), merging, and percentile series for charts. Stateless; any thread.
 */
final class Histograms {

    /** One hour in microseconds: anything later is recorded as one hour. */
    static final long HIGHEST_MICROS = 3_600_000_000L;

    private Histograms() {
    }

    /** An empty histogram of microseconds. Not thread-safe: one per recording thread. */
    static Histogram newMicros() {
        return new Histogram(1, HIGHEST_MICROS, 3);
    }

    /** Records a duration in nanoseconds as microseconds, clamped to [0, one hour]. */
    static void recordNanos(Histogram h, long nanos) {
        long micros = nanos <= 0 ? 0 : Math.min(HIGHEST_MICROS, nanos / 1_000);
        h.recordValue(micros);
    }

    /** The compressed HdrHistogram encoding, in base64. */
    static String encode(Histogram h) {
        ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int size = h.encodeIntoCompressedByteBuffer(buf);
        byte[] bytes = new byte[size];
        buf.flip();
        buf.get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    /**
     * Decodes {@link #encode}'s form.
     *
     * @throws IllegalArgumentException if it is not one
     */
    static Histogram decode(String base64) {
        try {
            byte[] bytes = Base64.getDecoder().decode(base64);
            Histogram h = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(bytes), 1);
            Histogram out = newMicros();
            out.add(h);
            return out;
        } catch (DataFormatException | RuntimeException e) {
            throw new IllegalArgumentException("not an encoded histogram: " + JsonCodec.abbreviate(base64), e);
        }
    }

    /** The sum of the histograms: what one histogram would hold had it recorded every value. */
    static Histogram merge(List<Histogram> parts) {
        Histogram out = newMicros();
        for (Histogram h : parts) {
            out.add(h);
        }
        return out;
    }

    /** The value at a percentile, in milliseconds; NaN for an empty histogram. */
    static double percentileMillis(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e3;
    }

    /** The value at a percentile, in microseconds; NaN for an empty histogram. */
    static double percentileMicros(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile);
    }

    /** The largest value, in milliseconds (within the histogram's precision); NaN if empty. */
    static double maxMillis(Histogram h) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getMaxValue() / 1e3;
    }

    /**
     * The percentile distribution as HdrHistogram prints it, {@code [percentile, micros]} pairs, five
     * steps per halving of the distance to 100%, ending at the last value below 100% and then the
     * maximum at the percentile that one sample more would reach. Empty for an empty histogram.
     */
    static List<double[]> percentileSeries(Histogram h) {
        List<double[]> out = new ArrayList<>();
        long total = h.getTotalCount();
        if (total == 0) {
            return out;
        }
        double last = -1;
        for (HistogramIterationValue v : h.percentiles(5)) {
            double p = v.getPercentileLevelIteratedTo();
            if (p >= 100.0) {
                break;
            }
            if (p > last) {
                out.add(new double[] {p, h.highestEquivalentValue(v.getValueIteratedTo())});
                last = p;
            }
        }
        double end = 100.0 * (1 - 1.0 / (total + 1.0));
        out.add(new double[] {Math.max(end, last), h.getMaxValue()});
        return out;
    }
}
