/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import java.util.concurrent.RejectedExecutionException;

import io.netty.util.concurrent.EventExecutor;
import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpmcUnboundedXaddArrayQueue;

/**
 * The actions the worker decided for the channels of one event loop, handed over as one task: the
 * worker pushes handlers into a lock-free queue and, at the end of its cycle, submits this batch to
 * the event loop unless it is already submitted. So one worker cycle costs each event loop at most
 * one task, and the batch object is reused for the life of the event loop.
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
 * <p>Threads: {@link #push} and {@link #submitIfNeeded} on the worker only; {@link #run} on the event
 * loop. A handler is in the queue at most once: the worker pushes it only when its action bits go
 * from none to some, and the event loop takes it out of the queue before it takes its bits.
 */
final class EventLoopBatch implements Runnable {

    /** Handlers per chunk of the queue: 1.5 KiB a chunk (a reference and a sequence number each). */
    private static final int CHUNK_SIZE = 128;
    /** Chunks kept for reuse, allocated up front. */
    private static final int POOLED_CHUNKS = 4;

    private static final VarHandle SUBMITTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            SUBMITTED = lookup.findVarHandle(EventLoopBatch.class, "submitted", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final EventExecutor executor;
    private final HeartbeatMonitor monitor;
    /** Handlers with actions: offered by the worker, polled by the event loop (and by the worker's discard). */
    private final MessagePassingQueue<HeartbeatHandler> pending =
            new MpmcUnboundedXaddArrayQueue<>(CHUNK_SIZE, POOLED_CHUNKS);
    /** Whether this batch is in the event loop's task queue (or running). CAS. */
    @SuppressWarnings("unused") // accessed through SUBMITTED
    private volatile boolean submitted;

    /** Worker only: the {@link EventLoopBatches} sweep epoch this batch was last used in. */
    int usedInEpoch;

    EventLoopBatch(EventExecutor executor, HeartbeatMonitor monitor) {
        this.executor = executor;
        this.monitor = monitor;
    }

    /** Worker: adds a handler whose action bits just became non-empty. */
    void push(HeartbeatHandler handler) {
        pending.offer(handler);
    }

    /**
     * Worker: submits the batch if it has handlers and is not already queued.
     *
     * @return false if the event loop refused the task because it is shutting down; the batch is then
     *     drained (its channels are gone with it)
     * @throws Error or RuntimeException from the executor (an {@code OutOfMemoryError} allocating the
     *     task's queue node, say): the batch keeps its actions and is submitted again after the next
     *     worker cycle that expires anything
     */
    boolean submitIfNeeded() {
        if (pending.isEmpty() || !SUBMITTED.compareAndSet(this, false, true)) {
            return true;
        }
        try {
            executor.execute(this);
            return true;
        } catch (RejectedExecutionException shuttingDown) {
            submitted = false;
            discard();
            return false;
        } catch (RuntimeException | Error e) {
            submitted = false; // not queued: the next cycle tries again
            throw e;
        }
    }

    /** Event loop: carries out every pending action. */
    @Override
    public void run() {
        submitted = false; // before taking from the queue: a push after this re-submits
        // What was pushed before the submission, and no more: later pushes come with their own run.
        // (relaxedPoll never waits for a push in progress; that push is followed by a submission.)
        for (int n = pending.size(); n > 0; n--) {
            HeartbeatHandler handler = pending.relaxedPoll();
            if (handler == null) {
                return; // the worker's discard took the rest, or a push is under way (its submission follows)
            }
            int word = handler.takeActions();
            if (word != 0) {
                try {
                    handler.perform(word);
                } catch (Throwable t) {
                    monitor.actionFailed(handler, t);
                }
            }
        }
    }

    /** Drops every pending action (the event loop is gone, so are its channels). */
    void discard() {
        HeartbeatHandler handler;
        while ((handler = pending.relaxedPoll()) != null) {
            handler.takeActions();
        }
    }

    /** Worker: whether nothing is pending or queued, so the batch can be forgotten. */
    boolean isIdle() {
        return pending.isEmpty() && !(boolean) SUBMITTED.getVolatile(this);
    }
}
