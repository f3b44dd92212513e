/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The worker's counters. Written by the duty-cycle thread only (a plain read and an opaque store, so
 * a reader never sees a torn value and the writer pays no fence); read by any thread with opaque
 * loads. Rejections come from requesting threads and use an atomic.
 */
final class WorkerCounters {

    private static final VarHandle COUNT = MethodHandles.arrayElementVarHandle(long[].class);

    private static final int CYCLES = 0;
    private static final int SCHEDULED = 1;
    private static final int CANCELLED = 2;
    private static final int EXPIRED = 3;
    private static final int REARMED = 4;
    private static final int REQUESTS = 5;
    private static final int FAILURES = 6;
    private static final int WORST_LATENESS = 7;
    private static final int WAKEUPS = 8;
    private static final int ENTRIES = 9;
    private static final int HOSTED_NANOS = 10;
    private static final int TAKEOVERS = 11;
    // Keep the counters, which the worker writes every cycle and other threads read, off the cache
    // lines of anything else: 16 longs = 128 bytes on each side, two 64-byte lines, because x86 CPUs
    // prefetch cache lines in adjacent pairs.
    private static final int PAD = 16;

    private final long[] counts = new long[PAD + TAKEOVERS + 1 + PAD];
    private final AtomicLong rejected = new AtomicLong();

    private void add(int counter, long delta) {
        int i = PAD + counter;
        COUNT.setOpaque(counts, i, counts[i] + delta);
    }

    private long get(int counter) {
        return (long) COUNT.getOpaque(counts, PAD + counter);
    }

    void cycle() {
        add(CYCLES, 1);
    }

    void scheduled() {
        add(SCHEDULED, 1);
    }

    void cancelled() {
        add(CANCELLED, 1);
    }

    void expired(long latenessNanos) {
        add(EXPIRED, 1);
        if (latenessNanos > counts[PAD + WORST_LATENESS]) {
            COUNT.setOpaque(counts, PAD + WORST_LATENESS, latenessNanos);
        }
    }

    void rearmed() {
        add(REARMED, 1);
    }

    void failure() {
        add(FAILURES, 1);
    }

    void wakeup() {
        add(WAKEUPS, 1);
    }

    void hosted(long nanos) {
        add(HOSTED_NANOS, nanos);
    }

    void takeover() {
        add(TAKEOVERS, 1);
    }

    void publish(int requestsApplied, int entries) {
        if (requestsApplied != 0) {
            add(REQUESTS, requestsApplied);
        }
        COUNT.setOpaque(counts, PAD + ENTRIES, (long) entries);
    }

    void rejected() {
        rejected.incrementAndGet();
    }

    TimerStats snapshot(int queueDepth) {
        return new TimerStats(get(ENTRIES), get(SCHEDULED), get(CANCELLED), get(EXPIRED), get(REARMED),
                get(REQUESTS), queueDepth, rejected.get(), get(FAILURES), get(WORST_LATENESS), get(WAKEUPS),
                get(CYCLES), get(HOSTED_NANOS), get(TAKEOVERS));
    }
}
