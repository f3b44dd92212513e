/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The ping counters of one probe name in one monitor (see {@link Probe#name()}): made once, when a
 * configuration with that probe is first bound, and reached from the {@code BoundConfig}, so that
 * counting a ping is one {@code LongAdder} increment with no lookup. Any thread.
 *
 * <p>A {@link SampleSink} gets each monitor's instances, reads them (the methods below sum the counters
 * as they are now, allocating nothing) and may use them as keys: an instance stands for its probe name in
 * its monitor for the monitor's life. Only the monitor counts.
 *
 * @since 0.2
 */
public final class PingCounters {

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
    /**
     * Pings whose probe threw or whose write failed (neither sent nor missed; a peer silent after
     * them is closed all the same).
     */
    final LongAdder failed = new LongAdder();
    /** Whether a failed ping of this probe was logged at WARN: once; the later ones go to DEBUG. */
    private final AtomicBoolean failureWarned = new AtomicBoolean();

    PingCounters(String probe) {
        this.probe = probe;
    }

    /** Any thread: true for the first failed ping only, the one to log at WARN. */
    boolean firstFailure() {
        return !failureWarned.get() && failureWarned.compareAndSet(false, true);
    }

    /** The probe name these count, as {@link Probe#name()}. */
    public String probe() {
        return probe;
    }

    /** Pings written successfully, so far. */
    public long sent() {
        return sent.sum();
    }

    /** Pings answered (by the ack mode's rule) before their timeout, so far. */
    public long acked() {
        return acked.sum();
    }

    /** Pings whose timeout passed without an answer, so far. */
    public long missed() {
        return missed.sum();
    }

    /** Pings whose probe threw or whose write failed, so far. */
    public long failed() {
        return failed.sum();
    }

    ProbeStats snapshot() {
        return new ProbeStats(probe, sent.sum(), acked.sum(), missed.sum(), failed.sum());
    }
}
