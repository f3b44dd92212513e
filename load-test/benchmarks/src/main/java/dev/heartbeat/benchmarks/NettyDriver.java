/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;

import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * Netty's {@link HashedWheelTimer}: 1 ms ticks (its finest) and 65536 buckets, so the 1..60 s spread
 * is one turn of the wheel and a bucket holds a handful of timeouts (the default 512 buckets of
 * 100 ms would be far coarser than the other timers). Tasks run on its worker thread. There is no
 * move: a move is {@code cancel()} and a new {@code newTimeout}.
 */
final class NettyDriver extends ThreadedDriver {

    private static final int TICKS_PER_WHEEL = 65536;

    private HashedWheelTimer timer;
    private AtomicReferenceArray<Timeout> handles;
    /** One task per connection, reused for every timeout of that connection. */
    private Pending[] tasks;
    private volatile boolean stopping;
    private final TimerTask closedConnection = timeout -> { };
    private final TimerTask burstTask = timeout -> onBurstFired();

    /** A connection's idle task: re-arms itself when it fires. */
    private final class Pending implements TimerTask {
        private final int index;

        Pending(int index) {
            this.index = index;
        }

        @Override
        public void run(Timeout fired) {
            if (stopping) {
                return; // newTimeout would throw once the timer is stopped
            }
            Timeout next = timer.newTimeout(this,
                    idleNanos(ThreadLocalRandom.current()), TimeUnit.NANOSECONDS);
            if (!handles.compareAndSet(index, fired, next)) {
                next.cancel(); // the benchmark thread moved this connection meanwhile
            }
        }
    }

    private static long idleNanos(ThreadLocalRandom random) {
        return random.nextLong(MIN_IDLE_NANOS, MAX_IDLE_NANOS);
    }

    @Override
    void start(int pending, Workload workload, SplittableRandom random) {
        timer = new HashedWheelTimer(new DefaultThreadFactory("netty-hwt", true),
                1, TimeUnit.MILLISECONDS, TICKS_PER_WHEEL);
        timer.start();
        handles = new AtomicReferenceArray<>(pending);
        tasks = new Pending[pending];
        for (int i = 0; i < pending; i++) {
            tasks[i] = new Pending(i);
            handles.set(i, timer.newTimeout(tasks[i], idleNanos(random), TimeUnit.NANOSECONDS));
        }
    }

    @Override
    long move(int index) {
        Timeout old = handles.get(index);
        old.cancel();
        Timeout next = timer.newTimeout(tasks[index], MOVE_NANOS, TimeUnit.NANOSECONDS);
        Timeout replaced = handles.getAndSet(index, next);
        if (replaced != old) {
            replaced.cancel(); // old fired and re-armed itself meanwhile
        }
        return index;
    }

    @Override
    long scheduleCancel() {
        Timeout timeout = timer.newTimeout(closedConnection, MOVE_NANOS, TimeUnit.NANOSECONDS);
        return timeout.cancel() ? 1 : 0;
    }

    @Override
    long scheduleBurst(long deadline) {
        for (int i = 0; i < BURST; i++) {
            timer.newTimeout(burstTask, deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
        }
        return deadline;
    }

    @Override
    long pendingCount() {
        return timer.pendingTimeouts();
    }

    @Override
    void close() {
        stopping = true;
        timer.stop();
    }
}
