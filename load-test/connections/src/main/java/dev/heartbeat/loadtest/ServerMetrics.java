/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

import dev.heartbeat.demo.EchoPipeline;
import dev.heartbeat.demo.PingRtt;
import dev.heartbeat.netty.CloseReason;

/**
 * What the load test reads of the servers' close reasons and ping round trips, summed over the
 * servers of a run: the closes per reason ({@code demo_connections_closed_total{reason="..."}}),
 * Heartbeat's actions deferred for the action budget and the longest deferral, and the RTT histogram
 * ({@link PingRtt}: cumulative buckets, whose quantiles this reads as Prometheus'
 * {@code histogram_quantile} does, and the largest sample). TCP runs parse each server's
 * {@code /metrics}; local runs the same samples of the pipeline in their JVM ({@link #of}). One
 * thread.
 */
final class ServerMetrics {

    /** The demo server's closes per reason, one sample per reason label. */
    static final String CLOSED = "demo_connections_closed_total";
    private static final String RTT_BUCKET = PingRtt.NAME + "_bucket{le=\"";
    private static final String RTT_MAX = PingRtt.NAME + "_max";
    /** Heartbeat's actions that waited for the action budget, and the longest wait (a gauge, seconds). */
    static final String DEFERRED = "heartbeat_actions_deferred_total";
    static final String WORST_DEFERRAL = "heartbeat_actions_deferral_worst_seconds";
    /** The most actions one server's budget handed over in a whole second of its clock (a gauge). */
    static final String BUSIEST_SECOND = "heartbeat_actions_busiest_second";

    /** Closes per reason, of the reasons the servers report (none: not measured). */
    final Map<CloseReason, Long> closes = new EnumMap<>(CloseReason.class);
    /** RTT histogram: bucket bound in seconds to the samples at or below it (cumulative), summed. */
    final NavigableMap<Double, Double> rttBuckets = new TreeMap<>();
    /** The longest RTT sample in seconds, over the servers; NaN if not reported. */
    double rttMaxSeconds = Double.NaN;
    /** Actions the servers deferred for their action budget, summed; -1 if not reported (no Heartbeat). */
    long deferredActions = -1;
    /** The longest an action waited for the budget, in seconds, over the servers; NaN if not reported. */
    double worstDeferralSeconds = Double.NaN;
    /** The most actions any one server's budget handed over in a whole second, over the servers; -1 if not reported. */
    long busiestBudgetSecond = -1;

    /**
     * The samples of an in-process server's pipeline that a TCP server's {@code /metrics} has: its
     * closes per reason and its RTT histogram.
     */
    static Map<String, Double> of(EchoPipeline echo) {
        Map<String, Double> m = ServerProbe.parseMetrics(echo.pingRtt().exposition());
        for (CloseReason r : CloseReason.values()) {
            double closes = echo.closedFor(r); // a count far below 2^53: exact
            m.put(CLOSED + "{reason=\"" + r.name().toLowerCase(Locale.ROOT) + "\"}", closes);
        }
        if (echo.monitor() != null) {
            m.put(DEFERRED, (double) echo.monitor().deferredActions());
            m.put(WORST_DEFERRAL, echo.monitor().worstDeferral().toNanos() / 1e9);
            m.put(BUSIEST_SECOND, (double) echo.monitor().busiestBudgetSecond());
        }
        return m;
    }

    /** Adds one server's metrics ({@link ServerProbe#parseMetrics}). */
    ServerMetrics add(Map<String, Double> metrics) {
        for (Map.Entry<String, Double> e : metrics.entrySet()) {
            String key = e.getKey();
            double v = e.getValue();
            if (key.startsWith(CLOSED + "{")) {
                CloseReason r = reasonOf(key);
                if (r != null) {
                    closes.merge(r, (long) v, Long::sum);
                }
            } else if (key.startsWith(RTT_BUCKET)) {
                String le = key.substring(RTT_BUCKET.length(), key.indexOf('"', RTT_BUCKET.length()));
                rttBuckets.merge(le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le), v,
                        Double::sum);
            } else if (key.equals(RTT_MAX) && v > 0) {
                rttMaxSeconds = Double.isNaN(rttMaxSeconds) ? v : Math.max(rttMaxSeconds, v);
            } else if (key.equals(DEFERRED) || key.startsWith(DEFERRED + "{")) {
                deferredActions = Math.max(0, deferredActions) + (long) v;
            } else if (key.equals(BUSIEST_SECOND) || key.startsWith(BUSIEST_SECOND + "{")) {
                busiestBudgetSecond = Math.max(busiestBudgetSecond, (long) v);
            } else if (key.equals(WORST_DEFERRAL) || key.startsWith(WORST_DEFERRAL + "{")) {
                worstDeferralSeconds = Double.isNaN(worstDeferralSeconds) ? v : Math.max(worstDeferralSeconds, v);
            }
        }
        return this;
    }

    /** The reason label of a {@link #CLOSED} sample as a {@link CloseReason}, or null if it is another (max_line). */
    private static CloseReason reasonOf(String key) {
        int i = key.indexOf("reason=\"");
        if (i < 0) {
            return null;
        }
        String label = key.substring(i + 8, key.indexOf('"', i + 8)).toUpperCase(Locale.ROOT);
        for (CloseReason r : CloseReason.values()) {
            if (r.name().equals(label)) {
                return r;
            }
        }
        return null;
    }

    /** Whether the servers reported their closes per reason. */
    boolean hasCloses() {
        return !closes.isEmpty();
    }

    /** Closes the servers counted for {@code reason}; 0 for a reason they do not report. */
    long closes(CloseReason reason) {
        return closes.getOrDefault(reason, 0L);
    }

    /** Closes the servers counted, over every reason they report. */
    long closesTotal() {
        long n = 0;
        for (long c : closes.values()) {
            n += c;
        }
        return n;
    }

    /** RTT samples. */
    long rttCount() {
        return rttBuckets.isEmpty() ? 0 : (long) (double) rttBuckets.lastEntry().getValue();
    }

    /**
     * The {@code q} quantile (0 to 1) of the RTT in milliseconds, interpolated linearly within its
     * bucket as Prometheus does (the first bucket from 0); NaN without samples. A quantile in the
     * {@code +Inf} bucket is the largest finite bound.
     */
    double rttQuantileMillis(double q) {
        return quantile(rttBuckets, q) * 1e3;
    }

    /**
     * The {@code q} quantile (0 to 1) of a Prometheus histogram (bucket bound to the samples at or below
     * it), interpolated linearly within its bucket as Prometheus does (the first bucket from 0), in the
     * bounds' unit; NaN without samples. A quantile in the {@code +Inf} bucket is the largest finite bound.
     */
    static double quantile(NavigableMap<Double, Double> cumulative, double q) {
        long total = cumulative.isEmpty() ? 0 : (long) (double) cumulative.lastEntry().getValue();
        if (total == 0) {
            return Double.NaN;
        }
        double rank = q * total;
        double lower = 0;
        double below = 0;
        for (Map.Entry<Double, Double> b : cumulative.entrySet()) {
            if (b.getValue() >= rank) {
                if (Double.isInfinite(b.getKey())) {
                    return lower;
                }
                double inBucket = b.getValue() - below;
                double fraction = inBucket <= 0 ? 1 : (rank - below) / inBucket;
                return lower + (b.getKey() - lower) * fraction;
            }
            lower = b.getKey();
            below = b.getValue();
        }
        return lower;
    }

    /** The longest RTT in milliseconds, or NaN. */
    double rttMaxMillis() {
        return rttMaxSeconds * 1e3;
    }
}
