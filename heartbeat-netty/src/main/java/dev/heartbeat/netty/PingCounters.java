/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.concurrent.atomic.LongAdder;

/**
 * The ping counters of one probe name in one monitor (see {@link Probe#name()}): made once, when a
 * configuration with that probe is first bound, and reached from the {@link BoundConfig}, so that
 * counting a ping is one {@code LongAdder} increment with no lookup. Any thread.
 */
final class PingCounters {

    final String probe;
    /** Pings written successfully. */
    final LongAdder sent = new LongAdder();
    /**
     * Pings answered (by the ack mode's rule) before they were counted missed: at a matched answer,
     * or when the worker finds other traffic answered them.
     */
    final LongAdder acked = new LongAdder();
    /** Pings whose timeout passed without an answer. */
    final LongAdder missed = new LongAdder();
    /** Pings whose probe threw or whose write failed (neither sent nor missed). */
    final LongAdder failed = new LongAdder();

    PingCounters(String probe) {
        this.probe = probe;
    }

    ProbeStats snapshot() {
        return new ProbeStats(probe, sent.sum(), acked.sum(), missed.sum(), failed.sum());
    }
}
