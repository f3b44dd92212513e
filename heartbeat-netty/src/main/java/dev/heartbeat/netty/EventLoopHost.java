/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.CycleHost;
import dev.heartbeat.core.TimerWorker;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * Runs a monitor's worker cycles on a Netty event loop (see {@link HeartbeatMonitor.Builder#hostedBy}):
 * a planned cycle is one scheduled task on the loop, so a loop that is awake for I/O anyway runs it
 * without a wake-up of its own, and an idle loop wakes for it once, as it would for an
 * {@code IdleStateHandler} task. An earlier request runs the cycle as a plain task.
 *
 * <p>Threads: {@link #plan} and {@link #run} on the event loop only; {@link #wake} on any thread.
 * Allocation: one Netty {@code ScheduledFutureTask} per planned cycle (at most one per wheel slot
 * with work, so at most about 60 a second with the default coalescing); waking and running allocate
 * nothing.
 */
final class EventLoopHost implements CycleHost, Runnable {

    private final EventExecutor executor;
    private final TimerWorker<?> worker;
    /** Event loop only: the cycle planned last, cancelled when a newer plan replaces it. */
    private ScheduledFuture<?> planned;

    EventLoopHost(EventExecutor executor, TimerWorker<?> worker) {
        this.executor = executor;
        this.worker = worker;
    }

    @Override
    public void run() {
        worker.runHosted();
    }

    @Override
    public void plan(long delayNanos) {
        ScheduledFuture<?> old = planned;
        planned = null;
        if (old != null) {
            old.cancel(false); // no effect on the task that is running now
        }
        try {
            if (delayNanos == 0) {
                executor.execute(this);
            } else {
                planned = executor.schedule(this, delayNanos, TimeUnit.NANOSECONDS);
            }
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
