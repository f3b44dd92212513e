/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import java.util.concurrent.RejectedExecutionException;

import io.netty.util.concurrent.EventExecutor;

/**
 * The actions the worker decided for the channels of one event loop, handed over as one task: the
 * worker pushes handlers onto a lock-free stack and, at the end of its cycle, submits this batch to
 * the event loop unless it is already submitted. So one worker cycle costs each event loop at most
 * one task, and the batch object is reused for the life of the event loop.
 *
 * <p>Threads: {@link #push} and {@link #submitIfNeeded} on the worker only; {@link #run} on the event
 * loop. A handler is in the stack at most once: the worker pushes it only when its action bits go
 * from none to some, and the event loop reads its link before taking its bits.
 */
final class EventLoopBatch implements Runnable {

    private static final VarHandle HEAD;
    private static final VarHandle SUBMITTED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(EventLoopBatch.class, "head", HeartbeatHandler.class);
            SUBMITTED = lookup.findVarHandle(EventLoopBatch.class, "submitted", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final EventExecutor executor;
    private final HeartbeatMonitor monitor;
    /** Top of the stack of handlers with actions. CAS by the worker, swapped out by the event loop. */
    @SuppressWarnings("unused") // accessed through HEAD
    private volatile HeartbeatHandler head;
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
        HeartbeatHandler top;
        do {
            top = (HeartbeatHandler) HEAD.getVolatile(this);
            handler.batchNext = top;
        } while (!HEAD.compareAndSet(this, top, handler));
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
        if (HEAD.getVolatile(this) == null || !SUBMITTED.compareAndSet(this, false, true)) {
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
        submitted = false; // before taking the stack: a push after this re-submits
        HeartbeatHandler handler = (HeartbeatHandler) HEAD.getAndSet(this, null);
        while (handler != null) {
            HeartbeatHandler next = unlink(handler);
            int word = handler.takeActions();
            if (word != 0) {
                try {
                    handler.perform(word);
                } catch (Throwable t) {
                    monitor.actionFailed(handler, t);
                }
            }
            handler = next;
        }
    }

    /** Drops every pending action (the event loop is gone, so are its channels). */
    void discard() {
        HeartbeatHandler handler = (HeartbeatHandler) HEAD.getAndSet(this, null);
        while (handler != null) {
            HeartbeatHandler next = unlink(handler);
            handler.takeActions();
            handler = next;
        }
    }

    /** Worker: whether nothing is pending or queued, so the batch can be forgotten. */
    boolean isIdle() {
        return HEAD.getVolatile(this) == null && !(boolean) SUBMITTED.getVolatile(this);
    }

    /**
     * Reads and clears a handler's link, before its action bits are taken (see the class doc): a
     * link left behind would keep every handler below it in the stack reachable, and with them
     * their channels, long after they closed.
     */
    private static HeartbeatHandler unlink(HeartbeatHandler handler) {
        HeartbeatHandler next = handler.batchNext;
        handler.batchNext = null;
        return next;
    }
}
