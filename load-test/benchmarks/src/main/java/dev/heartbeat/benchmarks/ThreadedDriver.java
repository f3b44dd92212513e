/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A thread-safe timer with its own firing thread, called from the benchmark thread through its
 * public API.
 *
 * <p>Pending timers re-arm themselves on the firing thread while the benchmark thread moves them, so
 * each connection's current handle sits in an {@code AtomicReferenceArray}: a re-arm replaces the
 * handle that fired only if it is still current (CAS), and a move swaps in its new handle and cancels
 * whatever it replaced if that was not the handle it cancelled. That keeps exactly one live timer per
 * connection, and costs the benchmark thread one atomic swap per move: the least an application that
 * shares a handle between two threads pays.
 *
 * <p>The burst is counted on the one thread that runs the timer's tasks (each of these timers runs
 * them on a single thread), with a plain counter; the last one opens a latch.
 */
abstract class ThreadedDriver extends TimerDriver {

    private static final long MIN_LEAD_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long LEAD_MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MIN_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    /**
     * How far ahead of the arming time the burst is due: twice the time the previous burst took to
     * schedule, plus 50 ms, at least 100 ms; 1 s for the first. Scheduling 100k timers takes from
     * milliseconds to a few hundred (the JDK's heap of a million tasks on a busy machine).
     */
    private long leadNanos = TimeUnit.SECONDS.toNanos(1);

    /** Written only by the timer's firing thread while a burst is armed. */
    private int burstFired;
    private volatile CountDownLatch burstDone;

    /** Called by a burst timer's task. */
    final void onBurstFired() {
        if (++burstFired == BURST) {
            burstDone.countDown();
        }
    }

    @Override
    final void armBurst() throws Exception {
        long deadline;
        while (true) {
            burstFired = 0;
            burstDone = new CountDownLatch(1);
            long start = System.nanoTime();
            deadline = scheduleBurst(start + leadNanos);
            long took = System.nanoTime() - start;
            leadNanos = Math.max(MIN_LEAD_NANOS, 2 * took + LEAD_MARGIN_NANOS);
            if (deadline - System.nanoTime() >= MIN_SLACK_NANOS) {
                break;
            }
            // Scheduling outlasted the lead, so some may have fired already: let this burst fire
            // unmeasured and arm another with the longer lead.
            fireBurst();
        }
        waitUntil(deadline);
    }

    /**
     * Schedules {@link #BURST} timers whose task calls {@link #onBurstFired()}, due at about
     * {@code deadline} ({@code System.nanoTime()} base).
     *
     * @return the exact due moment used, {@code deadline} rounded to the timer's clock if needed
     */
    abstract long scheduleBurst(long deadline);

    @Override
    final long fireBurst() throws InterruptedException {
        if (!burstDone.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the burst did not fire within 60 s");
        }
        return BURST;
    }
}
