/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

/**
 * The round-trip times of the server's pings, from the ping's write to its answer's read, as a
 * {@link LogHistogram} ({@code demo_ping_rtt_seconds}: cumulative buckets a quarter of a power of two
 * wide, sum, count, and the largest sample as {@code demo_ping_rtt_seconds_max}).
 *
 * <p>With Heartbeat the samples are the matched answers' round trips (see {@link RttSampler}); with
 * {@code --idle-impl netty}, the time to the first read after a ping, which is what that impl takes
 * as the answer. The lead's {@code heartbeat.ping.rtt} timer in {@code HeartbeatMetrics} is to
 * replace this. Thread-safe: recorded on any event loop, rendered on any thread.
 */
public final class PingRtt {

    /** The histogram's name in /metrics. */
    public static final String NAME = "demo_ping_rtt_seconds";

    private final LogHistogram histogram = new LogHistogram(NAME, "Round-trip times of the server's pings: from a "
            + "ping's write to its answer's read (Heartbeat: the matched answer; the netty impl: the first read after "
            + "it).", "The longest round trip of the server's pings.");

    /** Adds one round trip, in nanoseconds (below 0 counts as 0). */
    public void record(long nanos) {
        histogram.record(nanos);
    }

    /** The index of the first bucket whose bound is at least {@code nanos}; the last one is +Inf. */
    static int bucket(long nanos) {
        return LogHistogram.bucket(nanos);
    }

    /** Samples recorded. */
    public long count() {
        return histogram.count();
    }

    /** The Prometheus text of the histogram (version 0.0.4), current as of now. */
    public String exposition() {
        return histogram.exposition();
    }
}
