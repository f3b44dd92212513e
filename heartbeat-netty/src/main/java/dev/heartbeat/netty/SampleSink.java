/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.Objects;

/**
 * Takes the samples a counter cannot hold (distributions) from a {@link HeartbeatMonitor}, and hears of
 * each probe name's {@link PingCounters}: the hook for a metrics binder, such as
 * {@link dev.heartbeat.netty.micrometer.HeartbeatMetrics}, which adds one for each registry it binds to
 * ({@link #addTo}). Called on event loops (RTT) and on the thread that runs the worker's cycles
 * (lateness), so an implementation must be thread-safe, must not block, and should not allocate. With no
 * sink added, the monitor takes no sample. A sink cannot be removed: it lives as long as its monitor.
 *
 * @since 0.2
 */
public interface SampleSink {

    /**
     * Adds {@code sink} to {@code monitor}: it first hears of every probe name the monitor already counts
     * ({@link #probeAdded}), then of each new one and of every sample. Any thread.
     *
     * @throws NullPointerException if either is null
     */
    static void addTo(HeartbeatMonitor monitor, SampleSink sink) {
        Objects.requireNonNull(monitor, "monitor").engine.addSampleSink(sink);
    }

    /**
     * The monitor counts pings of a new probe name (a configuration with it was bound), or the sink
     * was just added and the monitor already counted {@code probe}. Called under the monitor's lock,
     * once per probe name and sink: rare.
     */
    void probeAdded(PingCounters probe);

    /** A matched answer to the latest ping of a channel came {@code nanos} after the ping was written. */
    void pingRtt(PingCounters probe, long nanos);

    /**
     * A worker cycle that had checks due ran {@code nanos} after the earliest of their (coalesced)
     * deadlines: how late the worker was, once per cycle with work.
     */
    void workerLateness(long nanos);
}
