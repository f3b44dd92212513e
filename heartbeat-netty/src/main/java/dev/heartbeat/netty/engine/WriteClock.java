/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.util.Arrays;
import java.util.concurrent.RejectedExecutionException;

import dev.heartbeat.core.Ticker;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.SingleThreadEventExecutor;

/**
 * One clock read for all the tracked writes that complete in one run of an event loop's work, instead
 * of one per write (issue 29, goal 5: the clock read was most of a tracked write's cost).
 *
 * <p>A {@link HeartbeatHandler.Duplex} whose write completed ({@link HeartbeatHandler#writeCompleted})
 * does not read the clock: it joins its thread's clock, which queues itself once on the executor as an
 * ordinary task. That task runs after the work under way (the rest of the I/O the loop is handling, the
 * tasks queued before it), reads each ticker once and stamps every handler that joined. Never early: the
 * stamp is read after every completion it stands for, as the stamp of a flush's end is
 * ({@link HeartbeatHandler#onFlush}); it is later than {@code IdleStateHandler}'s by at most that work.
 * Nothing reads a handler's write stamp on its event loop without settling a stamp it owes first (the
 * actions, {@code HeartbeatHandler#settlePendingWrite}): a verdict the worker judged from the older stamp
 * is judged again from the current one before anything fires. The worker may read the older stamp
 * meanwhile, as it may read any stamp late (DESIGN.md, threads and ownership): a re-check later, never a
 * close early.
 *
 * <p>Only where it pays: the clock's task costs more than one clock read, so a thread whose latest run of
 * the clock stamped fewer than {@link #DENSE} handlers reads the clock at once again, and tries the clock
 * every {@link #PROBE_EVERY}th write to see whether the turns got denser.
 *
 * <p>Only executors that run tasks as they come ({@link SingleThreadEventExecutor}: every transport's
 * event loop, {@code DefaultEventLoop}, a handler's own {@code DefaultEventExecutor}); elsewhere
 * ({@code EmbeddedEventLoop}, whose tasks wait for the test to run them) the handler reads the clock at
 * once, as before. Not shared between threads: one per thread, reached through Netty's
 * {@link FastThreadLocal} (an array index on an event loop's thread).
 */
public final class WriteClock implements Runnable {

    private static final FastThreadLocal<WriteClock> CLOCKS = new FastThreadLocal<>() {
        @Override
        protected WriteClock initialValue() {
            return new WriteClock();
        }
    };

    /**
     * Tests only (the interaction model, on its thread, between episodes): also on executors that run
     * their tasks when told, as {@code EmbeddedEventLoop} does, so that the model interleaves the clock's
     * task with the actions handed over.
     */
    private static boolean onEveryExecutor;

    /**
     * The fewest handlers a run of the clock stamps for the clock to stay in use: below, its task (queued,
     * polled, and the loop's own clock read for a run of tasks) costs more than the clock reads it saves
     * ({@code LoopWriteBenchmark} on this project's 2-core machine: one write a turn, 177 ns a write through
     * the clock against 82 ns with the clock read at once; 8 channels a turn, 71 against 82).
     */
    public static final int DENSE = 4;
    /**
     * While turns are sparse, one write in about this many (8 to 23, drawn each time, so that the probe does
     * not fall on the same place of every turn) is stamped through the clock, to see whether they still are.
     */
    public static final int PROBE_EVERY = 16;

    /** The handlers that owe a stamp, in the order they joined; the first {@link #size} are used. */
    private HeartbeatHandler.Duplex[] owing = new HeartbeatHandler.Duplex[16];
    private int size;
    /** Whether the latest run stamped {@link #DENSE} handlers or more: the next turn's writes join at once. */
    private boolean dense;
    /** Writes to stamp at once before the next probe while turns are sparse. */
    private int untilProbe = PROBE_EVERY;
    /** The executor the latest run was queued on (an event loop's thread has one). */
    private EventExecutor queuedOn;
    /** The draws of the probes' gaps (xorshift; a fixed start: the same gaps on every thread and run). */
    private int draws = 0x2545F491;

    private WriteClock() {
    }

    /**
     * The handler's executor ({@code executor}, this thread): whether {@code handler}'s write stamp is
     * taken by this thread's clock at the end of the current work; false if it must read the clock now
     * (an executor this clock cannot queue itself on, or one shutting down, or turns too sparse for the
     * clock to pay: see {@link #DENSE}).
     */
    static boolean join(HeartbeatHandler.Duplex handler, EventExecutor executor) {
        if (!(executor instanceof SingleThreadEventExecutor) && !onEveryExecutor) {
            return false;
        }
        WriteClock clock = CLOCKS.get();
        if (clock.size == 0) {
            if (!clock.dense && !onEveryExecutor && --clock.untilProbe > 0) {
                return false; // sparse turns: read at once, but look again now and then
            }
            clock.untilProbe = clock.nextGap();
            if (!clock.queueOn(executor)) {
                return false;
            }
        } else if (executor != clock.queuedOn && !clock.queueOn(executor)) {
            // Another executor on this thread (only the model's embedded loops, all on the test's thread): its
            // tasks may never run (a closed channel's), so this one runs the clock too; the second run finds none.
            return false;
        }
        if (clock.size == clock.owing.length) {
            clock.owing = Arrays.copyOf(clock.owing, clock.size * 2);
        }
        clock.owing[clock.size++] = handler;
        return true;
    }

    /** Queues this clock's run on {@code executor}; false if it refuses (shutting down). */
    private boolean queueOn(EventExecutor executor) {
        try {
            executor.execute(this);
        } catch (RejectedExecutionException shuttingDown) {
            return false;
        }
        queuedOn = executor;
        return true;
    }

    /** The next probe's gap: 8 to 23 writes. */
    private int nextGap() {
        int x = draws;
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        draws = x;
        return PROBE_EVERY / 2 + (x >>> 28);
    }

    /** Tests only: see {@link #onEveryExecutor}. */
    public static void onEveryExecutor(boolean on) {
        onEveryExecutor = on;
        WriteClock clock = CLOCKS.getIfExists(); // this thread's: what an episode left queued is forgotten
        if (clock != null) {
            Arrays.fill(clock.owing, null);
            clock.size = 0;
            clock.queuedOn = null;
        }
    }

    /** The executor: stamps every handler that joined and still owes its stamp, one clock read per ticker. */
    @Override
    public void run() {
        Ticker last = null;
        long now = 0;
        HeartbeatHandler.Duplex[] handlers = owing;
        int n = size;
        if (n == 0) {
            return; // a second run queued on another executor (see join): the first one stamped them
        }
        size = 0; // a handler that joins from here on queues the clock again
        dense = n >= DENSE;
        for (int i = 0; i < n; i++) {
            HeartbeatHandler.Duplex handler = handlers[i];
            handlers[i] = null;
            Ticker ticker = handler.owedTicker();
            if (ticker != null) { // else settled meanwhile (an action read the clock for it)
                if (ticker != last) {
                    last = ticker;
                    now = ticker.nanoTime();
                }
                handler.payStamp(now);
            }
        }
    }
}
