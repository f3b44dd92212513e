/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.netty.util.concurrent.AbstractScheduledEventExecutor;
import io.netty.util.concurrent.DefaultPromise;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GlobalEventExecutor;

/**
 * An executor of its own for a handler ({@code pipeline.addLast(executor, name, handler)}), driven by the
 * test on its own thread and in virtual time: tasks wait until {@link #runAll()}, the only time the
 * executor is "in its event loop", so a pipeline that reaches the handler from the channel's (embedded)
 * loop queues the call here, as it would for a {@code DefaultEventExecutorGroup}'s thread. Scheduled tasks
 * come due by {@code clock} (virtual nanoseconds, never negative), as a Netty executor's by its own.
 */
@SuppressWarnings("deprecation") // Netty 4.2 deprecates getCurrentTimeNanos for its Ticker, which 4.1 lacks
final class ManualExecutor extends AbstractScheduledEventExecutor {

    private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
    private final LongSupplier clock;
    private final Thread owner = Thread.currentThread();
    private boolean running;

    ManualExecutor(LongSupplier clock) {
        this.clock = clock;
    }

    /**
     * Runs the queued tasks and the scheduled ones due, and those they queue, until none is left; nothing if
     * called from one of its own tasks (an executor runs one task at a time).
     *
     * @return how many tasks ran
     */
    int runAll() {
        if (running) {
            return 0;
        }
        running = true;
        int ran = 0;
        try {
            for (Runnable task; (task = nextTask()) != null; ran++) {
                task.run();
            }
        } finally {
            running = false;
        }
        return ran;
    }

    /** Whether a task waits (a scheduled one not due yet does not count). */
    boolean hasTasks() {
        return !tasks.isEmpty();
    }

    private Runnable nextTask() {
        Runnable task = tasks.poll();
        return task != null ? task : pollScheduledTask(getCurrentTimeNanos());
    }

    @Override
    protected long getCurrentTimeNanos() {
        return clock.getAsLong();
    }

    @Override
    public boolean inEventLoop(Thread thread) {
        return running && thread == owner;
    }

    @Override
    public void execute(Runnable task) {
        tasks.add(task);
    }

    @Override
    public boolean isShuttingDown() {
        return false;
    }

    @Override
    public Future<?> shutdownGracefully(long quietPeriod, long timeout, TimeUnit unit) {
        return terminationFuture();
    }

    @Override
    public Future<?> terminationFuture() {
        return new DefaultPromise<Void>(GlobalEventExecutor.INSTANCE); // never terminates: the test drops it
    }

    @Override
    @Deprecated
    public void shutdown() {
        // nothing to stop: no thread
    }

    @Override
    public boolean isShutdown() {
        return false;
    }

    @Override
    public boolean isTerminated() {
        return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return false;
    }
}
