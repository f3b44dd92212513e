/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.Ticker;

import io.netty.util.concurrent.AbstractEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpmcUnboundedXaddArrayQueue;

/**
 * The actions the worker decided for the channels of one event loop, handed over as one task: the
 * worker pushes handlers into a lock-free queue and, at the end of its cycle, submits this batch to
 * the event loop unless it is already submitted. So one worker cycle costs each event loop at most
 * one task, and the batch object is reused for the life of the event loop.
 *
 * <p>Lazy hand-offs. A batch whose actions this cycle can all wait a little (pings: see
 * {@link HandlerPolicy#deferrableBits}) is handed over with Netty's
 * {@link AbstractEventExecutor#lazyExecute}: queued without waking the event loop, so a loop that is busy
 * with I/O runs it at its next wake-up instead of paying one (an {@code eventfd} write and a return
 * from {@code epoll_wait}) for it. A batch still waiting at the end of a cycle at or after its time
 * ({@link #lazyUntil()}), or one that gets an action that cannot wait (a close, an idle event),
 * wakes the loop then: the worker hands it a no-op task with {@code execute}, and the loop runs
 * both. The monitor sets that time (the next point of the coalescing grid) and makes sure a
 * cycle comes then (its follow-up entry).
 *
 * <p>The queue is JCTools' chunked {@link MpmcUnboundedXaddArrayQueue}, not an intrusive stack: a
 * link in every handler would cost each channel 4 bytes for the few that have actions pending. The
 * queue costs each event loop 7,584 bytes instead (JOL: its four chunks are allocated up front), so
 * it pays off from about 1,900 channels per event loop. Chunks are reused, so a steady stream
 * allocates nothing; handing one event loop 384 handlers at once and draining them allocated
 * nothing either (measured), while larger bursts allocate a chunk for about each further 128,
 * dropped once drained. It is multi-consumer because the worker drains it too, when it drops the
 * batch of an event loop that is shutting down while that loop may still be running it.
 *
 * <p>Bounded runs. A run carries out actions for at most {@link #RUN_BUDGET_NANOS} and then queues the
 * batch again for the rest, after the loop's I/O ({@link #continueLater}), so a burst (a mass close, the pings of 100k
 * channels on one grid point) never holds the loop's I/O for longer than that; the state word then
 * says "queued" ({@link #WOKEN}) until the continuation starts, exactly as for a submission by the
 * worker, which therefore adds nothing while a continuation is pending and leaves its later pushes to it.
 *
 * <p>Threads: {@link #push}, {@link #mustNotWait} and {@link #submitIfNeeded} on the worker only;
 * {@link #run} on the event loop. A handler is in the queue at most once: the worker pushes it only
 * when its action bits go from none to some, and the event loop takes it out of the queue before it
 * takes its bits. The state word: only the worker moves it away from {@link #IDLE}, only the event
 * loop's run moves it back, and the worker's one change of a non-idle state (lazy to woken) is a CAS,
 * so a run that starts meanwhile is never overwritten.
 */
public final class EventLoopBatch implements Runnable {

    /** {@link #submitIfNeeded}: nothing waits lazily (nothing pending, or the event loop was woken for it). */
    public static final int HANDED = 0;
    /** {@link #submitIfNeeded}: queued lazily, not run yet: a later cycle must look again. */
    public static final int WAITING = 1;
    /** {@link #submitIfNeeded}: the event loop refused the task (it is shutting down); the batch was drained. */
    static final int REJECTED = 2;

    /** Handlers per chunk of the queue: 1.5 KiB a chunk (a reference and a sequence number each). */
    private static final int CHUNK_SIZE = 128;
    /** Chunks kept for reuse, allocated up front. */
    private static final int POOLED_CHUNKS = 4;

    /**
     * The most one run spends on actions before it leaves the rest to a task of its own: half of the
     * 200 µs that issue 29 allows a task on an event loop, so that the one action a run may take past
     * it still fits, unless that action alone is as long. The clock is read before every action: one
     * {@code System.nanoTime()} (21.7 ns on this project's 2-core VM, tsc clock source) against an
     * action of microseconds (a write through the pipeline; an action took 21.7 µs of CPU at the
     * median and 83 at the 90th percentile in a 100k tcp run, where, with the clock read every four
     * actions, 3,301 runs of four actions took over 200 µs: {@code load-test/docs/results.md}). A time,
     * not a count, because an action's cost ranges from a ping written to a local channel to a close
     * that runs the pipeline's whole channelInactive chain: a count that keeps closes short would cut
     * pings needlessly fine.
     */
    public static final long RUN_BUDGET_NANOS = TimeUnit.MICROSECONDS.toNanos(100);

    /** Not in the event loop's task queue (or running already, past its start). */
    private static final int IDLE = 0;
    /** In the task queue without a wake-up of the loop. */
    private static final int LAZY = 1;
    /** In the task queue, and the loop was woken for it (or will run it anyway). */
    private static final int WOKEN = 2;

    private static final VarHandle STATE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(EventLoopBatch.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final EventExecutor executor;
    /**
     * The executor's lazy hand-off, if it has one (every Netty event loop does) and the loop does not
     * host the worker's cycles (it runs its batch right after the cycle anyway); else null: every
     * hand-off is eager.
     */
    private final AbstractEventExecutor lazyExecutor;
    private final MonitorEngine monitor;
    /** Handlers with actions: offered by the worker, polled by the event loop (and by the worker's discard). */
    private final MessagePassingQueue<HeartbeatHandler> pending =
            new MpmcUnboundedXaddArrayQueue<>(CHUNK_SIZE, POOLED_CHUNKS);
    /** {@link #IDLE}, {@link #LAZY} or {@link #WOKEN}. Volatile, CAS. */
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;

    /** Worker only: the {@link EventLoopBatches} sweep epoch this batch was last used in. */
    int usedInEpoch;
    /** Worker only: an action that cannot wait was handed to this batch since its last submission. */
    private boolean urgent;
    /** Worker only: until when (ticker time) the batch last queued lazily may wait for its loop to run it. */
    private long lazyUntil;

    public EventLoopBatch(EventExecutor executor, MonitorEngine monitor) {
        this.executor = executor;
        this.lazyExecutor = executor instanceof AbstractEventExecutor a && executor != monitor.hostExecutor()
                ? a : null;
        this.monitor = monitor;
    }

    /** Worker: adds a handler whose action bits just became non-empty. */
    public void push(HeartbeatHandler handler) {
        pending.offer(handler);
    }

    /** Worker: an action handed to this batch (pushed now or joining a pending word) cannot wait. */
    public void mustNotWait() {
        urgent = true;
    }

    /**
     * Worker, at the end of a cycle at {@code now}: hands the batch to its event loop if it has
     * handlers and is not queued already; lazily if {@code lazy} and nothing handed this cycle must not
     * wait, and then it may wait until {@code until}. A batch queued lazily that has not run by its
     * time, or one that now has an action that must not wait, gets a wake-up.
     *
     * @return {@link #HANDED}, {@link #WAITING} (queued lazily and not run yet: look again at a cycle
     *     by {@link #lazyUntil()}) or {@link #REJECTED} (the event loop is shutting down; the batch was drained: its
     *     channels are gone with it)
     * @throws Error or RuntimeException from the executor (an {@code OutOfMemoryError} allocating the
     *     task's queue node, say): the batch keeps its actions and is submitted again after the next
     *     worker cycle that expires anything
     */
    public int submitIfNeeded(boolean lazy, long now, long until) {
        boolean mustNotWait = urgent;
        urgent = false;
        if (pending.isEmpty()) {
            return HANDED;
        }
        boolean lazily = lazy && !mustNotWait && lazyExecutor != null;
        while (true) {
            // A CAS, not a read, even when the batch is queued already: a full fence, so that the
            // pushes of this cycle are visible before the state is looked at. A run that cleared the
            // state just before then finds them; one that clears it after is looked at here as
            // queued, and finds them too (a release store of a pushed element followed by a plain
            // volatile read could be reordered, and the run would then miss a push it counted:
            // BatchStress found exactly that).
            int s = (int) STATE.compareAndExchange(this, IDLE, lazily ? LAZY : WOKEN);
            if (s == IDLE) {
                if (!lazily) {
                    return hand(this, false);
                }
                lazyUntil = until;
                int handed = hand(this, true);
                return handed == HANDED ? WAITING : handed;
            }
            if (s == WOKEN) {
                return HANDED;
            }
            if (!mustNotWait && now - lazyUntil < 0) {
                return WAITING; // its loop may still run it on its own
            }
            if (STATE.compareAndSet(this, LAZY, WOKEN)) {
                return hand(EventLoopBatch::wakeUp, false); // the loop then runs the lazy batch too
            }
            // The run started meanwhile (the state is idle): what it did not take needs a submission of its own.
        }
    }

    private int hand(Runnable task, boolean lazily) {
        try {
            if (lazily) {
                lazyExecutor.lazyExecute(task);
            } else {
                executor.execute(task);
            }
            return HANDED;
        } catch (RejectedExecutionException shuttingDown) {
            state = IDLE;
            discard();
            return REJECTED;
        } catch (RuntimeException | Error e) {
            state = IDLE; // not queued (or queued lazily, and then its run finds the queue as it is): try again
            throw e;
        }
    }

    /** Handed to a loop that holds a batch lazily, to wake it: the loop then runs both. */
    private static void wakeUp() {
        // nothing: the wake-up is the point
    }

    /**
     * Event loop: carries out the pending actions, for at most {@link #RUN_BUDGET_NANOS}; what is left
     * runs in a task of its own, queued behind what the loop has queued meanwhile (see
     * {@link #continueLater}).
     */
    @Override
    public void run() {
        state = IDLE; // before taking from the queue: a push after this re-submits
        Ticker clock = monitor.ticker;
        long start = clock.nanoTime();
        Object event = FlightEvents.beginBatchRun();
        int handled = 0;
        // What was pushed before the submission, and no more: later pushes come with their own run.
        // (relaxedPoll never waits for a push in progress; that push is followed by a submission.)
        for (int n = pending.size(); n > 0; n--) {
            if (handled != 0 && clock.nanoTime() - start >= RUN_BUDGET_NANOS) {
                FlightEvents.endBatchRun(event, handled, true);
                continueLater();
                return;
            }
            HeartbeatHandler handler = pending.relaxedPoll();
            if (handler == null) {
                break; // the worker's discard took the rest, or a push is under way (its submission follows)
            }
            handled++;
            int word = handler.takeActions();
            if (word != 0) {
                try {
                    handler.perform(word);
                } catch (Throwable t) {
                    monitor.actionFailed(handler, t);
                }
            }
        }
        FlightEvents.endBatchRun(event, handled, false);
    }

    /**
     * Event loop, from a run that used its budget: makes sure the batch runs again after the loop's
     * next look at I/O. If the worker has queued it again meanwhile, that task is the continuation
     * (one queued lazily is marked woken: this loop is awake and runs its queue); else the batch
     * schedules itself with no delay, which Netty's loop takes into its task queue only when it next
     * starts running tasks, after its I/O (a task given to {@code execute} would run in this round of
     * tasks: Netty 4.2's loop runs its queue for up to a second before it looks at I/O again).
     * Allocates one scheduled task per continuation.
     */
    private void continueLater() {
        while (true) {
            int s = (int) STATE.compareAndExchange(this, IDLE, WOKEN);
            if (s == IDLE) {
                try {
                    executor.schedule(this, 0, TimeUnit.NANOSECONDS);
                } catch (RejectedExecutionException shuttingDown) {
                    state = IDLE;
                    discard(); // as a refused hand-off: its channels are gone with the loop
                } catch (RuntimeException | Error e) {
                    state = IDLE;
                    monitor.dispatchFailed(this, e); // what is left is handed over after the worker's next cycle
                }
                return;
            }
            if (s == WOKEN || STATE.compareAndSet(this, LAZY, WOKEN)) {
                return; // queued again by the worker
            }
            // The state changed between the two CASes (the worker queued it lazily meanwhile): again.
        }
    }

    /** Drops every pending action (the event loop is gone, so are its channels). */
    void discard() {
        HeartbeatHandler handler;
        while ((handler = pending.relaxedPoll()) != null) {
            handler.takeActions();
        }
    }

    /** Worker: until when the batch last queued lazily may wait (see {@link #submitIfNeeded}). */
    public long lazyUntil() {
        return lazyUntil;
    }

    /** Worker: whether nothing is pending or queued, so the batch can be forgotten. */
    public boolean isIdle() {
        return pending.isEmpty() && (int) STATE.getVolatile(this) == IDLE;
    }
}
