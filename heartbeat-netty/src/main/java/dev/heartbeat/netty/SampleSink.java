/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

/**
 * Takes the samples a counter cannot hold (distributions) from a {@link HeartbeatMonitor}: added by
 * {@link HeartbeatMetrics} for each registry it binds to. Called on event loops (RTT) and on the
 * thread that runs the worker's cycles (lateness), so an implementation must be thread-safe, must not
 * block, and should not allocate. With no sink added, the monitor takes no sample.
 */
interface SampleSink {

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
