/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;

/**
 * The event loops' lag ({@code --loop-lag}): one probe task per loop, due every period, records how
 * late it ran into a {@link LogHistogram} ({@code demo_event_loop_lag_seconds}). A probe due at T that
 * runs at T + x records x: the time a task that became due waited for the loop, that is, for the rest
 * of the I/O or task batch the loop was in, plus its wake-up from a sleep (epoll's timer is
 * sub-millisecond; NIO's {@code select} rounds its timeout up to whole milliseconds, so an idle NIO
 * loop shows up to 1 ms of lag of its own).
 *
 * <p>Each probe re-schedules itself with {@code schedule} after it ran (a fixed delay), not with
 * {@code scheduleAtFixedRate}: at a fixed rate, a loop stalled for 10 periods would run the 10 overdue
 * runs back to back, recording lags of 10, 9, ... 1 periods for one stall, and the tail would count a
 * stall as many times as it is long. A fixed delay gives one sample per stall: the stall's length.
 * Started once; thread-safe.
 */
public final class LoopLag {

    /** The histogram's name in /metrics. */
    public static final String NAME = "demo_event_loop_lag_seconds";

    private final LogHistogram histogram = new LogHistogram(NAME, "How late the event loops ran a probe task "
            + "after it was due (--loop-lag: one per loop, due every period after its last run).",
            "The latest a probe task ran after it was due.");
    private final LongSupplier clock;
    private volatile boolean started;
    private volatile boolean stopped;

    /** Lag measured with {@link System#nanoTime}. */
    public LoopLag() {
        this(System::nanoTime);
    }

    /** Tests: lag measured with this clock, in nanoseconds (the loops' scheduling keeps their own). */
    LoopLag(LongSupplier clock) {
        this.clock = clock;
    }

    /**
     * Starts one probe on each loop of {@code loops}, due every {@code period}.
     *
     * @throws IllegalArgumentException if the period is not positive
     * @throws IllegalStateException if already started
     */
    public synchronized void start(EventExecutorGroup loops, Duration period) {
        if (period.isZero() || period.isNegative()) {
            throw new IllegalArgumentException("--loop-lag must be a positive duration: "
                    + DurationConverter.format(period));
        }
        if (started) {
            throw new IllegalStateException("already started");
        }
        started = true;
        long nanos = period.toNanos();
        for (EventExecutor loop : loops) {
            new Probe(loop, nanos).schedule();
        }
    }

    /** Stops the probes: each runs at most once more, and records nothing. */
    public void stop() {
        stopped = true;
    }

    /** Whether {@link #start} was called: the histogram is then part of the server's /metrics. */
    public boolean started() {
        return started;
    }

    /** Adds one lag, in nanoseconds (below 0 counts as 0). */
    void record(long nanos) {
        histogram.record(nanos);
    }

    /** Lags recorded. */
    public long count() {
        return histogram.count();
    }

    /** The Prometheus text of the histogram (version 0.0.4), current as of now. */
    public String exposition() {
        return histogram.exposition();
    }

    /** One loop's probe: runs on that loop, due {@code period} after its last run. */
    private final class Probe implements Runnable {
        private final EventExecutor loop;
        private final long period;
        private long due; // written and read on the loop, and before the first schedule

        Probe(EventExecutor loop, long period) {
            this.loop = loop;
            this.period = period;
        }

        void schedule() {
            // Read before schedule() reads its own clock: the deadline Netty keeps is this or a little later,
            // so the lag recorded is the loop's or up to a few nanoseconds more, never less.
            due = clock.getAsLong() + period;
            try {
                loop.schedule(this, period, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException shutDown) {
                // the loop is shutting down: no more probes on it
            }
        }

        @Override
        public void run() {
            if (stopped || loop.isShuttingDown()) {
                return;
            }
            record(clock.getAsLong() - due);
            schedule();
        }
    }
}
