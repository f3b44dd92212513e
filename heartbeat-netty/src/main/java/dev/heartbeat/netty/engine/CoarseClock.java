/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.util.Arrays;

import dev.heartbeat.core.Ticker;

/**
 * The coarse write clock ({@code HeartbeatMonitor.Builder#coarseWriteClock}): a time the worker publishes
 * for the event loops to stamp completed writes with, instead of reading the ticker once per write.
 *
 * <p><b>What a stamp means.</b> The worker publishes a <i>lease</i>: its cycle's time plus the resolution {@code R}, so
 * a time that has not come yet, and publishes the next one at the latest half a resolution before it runs out ({@link
 * #refreshIfDue}; an entry of the worker's own makes a cycle come by then). A write stamped with the lease therefore
 * completed no later than its stamp: the stamp is at most {@code R} later than the real completion, never earlier, and
 * a check judged on it comes at most {@code R} later than on a ticker reading, never sooner. A stamp is also one more
 * than the channel's previous write stamp if the lease is not beyond it ({@link #stamp}), so every completed write
 * changes the stamp, as a ticker reading does (the write stall's progress and {@code observeOutput} compare stamps for
 * equality).
 *
 * <p><b>A worker that publishes late.</b> If the worker did not publish before a lease ran out (a pause of the
 * process, a descheduled thread, a blocked host loop), writes that completed after it ran out got stamps earlier
 * than their completion. The worker sees this when it next publishes: the old lease {@code L} had run out, or was
 * about to ({@link #guard}), before the new one was visible, at {@code U} (a ticker reading after the publishing
 * store, plus the guard). Every stamp that can have been taken meanwhile lies in {@code [L, U)}: a lease stamp is
 * {@code L} itself, one more than the channel's previous stamp is above {@code L} and no later than the write it
 * stands for, which was before {@code U}. So such a stamp is judged as {@code U} ({@link #bound}), which is no
 * earlier than the write; every other stamp, of a lease published on time or at or above {@code U}, is already no
 * earlier than its write. Until the worker publishes again nothing records the interval, so a stamp of the current
 * lease is judged as the later of itself and a ticker reading ({@link #bound}): an event loop that checks a verdict
 * again while the worker is late (a hosted worker behind its host's backlog) so sees the writes it made meanwhile.
 * The intervals are kept in a small copy-on-write array: empty (one volatile read per
 * {@link #bound}) until the worker is first late; at most {@link #MAX_INTERVALS}, the two oldest merged into one
 * when it is full (a stamp between them is then judged later than needed, never sooner).
 *
 * <p>Threads: {@link #stamp} on event loops; {@link #refreshIfDue} on the worker's cycle only;
 * {@link #bound} on any thread. The worker stores the new lease, then the old one's late interval, then the
 * {@link #floor}; {@link #bound} reads the floor, then the intervals, so a stamp of the old lease is judged by a
 * ticker reading until its interval can be seen ({@code CoarseClockStress} in the jcstress suite). The stamps are
 * written and read as the handler's other stamps are (opaque).
 */
final class CoarseClock {

    /** The most late intervals kept before the two oldest are merged. */
    static final int MAX_INTERVALS = 32;
    private static final long[] NONE = {};

    private final Ticker ticker;
    /** The resolution: how far ahead of the worker's cycle time a lease runs. */
    final long resolutionNanos;
    /**
     * A lease that runs out less than this after the worker publishes the next counts as outlived: what a load
     * that read the old lease may trail the publishing store by (reordering, visibility), generously.
     */
    private final long guard;
    /** The lease: written by the worker ({@link #refreshIfDue}), read by the event loops (volatile). */
    private volatile long lease;
    /**
     * The lease whose stamps {@link #bound} judges by a ticker reading: the current one, or while the worker
     * publishes the next, the one before it until its late interval, if any, is recorded. Written by the worker
     * after {@link #late}, read by {@link #bound} before it (volatile): a thread that sees the new floor sees the
     * interval below it.
     */
    private volatile long floor;
    /** Worker only: the lease last published. */
    private long published;
    /**
     * The late intervals, pairs {@code [from, until)} in the order they were recorded: replaced, never changed, by
     * the worker; read by any thread (volatile).
     */
    private volatile long[] late = NONE;

    /**
     * A clock of {@code resolutionNanos} on {@code ticker}, its first lease from now: a worker that starts later than
     * that records the gap as its first late interval.
     */
    CoarseClock(Ticker ticker, long resolutionNanos) {
        this.ticker = ticker;
        this.resolutionNanos = resolutionNanos;
        this.guard = Math.max(1, resolutionNanos / 8);
        this.published = ticker.nanoTime() + resolutionNanos;
        this.lease = published;
        this.floor = published;
    }

    /**
     * Event loop: the stamp of a write that completed before now, on a channel whose latest write stamp is
     * {@code last}: the lease, or {@code last + 1} if the lease is not beyond it.
     */
    long stamp(long last) {
        long l = lease;
        return l - last > 0 ? l : last + 1;
    }

    /**
     * Event loop: the stamp of a write at the ticker reading {@code now}, on a channel whose latest stamp is
     * {@code last}: never back (a lease stamp may be beyond now) and moved by one at least, as {@link #stamp}.
     */
    static long at(long now, long last) {
        return now - last > 0 ? now : last + 1;
    }

    /** Worker (or its builder, before it starts): when the lease is due again, half a resolution before it runs out. */
    long nextDue() {
        return published - resolutionNanos / 2;
    }

    /**
     * Worker, before it judges anything at {@code now}: if the lease runs out within half a resolution
     * ({@link #nextDue}), publishes the lease {@code now} plus the resolution, and records the interval of stamps the
     * old one may have given too early, if it was outlived.
     *
     * @return whether it recorded such an interval: the old lease was outlived
     */
    boolean refreshIfDue(long now) {
        long old = published;
        long next = now + resolutionNanos;
        // Never back: a cycle's time can trail the latest one's by the ticker's granularity.
        if (nextDue() - now <= 0 && next - old > 0) {
            published = next;
            lease = next; // the floor stays at the old lease until its interval is known
            long visible = ticker.nanoTime(); // after the store: the old lease was read before this
            boolean outlived = visible + guard - old > 0;
            if (outlived) {
                record(old, visible + guard);
            }
            floor = next;
            return outlived;
        }
        return false;
    }

    /**
     * Any thread: the latest time the write that {@code stamp} stands for can have completed (see the class). A stamp
     * of the current lease (or above it; while the worker publishes, of the one before) is judged as the later of
     * itself and now, a ticker reading taken after the stamp was read (the write it stands for came before both): the
     * stamp while the lease runs, now once it has run out and the worker has not published since, which no late
     * interval records yet. That costs a ticker reading only for a stamp of the current lease: on the worker, which
     * publishes before it judges, for a channel that wrote since; on an event loop, where it checks a verdict again
     * before acting on it.
     */
    long bound(long stamp) {
        long current = floor; // before the intervals: they are recorded before the floor moves past them
        if (stamp - current >= 0) { // later than now unless the lease ran out: then now is
            long now = ticker.nanoTime();
            return now - stamp > 0 ? now : stamp;
        }
        long[] a = late;
        for (int i = 0; i < a.length; i += 2) {
            if (stamp - a[i] >= 0 && stamp - a[i + 1] < 0) {
                return a[i + 1];
            }
        }
        return stamp;
    }

    /** Worker: adds {@code [from, until)} (after every interval recorded before), merging the two oldest if full. */
    private void record(long from, long until) {
        long[] a = Arrays.copyOf(late, late.length + 2);
        a[a.length - 2] = from;
        a[a.length - 1] = until;
        if (a.length > 2 * MAX_INTERVALS) { // the two oldest become one: their stamps and those between, judged late
            long[] merged = new long[a.length - 2];
            merged[0] = a[0];
            merged[1] = a[3];
            System.arraycopy(a, 4, merged, 2, a.length - 4);
            a = merged;
        }
        late = a;
    }
}
