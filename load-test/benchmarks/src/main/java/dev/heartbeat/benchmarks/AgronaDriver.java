/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.agrona.DeadlineTimerWheel;
import org.agrona.collections.Long2LongHashMap;

/**
 * Agrona's {@link DeadlineTimerWheel}, owned by the benchmark thread, driven like
 * {@link HeartbeatDriver}: one {@code System.nanoTime()} per operation, the wheel polled up to it
 * when a tick has ended, fired pending timers re-armed in the handler.
 *
 * <p>A timer here is only a deadline and an opaque id, so finding the connection that expired takes
 * a map from timer id to connection, as in any real use (Aeron keeps such maps too): Agrona's own
 * allocation-free {@link Long2LongHashMap}, sized up front, updated on every schedule and cancel.
 *
 * <p>Ticks per wheel. Every tick of the wheel has the same capacity, grown (doubled, the whole wheel
 * copied) whenever one tick needs more, and a tick is searched linearly for a free slot; so the wheel
 * is sized per benchmark, each time the best of what its load allows:
 * <ul>
 * <li>scheduleCancel: 65536 ticks of 2^20 ns (68.7 s), so the whole 1..60 s spread is one turn of
 *     the wheel with a handful of timers per tick;</li>
 * <li>move: 4096 ticks. A tight loop of moves sends thousands of timers per millisecond to the same
 *     tick 30 s ahead; with 65536 ticks the shared capacity then grows past the heap (2^16 ticks times
 *     8192 slots is 4 GiB) and the run dies copying it. 4096 ticks keep it within 256 MiB even then,
 *     and the 1..60 s spread still wraps the wheel only every 4.3 s;</li>
 * <li>expireBurst: 256 ticks, because the burst's 100k timers in one tick grow every tick to 131072
 *     slots: 2^25 slots (256 MiB); 65536 ticks would pass the wheel's own limit of 2^30 slots.</li>
 * </ul>
 */
final class AgronaDriver extends TimerDriver {

    private static final int TICKS_PER_WHEEL_SCHEDULE_CANCEL = 65536;
    private static final int TICKS_PER_WHEEL_MOVE = 4096;
    private static final int TICKS_PER_WHEEL_EXPIRE_BURST = 256;
    private static final long MISSING = -1;
    private static final long BURST_TIMER = -2;
    private static final long SPARE_TIMER = -3;
    /**
     * How far ahead of the arming time the burst is due. Agrona scans a tick for a free slot, so 100k
     * timers in one tick take seconds to schedule; the wheel is not polled meanwhile (see armBurst).
     */
    private static final long BURST_LEAD_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private DeadlineTimerWheel wheel;
    /** Timer id to connection index, or {@link #BURST_TIMER}, {@link #SPARE_TIMER}. */
    private Long2LongHashMap connByTimer;
    /** Connection index to its current timer id. */
    private long[] timerByConn;
    private SplittableRandom random;
    private int burstFired;
    private long burstDeadline;

    private final DeadlineTimerWheel.TimerHandler handler = this::onTimerExpiry;

    private boolean onTimerExpiry(TimeUnit timeUnit, long now, long timerId) {
        long conn = connByTimer.remove(timerId);
        if (conn == BURST_TIMER) {
            burstFired++;
        } else if (conn >= 0) {
            long id = wheel.scheduleTimer(now + idleNanos(random));
            connByTimer.put(id, conn);
            timerByConn[(int) conn] = id;
        }
        return true;
    }

    @Override
    void start(int pending, Workload workload, SplittableRandom random) {
        this.random = random.split();
        long start = System.nanoTime();
        int ticksPerWheel;
        switch (workload) {
            case MOVE:
                ticksPerWheel = TICKS_PER_WHEEL_MOVE;
                break;
            case EXPIRE_BURST:
                ticksPerWheel = TICKS_PER_WHEEL_EXPIRE_BURST;
                break;
            default:
                ticksPerWheel = TICKS_PER_WHEEL_SCHEDULE_CANCEL;
                break;
        }
        wheel = new DeadlineTimerWheel(TimeUnit.NANOSECONDS, start, TICK_NANOS, ticksPerWheel);
        int timers = pending + (workload == Workload.EXPIRE_BURST ? BURST : 0) + 1;
        connByTimer = new Long2LongHashMap(timers * 2, 0.6f, MISSING);
        timerByConn = new long[pending];
        for (int i = 0; i < pending; i++) {
            long id = wheel.scheduleTimer(start + idleNanos(random));
            connByTimer.put(id, i);
            timerByConn[i] = id;
        }
    }

    /** Polls the wheel tick by tick up to {@code now}, as its owner's duty cycle does. */
    private void poll(long now) {
        while (now >= wheel.currentTickTime()) {
            wheel.poll(now, handler, Integer.MAX_VALUE);
        }
    }

    @Override
    long move(int index) {
        long now = System.nanoTime();
        poll(now);
        long old = timerByConn[index];
        wheel.cancelTimer(old);
        connByTimer.remove(old);
        long id = wheel.scheduleTimer(now + MOVE_NANOS);
        connByTimer.put(id, index);
        timerByConn[index] = id;
        return id;
    }

    @Override
    long scheduleCancel() {
        long now = System.nanoTime();
        poll(now);
        long id = wheel.scheduleTimer(now + MOVE_NANOS);
        connByTimer.put(id, SPARE_TIMER);
        boolean cancelled = wheel.cancelTimer(id);
        connByTimer.remove(id);
        return cancelled ? id : 0;
    }

    @Override
    void armBurst() {
        long now = System.nanoTime();
        poll(now);
        long start = wheel.startTime();
        long deadline = start + ((now + BURST_LEAD_NANOS - start + TICK_NANOS - 1) & -TICK_NANOS);
        burstFired = 0;
        for (int i = 0; i < BURST; i++) {
            connByTimer.put(wheel.scheduleTimer(deadline), BURST_TIMER);
        }
        // The wheel was not polled while scheduling (which may outlast the lead), so every burst timer
        // is in the burst's tick. Poll up to just before the due moment, then wait for it.
        while (true) {
            now = System.nanoTime();
            poll(Math.min(now, deadline - 1));
            if (now - deadline >= 0) {
                break;
            }
            Thread.onSpinWait();
        }
        if (burstFired != 0) {
            throw new IllegalStateException(burstFired + " burst timers fired before their deadline");
        }
        burstDeadline = deadline;
    }

    @Override
    long fireBurst() {
        long deadline = burstDeadline;
        int calls = 0;
        while (burstFired < BURST) {
            wheel.poll(deadline, handler, Integer.MAX_VALUE);
            calls++;
        }
        return calls;
    }

    @Override
    long pendingCount() {
        return wheel.timerCount();
    }

    @Override
    void close() {
        wheel.clear();
        connByTimer.clear();
    }
}
