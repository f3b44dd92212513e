/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

import dev.heartbeat.demo.LoopLag;

/**
 * The servers' event-loop lag in the run window ({@code --loop-lag}, the demo server's {@link LoopLag}
 * histogram): each server's window is its histogram at the window's end less the one at its start
 * ({@link #window}), summed over the servers bucket by bucket; p50, p99 and p99.9 are read from the
 * buckets as Prometheus' {@code histogram_quantile} does (within a bucket, 19%). One thread.
 */
final class ServerLoopLag {

    private static final String BUCKET = LoopLag.NAME + "_bucket{le=\"";
    private static final String MAX = LoopLag.NAME + "_max";

    /** Bucket bound in seconds to the window's samples at or below it (cumulative), summed over servers. */
    private final NavigableMap<Double, Double> buckets = new TreeMap<>();
    /** The longest lag in the window in seconds, over the servers; NaN if none. */
    private double maxSeconds = Double.NaN;

    /**
     * One server's lag samples in the window, by the names of its /metrics: each bucket's count at
     * {@code end} less at {@code start}, and {@code _max} the window's longest lag. The server's gauge is
     * its longest since it started: if it grew in the window, it is the window's; if not, the window's
     * is at most it and at most the upper bound of the highest bucket that gained samples, the lower of
     * which is taken (within a bucket of the truth). No {@code _max} without samples in the window.
     *
     * @param start the server's samples at the window's start (missing buckets count as 0)
     * @param end the server's samples at its end; empty (or without the histogram) gives an empty window
     */
    static Map<String, Double> window(Map<String, Double> start, Map<String, Double> end) {
        Map<String, Double> out = new LinkedHashMap<>();
        double highest = Double.NaN; // the upper bound of the highest bucket that gained samples
        double belowBound = 0; // the window's cumulative count at the bucket before, in bound order
        NavigableMap<Double, Double> before = cumulative(start);
        for (Map.Entry<Double, Double> b : cumulative(end).entrySet()) {
            double bound = b.getKey();
            double delta = b.getValue() - before.getOrDefault(bound, 0.0);
            out.put(BUCKET + label(bound) + "\"}", delta);
            if (delta > belowBound) {
                highest = bound;
            }
            belowBound = delta;
        }
        if (Double.isNaN(highest)) {
            return out;
        }
        double endMax = end.getOrDefault(MAX, Double.NaN);
        double startMax = start.getOrDefault(MAX, 0.0);
        out.put(MAX, endMax > startMax ? endMax : Double.isNaN(endMax) ? highest : Math.min(endMax, highest));
        return out;
    }

    /** Adds one server's window ({@link #window}). */
    ServerLoopLag add(Map<String, Double> window) {
        cumulative(window).forEach((bound, n) -> buckets.merge(bound, n, Double::sum));
        Double max = window.get(MAX);
        if (max != null) {
            maxSeconds = Double.isNaN(maxSeconds) ? max : Math.max(maxSeconds, max);
        }
        return this;
    }

    /** Lag samples in the window, over the servers. */
    long count() {
        return buckets.isEmpty() ? 0 : (long) (double) buckets.lastEntry().getValue();
    }

    /** The {@code q} quantile (0 to 1) of the lag in microseconds; NaN without samples. */
    double quantileMicros(double q) {
        return ServerMetrics.quantile(buckets, q) * 1e6;
    }

    /** The longest lag in the window in microseconds (within a bucket, see {@link #window}); NaN without one. */
    double maxMicros() {
        return maxSeconds * 1e6;
    }

    /** The histogram's buckets in {@code samples}: bound in seconds (+Inf as infinity) to its cumulative count. */
    private static NavigableMap<Double, Double> cumulative(Map<String, Double> samples) {
        NavigableMap<Double, Double> out = new TreeMap<>();
        for (Map.Entry<String, Double> e : samples.entrySet()) {
            String key = e.getKey();
            if (key.startsWith(BUCKET)) {
                String le = key.substring(BUCKET.length(), key.indexOf('"', BUCKET.length()));
                out.put(le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), e.getValue());
            }
        }
        return out;
    }

    private static String label(double bound) {
        return Double.isInfinite(bound) ? "+Inf" : Double.toString(bound);
    }
}
