/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

/**
 * Where the worker places checks in time: timer slack on the grid of a configuration's coalescing window,
 * shifted by a phase of the monitor's own, and made finer where a point fills up.
 *
 * <p>Coalescing rounds a check's deadline up to the next point of its window's grid, so that the checks of
 * many channels share one wake-up. Where checks are dense a point gathers so many that they are handed out in
 * one burst, which the event loops and the peers then take at once (a million connections pinged every 90 s:
 * about 470 pings at each point of 16.8 ms), while the wake-ups the grid saves would have come anyway. So a
 * check goes to the coarsest grid (the window, half of it, and so on down to a tick) whose point holds fewer
 * than {@link #BURST} checks placed there so far (a test may set fewer). A finer grid is used only where a
 * coarser point is full, so wake-ups still follow work; and a finer point comes earlier, never before the
 * deadline: a check is as late as before or less.
 *
 * <p>The counts live in a table of {@link #SLOTS} ticks, each tagged with its point: two points a table's span
 * apart share a slot, and the later one counts afresh (a burst may then exceed {@link #BURST}); a check moved
 * or cancelled stays counted (a later one may go to a finer point than it needed). Neither moves a check
 * beyond its window. Worker only; 48 KiB a monitor, nothing allocated after construction.
 */
public final class CheckGrid {

    /**
     * The most checks a point takes before later ones go to a finer grid (chosen when a hosted run read its clock
     * once per 64 pieces of work, as half of that; it reads it once per 16 now). At a million connections (the load
     * test's 1M local run) the ping wave's echo p99 was a little lower with 32 than with 64 (medians of 1.99 and
     * 2.15 ms, four runs and three), for about 30 more cycles a second; the ratio to {@code IdleStateHandler}'s is
     * within the runs' spread either way ({@code load-test/docs/results.md}).
     */
    public static final int BURST = 32;
    /**
     * Ticks the table spans: 4.4 s of the default tick. Checks placed for one point are placed at about the same
     * time (a wave of connections, the re-arms of a cycle), so points further apart may share a slot.
     */
    static final int SLOTS = 4096;

    /** Where this monitor's grids start: each window's points are this plus its multiples. */
    private final long phase;
    /** The finest grid a full point makes a check go to: the wheel's tick. */
    private final long finest;
    private final int tickShift;
    /** The most checks a point takes: {@link #BURST}, or a test's (the interaction model's few channels fill none). */
    private final int burst;
    private final long[] points = new long[SLOTS];
    private final int[] counts = new int[SLOTS];

    /**
     * @param phase where the grids start (see {@code HeartbeatMonitor.Builder#gridPhase})
     * @param tickNanos the wheel's tick, a power of two
     * @param burst the most checks a point takes, at least 1
     */
    CheckGrid(long phase, long tickNanos, int burst) {
        this.phase = phase;
        this.burst = burst;
        this.finest = tickNanos;
        this.tickShift = Long.numberOfTrailingZeros(tickNanos);
    }

    long phase() {
        return phase;
    }

    /**
     * The first point of the grid of {@code window} (a power of two, at least 2) at or after {@code time}: never
     * before it, less than a window after it (by subtraction: nanoTime's wrap is fine). Counts nothing.
     */
    long onGrid(long time, long window) {
        return ((time - phase + window - 1) & -window) + phase;
    }

    /**
     * Worker: the time a check due at {@code deadline} is placed at, on the grid of {@code window} (a power of
     * two, at least 2) or a finer one where that grid's point is full (see the class comment); counts it there.
     */
    long place(long deadline, long window) {
        long point = onGrid(deadline, window);
        while (window > finest && isFull(point)) {
            window >>>= 1;
            point = onGrid(deadline, window);
        }
        int i = slot(point);
        if (points[i] != point) {
            points[i] = point;
            counts[i] = 1;
        } else if (counts[i] < Integer.MAX_VALUE) {
            counts[i]++;
        }
        return point;
    }

    private boolean isFull(long point) {
        int i = slot(point);
        return points[i] == point && counts[i] >= burst;
    }

    private int slot(long point) {
        return (int) (point >>> tickShift) & (SLOTS - 1);
    }
}
