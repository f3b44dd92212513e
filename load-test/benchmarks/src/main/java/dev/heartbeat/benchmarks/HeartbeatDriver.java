/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ExpiryHandler;
import dev.heartbeat.core.TimerEntry;
import dev.heartbeat.core.TimingWheel;

/**
 * heartbeat's {@link TimingWheel}, owned by the benchmark thread: every operation reads
 * {@code System.nanoTime()} once and, when the wheel has work due, advances it first, as the
 * wheel's owner thread would; a pending entry that fires is re-armed in the expiry handler.
 */
final class HeartbeatDriver extends TimerDriver {

    /** A connection's one timer entry. */
    static final class Conn extends TimerEntry {
        /** Index in the pending population; {@link #BURST_ENTRY} or {@link #SPARE_ENTRY} otherwise. */
        final int index;

        Conn(int index) {
            this.index = index;
        }
    }

    static final int BURST_ENTRY = -1;
    static final int SPARE_ENTRY = -2;
    /** How far ahead of the arming time the burst is due; scheduling 100k entries takes a few ms. */
    private static final long BURST_LEAD_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private TimingWheel<Conn> wheel;
    private long origin;
    private Conn[] conns;
    private Conn[] burst;
    /** The entry that scheduleCancel opens and closes: a new connection's entry, pre-allocated. */
    private final Conn spare = new Conn(SPARE_ENTRY);
    private SplittableRandom random;
    /** The time at which the wheel next has work (see {@link TimingWheel#nanosToNextWork()}). */
    private long nextWork;
    private int burstFired;
    private long burstDeadline;

    private final ExpiryHandler<Conn> handler = this::onExpired;

    private void onExpired(Conn conn, long now) {
        if (conn.index == BURST_ENTRY) {
            burstFired++;
        } else {
            wheel.schedule(conn, now + idleNanos(random));
        }
    }

    @Override
    void start(int pending, Workload workload, SplittableRandom random) {
        this.random = random.split();
        origin = System.nanoTime();
        wheel = new TimingWheel<>(TICK_NANOS, TimingWheel.DEFAULT_LEVELS, origin);
        conns = new Conn[pending];
        for (int i = 0; i < pending; i++) {
            conns[i] = new Conn(i);
            wheel.schedule(conns[i], origin + idleNanos(random));
        }
        if (workload == Workload.EXPIRE_BURST) {
            burst = new Conn[BURST];
            for (int i = 0; i < BURST; i++) {
                burst[i] = new Conn(BURST_ENTRY);
            }
        }
        nextWork = origin;
    }

    /** Advances the wheel to {@code now} if it has work due by then. */
    private void poll(long now) {
        if (now - nextWork >= 0) {
            wheel.advance(now, Integer.MAX_VALUE, handler);
            nextWork = now + Math.min(wheel.nanosToNextWork(), MAX_IDLE_NANOS);
        }
    }

    @Override
    long move(int index) {
        long now = System.nanoTime();
        poll(now);
        Conn conn = conns[index];
        long deadline = now + MOVE_NANOS;
        wheel.schedule(conn, deadline); // moves the linked entry: O(1), no allocation
        return deadline;
    }

    @Override
    long scheduleCancel() {
        long now = System.nanoTime();
        poll(now);
        wheel.schedule(spare, now + MOVE_NANOS);
        return wheel.cancel(spare) ? now : 0;
    }

    @Override
    void armBurst() {
        long now = System.nanoTime();
        poll(now);
        // Due on a tick boundary of the wheel, so that the wheel reaches it exactly at the due moment.
        long deadline = origin + ((now + BURST_LEAD_NANOS - origin + TICK_NANOS - 1) & -TICK_NANOS);
        burstFired = 0;
        for (Conn conn : burst) {
            wheel.schedule(conn, deadline);
        }
        // Run the owner's loop up to the due moment, so that the wheel is current when it arrives.
        while ((now = System.nanoTime()) - deadline < 0) {
            poll(now);
            Thread.onSpinWait();
        }
        poll(deadline - 1);
        if (burstFired != 0) {
            throw new IllegalStateException(burstFired + " burst entries fired before their deadline");
        }
        burstDeadline = deadline;
    }

    @Override
    long fireBurst() {
        long deadline = burstDeadline;
        int calls = 0;
        while (burstFired < BURST) {
            wheel.advance(deadline, Integer.MAX_VALUE, handler);
            calls++;
        }
        nextWork = deadline;
        return calls;
    }

    @Override
    long pendingCount() {
        return wheel.size();
    }

    @Override
    void close() {
        wheel.clear();
    }
}
