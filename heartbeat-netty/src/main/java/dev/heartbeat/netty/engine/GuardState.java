/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * The per-channel state of the lifecycle {@link Guards} (maximum age, write stall, unwritable): a
 * side object made only for configurations that set a guard, which wraps the policy's own side
 * object ({@link #inner}: a ProbeState or OutputObserver, or null), so that the handler
 * keeps one side pointer and the configurations without guards pay nothing. A reconfiguration makes
 * a new one that carries the channel's birth, its jitter draw, its goodbye and a watched unwritable
 * spell over.
 *
 * <p>Threads: the fields marked so are written by the event loop and read by the worker (opaque);
 * the rest belong to one thread, as marked.
 */
public final class GuardState {

    private static final VarHandle UNWRITABLE_SINCE;
    private static final VarHandle UNWRITABLE;
    private static final VarHandle GOODBYE_AT;
    private static final VarHandle PHASE;
    private static final VarHandle HELD;
    private static final VarHandle HELD_UNTIL;
    private static final VarHandle STALL_TAKEN;
    private static final VarHandle STALL_SINCE;
    private static final VarHandle DEFERRED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            UNWRITABLE_SINCE = lookup.findVarHandle(GuardState.class, "unwritableSince", long.class);
            UNWRITABLE = lookup.findVarHandle(GuardState.class, "unwritable", boolean.class);
            GOODBYE_AT = lookup.findVarHandle(GuardState.class, "goodbyeAt", long.class);
            PHASE = lookup.findVarHandle(GuardState.class, "phase", int.class);
            HELD = lookup.findVarHandle(GuardState.class, "held", boolean.class);
            HELD_UNTIL = lookup.findVarHandle(GuardState.class, "heldUntil", long.class);
            STALL_TAKEN = lookup.findVarHandle(GuardState.class, "stallTaken", boolean.class);
            STALL_SINCE = lookup.findVarHandle(GuardState.class, "stallSince", long.class);
            DEFERRED = lookup.findVarHandle(GuardState.class, "deferred", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** No goodbye said yet. */
    static final int LIVING = 0;
    /** The first half of a two-phase goodbye is out (HTTP/2: GOAWAY with the largest stream id, and a PING). */
    static final int WARNED = 1;
    /** The goodbye is said: the channel closes at the end of the grace unless the peer closes first. */
    static final int SAID = 2;

    /**
     * In {@link #heldBits}: the episode was carried over from the previous configuration's state (after a
     * goodbye) and this configuration's veto has not been asked yet. (A bit, not a field: the state stays
     * 144 bytes.)
     */
    private static final int CARRIED_UNASKED = 1 << 31;

    /** The policy's side object, or null. */
    final Object inner;
    /** Ticker time the channel became active (kept over reconfigurations). */
    final long birth;
    /** The channel's jitter draw in [0, 1) (kept over reconfigurations). */
    final double jitterDraw;
    /** Ticker time the channel reaches its maximum age under this configuration; unused without maxAge. */
    final long ageDeadline;
    /** Ticker time the handler's stamps were set for this configuration: its policy's checks start here. */
    final long configuredAt;

    // ---- Event loop writes, worker reads (opaque). ----
    @SuppressWarnings("unused") // accessed through UNWRITABLE_SINCE
    private long unwritableSince;
    @SuppressWarnings("unused") // accessed through UNWRITABLE
    private boolean unwritable;
    @SuppressWarnings("unused") // accessed through GOODBYE_AT
    private long goodbyeAt;
    @SuppressWarnings("unused") // accessed through PHASE
    private int phase;
    /** A close was held by the veto and is to be looked at again at {@link #heldUntil}. */
    @SuppressWarnings("unused") // accessed through HELD
    private boolean held;
    @SuppressWarnings("unused") // accessed through HELD_UNTIL
    private long heldUntil;

    // ---- Event loop only: the close veto's episode. ----
    /** The action bits being performed right now (set by the handler around each perform). */
    int performing;
    /** Whether a close of this episode was held, since {@link #heldSince}. */
    boolean holding;
    long heldSince;
    /** The action bits of the held closes, performed again at the re-check; and {@link #CARRIED_UNASKED}. */
    private int heldBits;

    // ---- Event loop only: the outbound buffer as the latest stall check saw it. ----
    private boolean stallTaken;
    private int stallMessage;
    private long stallPending;
    private long stallProgress;
    private long stallLastWrite;
    private long stallSince;
    /**
     * When {@link #stalled} was last called, in units of 2^20 ns (1.05 ms), as an int: the low bits of
     * the ticker's time, compared by subtraction (a gap up to 26 days reads right). An int fits the
     * object's padding: the state stays 144 bytes ({@code HandlerLayoutTest}).
     */
    private int stallLookedAt;

    // ---- Worker writes, event loop reads (opaque). ----
    /**
     * How long the action word handed over last waited for the action budget, in units of 2^20 ns
     * (see {@link #deferredBy}); 0 without a budget. Fits the object's padding with {@link #stallLookedAt}:
     * the state stays 144 bytes.
     */
    @SuppressWarnings("unused") // accessed through DEFERRED
    private int deferred;

    // ---- Worker only. ----
    /**
     * The index of the latest point of the write stall's look grid ({@code configuredAt} + k x a quarter
     * of the timeout) the worker looked at (see {@link WriteStallRule}): the low 32 bits of k, compared
     * for equality only. Fits where the guards' next look was: the state stays 144 bytes.
     */
    int stallGridLooked;

    /**
     * The state for a configuration set at {@code now}, carrying over what {@code previous} (or null)
     * knew. The unwritable spell is kept only by a state that watches writability
     * ({@code watchesWritability}: its configuration has {@code maxUnwritable}), and only a state that
     * watched it knows when it began: so a spell carries over from a watching state, and otherwise one
     * under way ({@code unwritableNow}) counts from {@code now}, never from before it was watched,
     * and never from a spell that ended unwatched.
     */
    GuardState(Object inner, long birth, double jitterDraw, long ageDeadline, boolean watchesWritability,
            boolean unwritableNow, long now, GuardState previous, long goodbyeShift) {
        this.inner = inner;
        this.birth = birth;
        this.jitterDraw = jitterDraw;
        this.ageDeadline = ageDeadline;
        this.configuredAt = now;
        if (previous != null) {
            GOODBYE_AT.setOpaque(this, previous.goodbyeAt() + (previous.phase() == LIVING ? 0 : goodbyeShift));
            PHASE.setOpaque(this, previous.phase());
            if (previous.phase() != LIVING) {
                // The close at the grace's end stays due (terminal): the veto's episode goes on, and its holds
                // still add up to at most maxCloseHold. Begun afresh at each switch, the holds of a channel
                // reconfigured more often than that kept it open for good (model seed 12111: still open 2.7 s
                // after the grace's end, holds bounded by 0.5-1.7 s, four switches during the holds).
                // This configuration's veto is asked once all the same ("asks veto before every close"), then
                // the close goes ahead if the episode has reached the bound.
                holding = previous.holding;
                heldSince = previous.heldSince;
                heldBits = holding ? CARRIED_UNASKED : 0;
            }
        }
        if (!watchesWritability) {
            return; // writable as far as this state knows: it is told no writability change
        }
        if (previous != null && previous.unwritable()) { // only a watching state has a spell
            UNWRITABLE_SINCE.setOpaque(this, previous.unwritableSince());
            UNWRITABLE.setOpaque(this, true);
        } else if (unwritableNow) {
            UNWRITABLE_SINCE.setOpaque(this, now);
            UNWRITABLE.setOpaque(this, true);
        }
    }

    // ------------------------------------------------------------------ writability

    /** Any thread: whether the event loop last saw the channel unwritable (opaque). */
    boolean unwritable() {
        return (boolean) UNWRITABLE.getOpaque(this);
    }

    /** Any thread: since when the event loop has seen the channel unwritable (opaque); meaningless if writable. */
    long unwritableSince() {
        return (long) UNWRITABLE_SINCE.getOpaque(this);
    }

    /**
     * Event loop: the channel's writability changed to {@code writable} at {@code now}; told only to a
     * state whose configuration watches writability.
     */
    void writabilityChanged(boolean writable, long now) {
        if (writable) {
            UNWRITABLE.setOpaque(this, false);
        } else if (!unwritable()) {
            UNWRITABLE_SINCE.setOpaque(this, now);
            UNWRITABLE.setOpaque(this, true);
        }
    }

    // ------------------------------------------------------------------ goodbye

    /** Any thread: how far the goodbye is (opaque): {@link #LIVING}, {@link #WARNED} or {@link #SAID}. */
    int phase() {
        return (int) PHASE.getOpaque(this);
    }

    /** Any thread: when the goodbye began (opaque); meaningless while {@link #LIVING}. */
    long goodbyeAt() {
        return (long) GOODBYE_AT.getOpaque(this);
    }

    /** Event loop: the goodbye began at {@code now} ({@link #WARNED} or {@link #SAID}). */
    void goodbyeBegan(int phase, long now) {
        GOODBYE_AT.setOpaque(this, now);
        PHASE.setOpaque(this, phase);
    }

    /** Event loop: the second half of a two-phase goodbye is out. */
    void goodbyeSaid() {
        PHASE.setOpaque(this, SAID);
    }

    // ------------------------------------------------------------------ close veto

    /** Any thread: whether a held close waits for its re-check (opaque). */
    boolean held() {
        return (boolean) HELD.getOpaque(this);
    }

    /** Any thread: when the held close is looked at again (opaque); meaningless unless {@link #held}. */
    long heldUntil() {
        return (long) HELD_UNTIL.getOpaque(this);
    }

    /** Any thread: whether a held close is still held at {@code now}: its re-check is yet to come (opaque). */
    boolean holdsAt(long now) {
        return held() && heldUntil() - now > 0;
    }

    /** Event loop: holds the close being performed until {@code until}; the episode starts now if it is new. */
    void hold(long until, long now) {
        if (!holding) {
            holding = true;
            heldSince = now;
        }
        heldBits |= performing;
        HELD_UNTIL.setOpaque(this, until);
        HELD.setOpaque(this, true);
    }

    /**
     * Event loop: the held closes of {@code bits} are no longer due (their episode ended: the peer answered);
     * with no other close held, the episode ends here, and the next close asks the veto afresh.
     */
    void release(int bits) {
        heldBits &= ~bits;
        if ((heldBits & ~CARRIED_UNASKED) == 0 && held()) {
            HELD.setOpaque(this, false);
            holding = false;
        }
    }

    /** Event loop: the held closes' bits, for their re-check; no longer held. */
    int takeHeld() {
        HELD.setOpaque(this, false);
        int bits = heldBits & ~CARRIED_UNASKED;
        heldBits &= CARRIED_UNASKED;
        return bits;
    }

    /**
     * Event loop: whether the holds of this episode reached {@code limit} at {@code now}, so that its
     * close goes ahead without asking: not before this configuration's veto was asked once.
     */
    boolean holdsReached(long limit, long now) {
        return holding && (heldBits & CARRIED_UNASKED) == 0 && now - heldSince >= limit;
    }

    /** Event loop: this configuration's veto is being asked. */
    void vetoAsked() {
        heldBits &= ~CARRIED_UNASKED;
    }

    // ------------------------------------------------------------------ write stall (event loop)

    /**
     * Event loop: whether no byte has left the outbound buffer for {@code stallNanos}, judged from
     * what this method saw at its earlier calls: bytes leaving show as a message completed (the
     * handler's last write stamp), another message at the head, progress on the head message, or fewer
     * bytes pending, here or at a tracked write between two calls ({@link #beforeWrite}); more bytes
     * queued by the application are not progress. The first call of a stall only takes the
     * picture, so a stall is measured from a picture, never from a guess. So does a call a whole
     * {@code stallNanos} or more after the previous call, not counting the time the worker held this
     * call's look back for the action budget ({@link #deferredBy}): the worker hands the looks over every
     * quarter of it (during a veto's hold too), so the event loop ran them at least three quarters late
     * (a GC pause, a thread without a core); its own writes stopped with it, and the time it did not run
     * is not the peer's. A look the budget held back is late by the worker's choice, not the loop's: taken
     * for a pause, every look of a saturated budget would take a new picture and the stall would never
     * close (the interaction model's family 101). The gap is measured between calls, not from the
     * picture: a close the veto holds is looked at every quarter and keeps its picture, however long the
     * hold.
     */
    boolean stalled(int message, long pending, long progress, long lastWrite, long now, long stallNanos) {
        int lookedAt = (int) (now >> 20);
        // At least the timeout in whole units plus one (rounding), and two: tiny timeouts are not read as pauses.
        int pause = (int) Math.min(Math.max(2, (stallNanos >> 20) + 1), Integer.MAX_VALUE);
        boolean paused = stallTaken && lookedAt - stallLookedAt - (int) DEFERRED.getOpaque(this) >= pause;
        stallLookedAt = lookedAt;
        if (pending <= 0) {
            STALL_TAKEN.setOpaque(this, false);
            return false;
        }
        boolean moved = !stallTaken || paused || message != stallMessage || progress != stallProgress
                || lastWrite != stallLastWrite || pending < stallPending;
        stallPending = pending;
        if (moved) {
            STALL_TAKEN.setOpaque(this, true);
            stallMessage = message;
            stallProgress = progress;
            stallLastWrite = lastWrite;
            STALL_SINCE.setOpaque(this, now);
            return false;
        }
        return now - stallSince >= stallNanos;
    }

    /**
     * Worker, under an action budget: the action word it hands over now waited {@code nanos} for a token
     * (0: paid at once), a delay {@link #stalled} does not count as a pause of the event loop. Written before
     * the hand-off's push, so the run that performs the word sees it. A word decided and handed over after
     * that run took its word and before it read this overwrites it: the run then sees 0 (paid at once), and may
     * take a pause where there was none (a new picture: a later close, never an earlier one), or a delay
     * no longer than the time since it took its word, which hides a pause of the loop no longer than that.
     */
    void deferredBy(long nanos) {
        DEFERRED.setOpaque(this, (int) Math.min(nanos >> 20, Integer.MAX_VALUE));
    }

    /**
     * Event loop: a tracked write is about to join {@code channel}'s outbound buffer (see
     * {@link HeartbeatHandler#onWrite}; under a write stall only). A buffer that holds fewer bytes than at
     * the latest {@link #stalled} call lost bytes since: the next call would see it, unless this write puts
     * as many back first. Bytes that left unseen (no listener stamps a write made before writes were
     * tracked, or one that did not pass this handler), then a write of the same message and size, would
     * leave the picture as it was, and the new bytes would be measured from the old ones' picture (the
     * interaction model's family 107). So the picture is dropped here, and the next call takes a new one,
     * as it would have on seeing the bytes leave. Reads the buffer only while a picture is held: nothing
     * allocated, two volatile reads (the channel's buffer, its pending count).
     */
    void beforeWrite(Channel channel) {
        if (stallTaken) {
            ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
            if (buf != null && buf.totalPendingWriteBytes() < stallPending) {
                STALL_TAKEN.setOpaque(this, false);
            }
        }
    }

    /**
     * Worker: whether the event loop holds a picture of a stall (opaque), taken at {@link #stallPictureAt};
     * the worker looks again when it is a timeout old. Either value may be a picture later than the
     * other's: a look at the wrong time is one look more, never a close (the event loop decides).
     */
    boolean stallPictured() {
        return (boolean) STALL_TAKEN.getOpaque(this);
    }

    /** Worker: when the event loop took its stall picture (opaque); meaningless without {@link #stallPictured}. */
    long stallPictureAt() {
        return (long) STALL_SINCE.getOpaque(this);
    }

    /** Event loop: how long the stall has lasted, as {@link #stalled} measured it. */
    long stallNanos(long now) {
        return stallTaken ? now - stallSince : 0;
    }
}
