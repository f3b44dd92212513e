/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.timer.SystemTimer;
import org.apache.kafka.server.util.timer.SystemTimerReaper;
import org.apache.kafka.server.util.timer.TimerTask;

/**
 * Kafka's {@link SystemTimer} (hierarchical wheels of 20 buckets of 1 ms, buckets in a
 * {@code DelayQueue}) as the broker runs it: wrapped in a {@link SystemTimerReaper}, whose reaper
 * thread calls {@code advanceClock(200)} in a loop and hands each expired task to the timer's
 * single executor thread. Times are in milliseconds of {@code Time.SYSTEM.hiResClockMs()}
 * ({@code System.nanoTime()} / 10^6).
 *
 * <p>A {@link TimerTask} carries its delay and is bound to one timer entry, so it is used once: a move
 * is {@code cancel()} and {@code add} of a new task.
 */
final class KafkaDriver extends ThreadedDriver {

    private SystemTimerReaper timer;
    private AtomicReferenceArray<Pending> handles;

    /** One arming of a connection's idle timer; re-arms the connection when it fires. */
    private final class Pending extends TimerTask {
        private final int index;

        Pending(int index, long delayMs) {
            super(delayMs);
            this.index = index;
        }

        @Override
        public void run() {
            Pending next = new Pending(index, ThreadLocalRandom.current().nextLong(
                    TimeUnit.NANOSECONDS.toMillis(MIN_IDLE_NANOS), TimeUnit.NANOSECONDS.toMillis(MAX_IDLE_NANOS)));
            timer.add(next);
            if (!handles.compareAndSet(index, this, next)) {
                next.cancel(); // the benchmark thread moved this connection meanwhile
            }
        }
    }

    private static final class ClosedConnection extends TimerTask {
        ClosedConnection(long delayMs) {
            super(delayMs);
        }

        @Override
        public void run() {
        }
    }

    private final class BurstTask extends TimerTask {
        BurstTask(long delayMs) {
            super(delayMs);
        }

        @Override
        public void run() {
            onBurstFired();
        }
    }

    @Override
    void start(int pending, Workload workload, SplittableRandom random) {
        timer = new SystemTimerReaper("kafka-reaper", new SystemTimer("kafka-timer"));
        handles = new AtomicReferenceArray<>(pending);
        for (int i = 0; i < pending; i++) {
            Pending task = new Pending(i, TimeUnit.NANOSECONDS.toMillis(idleNanos(random)));
            timer.add(task);
            handles.set(i, task);
        }
    }

    @Override
    long move(int index) {
        Pending old = handles.get(index);
        old.cancel();
        Pending next = new Pending(index, MOVE_MILLIS);
        timer.add(next);
        Pending replaced = handles.getAndSet(index, next);
        if (replaced != old) {
            replaced.cancel(); // old fired and re-armed itself meanwhile
        }
        return index;
    }

    @Override
    long scheduleCancel() {
        ClosedConnection task = new ClosedConnection(MOVE_MILLIS);
        timer.add(task);
        task.cancel();
        return task.isCancelled() ? 1 : 0;
    }

    @Override
    long scheduleBurst(long deadline) {
        // The timer's clock is in whole milliseconds: due at the first millisecond at or after deadline.
        long dueMs = TimeUnit.NANOSECONDS.toMillis(deadline) + 1;
        for (int i = 0; i < BURST; i++) {
            timer.add(new BurstTask(dueMs - Time.SYSTEM.hiResClockMs()));
        }
        return TimeUnit.MILLISECONDS.toNanos(dueMs);
    }

    @Override
    long pendingCount() {
        return timer.size();
    }

    @Override
    void close() throws Exception {
        timer.close();
    }
}
