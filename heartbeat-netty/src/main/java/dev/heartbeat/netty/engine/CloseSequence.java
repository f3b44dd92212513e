/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseDecision;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatCloseEvent;
import dev.heartbeat.netty.Probe;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * The one close sequence every close goes through, whichever rule asks (idle, ping timeout, max age,
 * write stall, unwritable, drain, overload; {@code PingPolicing}'s goodbye wait too):
 * <ol>
 * <li>the close veto ({@code beforeClose}), if configured: a hold is bounded by {@code maxCloseHold}
 *     per episode and asked again when each extension ends ({@link #consultVeto}, {@link #judgeHold},
 *     {@link #lookForAHold}); DRAIN and PING_ABUSE are not asked;</li>
 * <li>the close event with its reason, counted ({@link #announce}); a handler that closes, removes or
 *     reconfigures in reaction stops the sequence;</li>
 * <li>the goodbye with the reason, through the configuration's goodbye probe (GOAWAY, WebSocket Close,
 *     a line), at most once per channel whoever asks ({@link #goodbyeOnce});</li>
 * <li>the close: at once, or once the goodbye is written and at most
 *     {@link #GOODBYE_WRITE_WAIT_NANOS} later ({@link #closeAfter}); the entry leaves the wheel now.</li>
 * </ol>
 * Stateless: the per-channel state is the handler's (the goodbye bit, its lifecycle) and the
 * {@link GuardState}'s (the veto's episode).
 */
public final class CloseSequence {

    /** {@link #consultVeto}: the close goes ahead. */
    static final int VETO_PROCEED = 0;
    /** {@link #consultVeto}: the close is held until its re-check. */
    static final int VETO_HELD = 1;
    /** {@link #consultVeto}: the close goes ahead at once (no goodbye, no grace). */
    static final int VETO_CLOSE_NOW = 2;

    /**
     * How soon after handing an action to a configuration with a close veto the worker looks for the
     * hold the veto may have asked for ({@link #lookForAHold}): an extension is asked again at its
     * end, give or take this.
     */
    public static final long HOLD_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How soon the worker looks again at a held close whose re-check it handed over. */
    static final long RECHECK_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How long a goodbye write may take before the channel is closed anyway. */
    public static final long GOODBYE_WRITE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    private CloseSequence() {
    }

    // ------------------------------------------------------------------ worker: the veto's holds

    /** Worker: whether a held close is due for its re-check at {@code now} ({@link ActionBits#RECHECK}). */
    static int judgeHold(HeartbeatHandler h, Plan cfg, long now) {
        GuardState g;
        if (cfg.guards == null || cfg.guards.veto == null || (g = h.guardState()) == null || !g.held()) {
            return 0;
        }
        long until = g.heldUntil();
        if (now - until >= 0) {
            h.lookAt(now + RECHECK_RETRY_NANOS);
            return ActionBits.RECHECK;
        }
        h.lookAt(until);
        return 0;
    }

    /**
     * Worker, after a judgement that hands actions to a configuration with a close veto: the veto
     * answers on the event loop, and a hold it asks for may end before the entry's next look (an
     * extension of 1 s under a 10 s idle timeout). So the entry looks again shortly
     * ({@link #HOLD_LOOK_NANOS}), when it finds the hold and re-arms for its end; a close held until
     * later needs no look. A hand-off that waits for the action budget longer than that has not asked the
     * veto at that look: the judgement looks again while the hand-off waits (the model's family 1, seed 28).
     */
    static void lookForAHold(HeartbeatHandler h, Plan cfg, long now) {
        if (cfg.guards == null || cfg.guards.veto == null) {
            return;
        }
        // A hold still running needs no look: its end is the entry's next; one that ended is being re-checked,
        // and the veto may hold it again.
        GuardState g = h.guardState();
        if (g != null && !g.holdsAt(now)) {
            h.lookAt(now + HOLD_LOOK_NANOS);
        }
    }

    // ------------------------------------------------------------------ event loop

    /** Event loop: the bits of the closes held for their re-check, to be performed again. */
    static int takeHeld(HeartbeatHandler h) {
        GuardState g = h.guardState();
        return g == null ? 0 : g.takeHeld();
    }

    /**
     * Event loop: asks the configuration's {@link CloseVeto}, if it has one, about a close for
     * {@code reason} (never for DRAIN or PING_ABUSE); a close already held waits for its re-check
     * without asking, and one held for the bound goes ahead without asking.
     *
     * @return {@link #VETO_PROCEED}, {@link #VETO_HELD} or {@link #VETO_CLOSE_NOW}
     */
    static int consultVeto(HeartbeatHandler h, ChannelHandlerContext ctx, CloseReason reason, long now) {
        BoundConfig bound = h.bound();
        Guards guards = bound.config.guards;
        GuardState g;
        if (guards == null || guards.veto == null || reason == CloseReason.DRAIN
                || reason == CloseReason.PING_ABUSE || (g = h.guardState()) == null) {
            return VETO_PROCEED;
        }
        if (g.held()) {
            g.hold(g.heldUntil(), now); // joins the held closes: one re-check for all
            return VETO_HELD;
        }
        long limit = guards.maxHoldNanos;
        if (g.holdsReached(limit, now)) {
            bound.monitor.closeHoldExpired();
            return VETO_PROCEED; // held for the bound: a dead peer is not kept forever
        }
        g.vetoAsked();
        CloseDecision decision;
        try {
            decision = guards.veto.beforeClose(ctx.channel(), reason);
        } catch (Throwable t) {
            bound.monitor.actionFailed(h, t);
            return VETO_PROCEED;
        }
        if (decision == null || ApiAccess.api().extendNanos(decision) == 0) {
            return decision != null && ApiAccess.api().closesNow(decision) ? VETO_CLOSE_NOW : VETO_PROCEED;
        }
        long since = g.holding ? g.heldSince : now;
        g.hold(Rule.earliest(now + ApiAccess.api().extendNanos(decision), since + limit), now);
        bound.monitor.closeHeld();
        return VETO_HELD;
    }

    /**
     * Event loop: asks the veto (if {@code askVeto}; not when the caller asked it already), then
     * counts a close for {@code reason}, logs it at DEBUG and fires its {@link HeartbeatCloseEvent}
     * down the pipeline.
     *
     * @return whether the close should still go ahead (held, or a handler closed, removed or
     *     reconfigured in reaction to the event: not)
     */
    static boolean announce(HeartbeatHandler h, ChannelHandlerContext ctx, CloseReason reason, long idleNanos,
            boolean askVeto) {
        int serial = h.serial();
        BoundConfig bound = h.bound();
        if (askVeto && consultVeto(h, ctx, reason, bound.ticker.nanoTime()) == VETO_HELD) {
            return false; // held: the re-check performs this close again
        }
        if (!h.canStillAct(serial)) {
            return false; // the veto closed, removed or reconfigured
        }
        bound.monitor.closing(h, reason, idleNanos);
        ctx.fireUserEventTriggered(HeartbeatCloseEvent.of(reason));
        return h.canStillAct(serial);
    }

    /** Event loop: the whole sequence for {@code reason}, waiting (capped) for the goodbye's write. */
    static void close(HeartbeatHandler h, ChannelHandlerContext ctx, CloseReason reason, long idleNanos) {
        if (announce(h, ctx, reason, idleNanos, true)) {
            closeWithGoodbye(h, ctx, reason);
        }
    }

    /**
     * Event loop: the whole sequence for {@code reason}, for a channel whose writes do not drain
     * (write stall, unwritable): the goodbye is written but not waited for, as it queues behind the
     * bytes the peer does not read.
     */
    static void closeWithoutWaiting(HeartbeatHandler h, ChannelHandlerContext ctx, CloseReason reason,
            long idleNanos) {
        if (announce(h, ctx, reason, idleNanos, true)) {
            goodbyeOnce(h, ctx, reason);
            closeNow(h, ctx);
        }
    }

    /**
     * Event loop: this channel's drain slot came: the goodbye event, the close event, the protocol
     * goodbye, and the close once the goodbye is written. A channel that was told its goodbye already
     * (max age, in its grace) is not told again; the drain's window still bounds its close.
     */
    static void drain(HeartbeatHandler h, ChannelHandlerContext ctx) {
        int serial = h.serial();
        if (!h.goodbyeSaid()) {
            ctx.fireUserEventTriggered(ApiAccess.api().goodbyeEvent(CloseReason.DRAIN, Duration.ZERO));
        }
        if (h.canStillAct(serial) && announce(h, ctx, CloseReason.DRAIN, 0, false)) {
            closeWithGoodbye(h, ctx, CloseReason.DRAIN); // (else the application closed, removed or reconfigured)
        }
    }

    /**
     * Event loop: the end of the sequence, for a close announced for {@code reason}: the protocol's
     * goodbye with the reason ({@link #goodbyeOnce}), and the close once it is written, at most
     * {@link #GOODBYE_WRITE_WAIT_NANOS} later.
     */
    static void closeWithGoodbye(HeartbeatHandler h, ChannelHandlerContext ctx, CloseReason reason) {
        closeAfter(h, ctx, goodbyeOnce(h, ctx, reason));
    }

    /**
     * Event loop: writes and flushes the configuration's goodbye probe's goodbye for {@code reason}
     * (HTTP/2 GOAWAY, WebSocket Close, a line: see {@link Probe#newGoodbye}), unless the channel has
     * none or was told one already: a goodbye is said at most once per channel, whoever closes.
     *
     * @return the goodbye's write, or null if none was written
     */
    static ChannelFuture goodbyeOnce(HeartbeatHandler h, ChannelHandlerContext ctx, CloseReason reason) {
        BoundConfig bound = h.bound();
        Guards guards = bound.config.guards;
        if (guards == null || guards.goodbye == null || h.goodbyeSaid()) {
            return null;
        }
        h.goodbyeBegun();
        GuardState g = h.guardState();
        if (g != null) {
            g.goodbyeBegan(GuardState.SAID, bound.ticker.nanoTime());
        }
        return sayGoodbye(h, ctx, guards.goodbye, reason);
    }

    /** Event loop: writes and flushes {@code probe}'s goodbye for {@code reason}; null if there is none. */
    static ChannelFuture sayGoodbye(HeartbeatHandler h, ChannelHandlerContext ctx, Probe probe, CloseReason reason) {
        if (probe == null) {
            return null;
        }
        Object bye;
        try {
            bye = probe.newGoodbye(ctx, reason);
        } catch (Throwable t) {
            h.monitor().actionFailed(h, t);
            return null;
        }
        return bye == null ? null : ctx.writeAndFlush(bye);
    }

    /** Event loop: closes once, as ReadTimeoutHandler does: the entry leaves the wheel now, not at channelInactive. */
    static void closeNow(HeartbeatHandler h, ChannelHandlerContext ctx) {
        h.retire();
        ctx.close();
    }

    /**
     * Event loop: closes once {@code written} (a goodbye; null for none) is written, and at most
     * {@link #GOODBYE_WRITE_WAIT_NANOS} later if its write hangs (a peer that reads nothing).
     * The entry leaves the wheel now, as with {@link #closeNow}.
     */
    static void closeAfter(HeartbeatHandler h, ChannelHandlerContext ctx, ChannelFuture written) {
        h.retire();
        if (written == null || written.isDone()) {
            ctx.close();
        } else {
            closeWhenWritten(ctx, written);
        }
    }

    /**
     * Event loop: closes {@code ctx}'s channel once {@code written} (a goodbye's write) completes,
     * and at most {@link #GOODBYE_WRITE_WAIT_NANOS} later if the write hangs (a peer that reads
     * nothing). One scheduled task per close whose goodbye is still being written (a goodbye written at
     * once needs none: {@link #closeAfter}), cancelled when the write completes, so the loop's
     * scheduled-task queue does not keep it for the rest of its second.
     */
    public static void closeWhenWritten(ChannelHandlerContext ctx, ChannelFuture written) {
        if (written.isDone()) {
            ctx.close(); // written already (or failed): no bound needed
            return;
        }
        GoodbyeClose close = new GoodbyeClose(ctx);
        close.bound = ctx.executor().schedule(close, GOODBYE_WRITE_WAIT_NANOS, TimeUnit.NANOSECONDS);
        written.addListener(close); // after the bound is set: a write already done runs this at once
    }

    /**
     * The close of {@link #closeWhenWritten}: the goodbye write's listener and the bound's task in one
     * object (two lambdas before).
     */
    private static final class GoodbyeClose implements ChannelFutureListener, Runnable {

        private final ChannelHandlerContext ctx;
        /** Event loop only: the bound's task, cancelled once the write completes. */
        ScheduledFuture<?> bound;

        GoodbyeClose(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void operationComplete(ChannelFuture future) {
            ScheduledFuture<?> b = bound;
            if (b != null) {
                b.cancel(false);
            }
            ctx.close();
        }

        @Override
        public void run() {
            ctx.close();
        }
    }
}
