/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import dev.heartbeat.core.CycleHost;
import dev.heartbeat.core.TimerWorker;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * Runs a monitor's worker cycles on a Netty event loop (see {@link HeartbeatMonitor.Builder#hostedBy}):
 * a planned cycle is one scheduled task on the loop, so a loop that is awake for I/O anyway runs it
 * without a wake-up of its own, and an idle loop wakes for it once, as it would for an
 * {@code IdleStateHandler} task. An earlier request runs the cycle as a plain task, and leaves the
 * planned one in place. A cycle that leaves work (its run is bounded, see {@link TimerWorker#runHosted()})
 * is continued by a task scheduled with no delay, so that the loop's I/O runs before it.
 *
 * <p>A plan for the moment the pending planned cycle is already due at keeps that task: the worker
 * plans for its wheel's tick boundaries, so two plans for the same moment differ only by the time
 * between their clock reads, and plans for different moments by a tick or more. Replacing the task
 * meant a cancel (a removal from the loop's scheduled-task queue) and a new task for every cycle run
 * early by a request; measured at about an eighth of a hosted cycle's CPU (async-profiler, 100k tcp).
 *
 * <p>Each run is a {@code dev.heartbeat.HostedCycle} JFR event when a recording enables it ({@link FlightEvents}).
 *
 * <p>Threads: {@link #plan} and {@link #run} on the event loop only; {@link #wake} on any thread.
 * Allocation: one Netty {@code ScheduledFutureTask} per planned cycle (at most one per wheel slot
 * with work, so at most about 60 a second with the default coalescing) and one per continued run;
 * waking and running allocate nothing.
 */
public final class EventLoopHost implements CycleHost, Runnable {

    /** The most two plans' moments may differ by and still count as one (for coarse ticks). */
    private static final long SAME_PLAN_MAX_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    private final EventExecutor executor;
    private final TimerWorker<?> worker;
    /** The planned cycle's task: no plan is pending while it runs, so the plan it makes cancels nothing. */
    private final Runnable plannedCycle = this::runPlanned;
    /** The clock plans are compared by: {@link System#nanoTime}, or a test's. */
    private final LongSupplier clock;
    /** Two plans whose moments (by {@link #clock}) are this close are for the same moment. */
    private final long samePlanNanos;
    /** Event loop only: the cycle planned last, cancelled when a plan for another moment replaces it. */
    private ScheduledFuture<?> planned;
    /** Event loop only: when {@link #planned} is due, by {@link #clock}. */
    private long plannedAt;
    /** Event loop only: the running cycle planned the next at once (it left work: its run was bounded). */
    private boolean continued;

    public EventLoopHost(EventExecutor executor, TimerWorker<?> worker) {
        this(executor, worker, System::nanoTime);
    }

    public EventLoopHost(EventExecutor executor, TimerWorker<?> worker, LongSupplier clock) {
        this.executor = executor;
        this.worker = worker;
        this.clock = clock;
        this.samePlanNanos = Math.min(worker.tickNanos() >>> 2, SAME_PLAN_MAX_NANOS);
    }

    @Override
    public void run() {
        runCycle();
    }

    private void runPlanned() {
        planned = null;
        runCycle();
    }

    /** Runs one hosted cycle, recorded as a {@code dev.heartbeat.HostedCycle} event if JFR records those. */
    private void runCycle() {
        Object event = FlightEvents.beginHostedCycle();
        continued = false;
        int work = worker.runHosted();
        FlightEvents.endHostedCycle(event, work, continued);
    }

    @Override
    public void plan(long delayNanos) {
        try {
            if (delayNanos == 0) {
                continued = true;
                // Run again after the loop's next look at I/O: a task scheduled with no delay joins the task
                // queue when the loop next starts running its tasks, after its I/O, while an executed one would
                // run in this round of tasks (Netty 4.2's loop runs its queue for up to a second before it looks
                // at I/O again). A pending planned cycle stays: the cycle about to run most likely plans for
                // the same moment again (see the class comment).
                executor.schedule(this, 0, TimeUnit.NANOSECONDS);
                return;
            }
            long at = clock.getAsLong() + delayNanos;
            ScheduledFuture<?> old = planned;
            if (old != null) {
                if (!old.isDone() && Math.abs(at - plannedAt) <= samePlanNanos) {
                    return; // already planned for this moment
                }
                planned = null;
                old.cancel(false);
            }
            planned = executor.schedule(plannedCycle, delayNanos, TimeUnit.NANOSECONDS);
            plannedAt = at;
        } catch (RejectedExecutionException shuttingDown) {
            // The loop is gone: the worker's watchdog thread runs the cycles from now on.
        }
    }

    @Override
    public void wake() {
        try {
            executor.execute(this);
        } catch (RejectedExecutionException shuttingDown) {
            // As above: the watchdog takes over.
        }
    }

    @Override
    public String toString() {
        return "EventLoopHost[" + executor + "]";
    }
}
