/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The JDK's {@link ScheduledThreadPoolExecutor}: one pool thread (one firing thread, like the other
 * timers), a binary heap of tasks, {@code setRemoveOnCancelPolicy(true)} so that a cancel removes the
 * task from the heap at once (O(log n)) instead of leaving it there until its deadline. A move is
 * {@code cancel(false)} and a new {@code schedule}.
 *
 * <p>A task is not handed its own future, so each schedule of a connection's timer wraps it in a
 * small {@link Pending} that records the future: one extra 24-byte object per schedule, as the
 * capturing lambda of a typical application would be.
 */
final class JdkDriver extends ThreadedDriver {

    private ScheduledThreadPoolExecutor executor;
    private AtomicReferenceArray<Pending> handles;
    private final Runnable burstTask = this::onBurstFired;

    /** One scheduling of a connection's idle timer; re-arms the connection when it fires. */
    private final class Pending implements Runnable {
        private final int index;
        /** Set right after scheduling, before the handle is published; read after it is. */
        ScheduledFuture<?> future;

        Pending(int index) {
            this.index = index;
        }

        @Override
        public void run() {
            Pending next = schedule(index, ThreadLocalRandom.current().nextLong(MIN_IDLE_NANOS, MAX_IDLE_NANOS));
            if (!handles.compareAndSet(index, this, next)) {
                next.future.cancel(false); // the benchmark thread moved this connection meanwhile
            }
        }
    }

    private Pending schedule(int index, long delayNanos) {
        Pending pending = new Pending(index);
        pending.future = executor.schedule(pending, delayNanos, TimeUnit.NANOSECONDS);
        return pending;
    }

    @Override
    void start(int pending, Workload workload, SplittableRandom random) {
        executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "jdk-stpe");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        executor.prestartAllCoreThreads();
        handles = new AtomicReferenceArray<>(pending);
        for (int i = 0; i < pending; i++) {
            handles.set(i, schedule(i, idleNanos(random)));
        }
    }

    @Override
    long move(int index) {
        Pending old = handles.get(index);
        old.future.cancel(false);
        Pending next = schedule(index, MOVE_NANOS);
        Pending replaced = handles.getAndSet(index, next);
        if (replaced != old) {
            replaced.future.cancel(false); // old fired and re-armed itself meanwhile
        }
        return index;
    }

    @Override
    long scheduleCancel() {
        ScheduledFuture<?> future = executor.schedule(JdkDriver::closedConnection, MOVE_NANOS, TimeUnit.NANOSECONDS);
        return future.cancel(false) ? 1 : 0;
    }

    /** The task of a scheduleCancel timer: cancelled before it is due, so it never runs. */
    private static void closedConnection() {
    }

    @Override
    long scheduleBurst(long deadline) {
        for (int i = 0; i < BURST; i++) {
            executor.schedule(burstTask, deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        }
        return deadline;
    }

    @Override
    long pendingCount() {
        return executor.getQueue().size();
    }

    @Override
    void close() throws InterruptedException {
        executor.shutdownNow();
        executor.awaitTermination(10, TimeUnit.SECONDS);
    }
}
