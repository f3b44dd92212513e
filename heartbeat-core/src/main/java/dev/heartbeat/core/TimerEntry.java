/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One deadline in a {@link TimingWheel}. The entry is its own list node, so scheduling, moving and
 * cancelling it allocate nothing; the normal use is one entry for the whole life of the thing it
 * times (a connection, a session), subclassed to carry that thing's state.
 *
 * <p>An entry belongs to at most one wheel at a time. Its wheel fields are confined to the thread
 * that owns the wheel; the request fields let any thread hand the entry to a {@link TimerWorker}
 * without allocating a command object (see {@link TimerWorker} for the protocol).
 */
public class TimerEntry {

    // Worker requests (see TimerWorker). The low two bits are the requested lifecycle, QUEUED says
    // the entry sits in the worker's command queue. Transitions are documented in TimerWorker.
    static final int IDLE = 0;
    static final int ARMED = 1;
    static final int FIRING = 2;
    static final int CANCELLED = 3;
    static final int LIFECYCLE = 3;
    static final int QUEUED = 4;
    /** A requester is writing a new deadline: the worker must not fire the entry on what it reads meanwhile. */
    static final int WRITING = 8;

    private static final VarHandle STATE;
    private static final VarHandle REQUESTED_DEADLINE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(TimerEntry.class, "state", int.class);
            REQUESTED_DEADLINE = lookup.findVarHandle(TimerEntry.class, "requestedDeadline", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // ---- Owned by the wheel's thread; plain fields, never read by any other thread. ----
    /** The neighbours in the wheel's circular list, both null while the entry is in no list. */
    TimerEntry prev;
    TimerEntry next;
    long deadline;

    // ---- Shared between requesting threads and the worker. ----
    /** Lifecycle bits and the QUEUED bit. Every access goes through {@link #STATE}: volatile or CAS. */
    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;
    /** Written by a requester before it CASes {@link #state}; read by the worker after it clears QUEUED. */
    @SuppressWarnings("unused") // accessed through REQUESTED_DEADLINE
    private long requestedDeadline;

    /** Creates an entry that is in no wheel. */
    public TimerEntry() {
    }

    /**
     * Timer slack: the time a {@link TimerWorker} places this entry at for a requested or re-armed
     * {@code deadline}. Never before the deadline; the default is the deadline itself. An entry that
     * rounds its deadlines up to a coarse grid (a power of two of nanoseconds, say) lets the worker
     * serve many entries with one wake-up, as the Linux kernel's timer slack does; its lateness grows
     * by at most the grid. Called on the worker's thread only; must not throw.
     *
     * @param deadline the deadline asked for
     * @return the time to fire at, {@code >= deadline} by subtraction
     */
    protected long coalesce(long deadline) {
        return deadline;
    }

    /**
     * Called on the worker's thread when it applies a schedule request for this entry (not for a
     * re-arm or a move), just before it places the entry: the entry's next expiry is that request's
     * first. A subclass can thus tell the first expiry after a request from the re-arms that follow
     * without a field of its own. Must not throw; the default does nothing.
     */
    protected void requestApplied() {
    }

    /**
     * Whether a request for this entry is being made or waits in the worker's queue. An expiry
     * handler that finds one may leave the decision to it: the request replaces whatever the handler
     * re-arms (see {@link TimerWorker}). Any thread; a volatile read.
     */
    protected final boolean requestPending() {
        return (state() & (QUEUED | WRITING)) != 0;
    }

    /**
     * The deadline this entry was last scheduled at in the wheel (after {@link #coalesce}), in the
     * wheel's time base. Only meaningful on the thread that owns the wheel.
     */
    public final long deadline() {
        return deadline;
    }

    /** Whether the entry is linked in a wheel. Only meaningful on the thread that owns the wheel. */
    public final boolean isScheduled() {
        return next != null;
    }

    final int state() {
        return (int) STATE.getVolatile(this);
    }

    final boolean casState(int expected, int update) {
        return STATE.compareAndSet(this, expected, update);
    }

    /** Sets WRITING: a request's deadline is about to change. */
    final void beginRequest() {
        STATE.getAndBitwiseOr(this, WRITING);
    }

    /** Clears QUEUED and returns the state it was cleared from. */
    final int takeRequest() {
        return (int) STATE.getAndBitwiseAnd(this, ~QUEUED);
    }

    final void requestDeadline(long deadline) {
        REQUESTED_DEADLINE.setOpaque(this, deadline);
    }

    /**
     * The deadline of the latest schedule request, as requested (before {@link #coalesce}). Read on
     * the worker's thread, for instance by the expiry handler of the first expiry after a request.
     */
    public final long requestedDeadline() {
        return (long) REQUESTED_DEADLINE.getOpaque(this);
    }
}
