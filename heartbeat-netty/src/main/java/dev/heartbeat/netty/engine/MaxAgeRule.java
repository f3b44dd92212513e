/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseReason;
import java.time.Duration;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;

/**
 * Maximum connection age ({@code maxAge}, with jitter, grace and the protocol's goodbye, in one or two
 * phases): at its age the channel is told its goodbye, and closed when the grace ends. Part of every
 * configuration with guard state, because a goodbye's grace, once announced, outlives a switch to a
 * configuration without a maximum age (a terminal decision). State: the {@link GuardState}.
 */
public final class MaxAgeRule extends Rule {

    public static final MaxAgeRule INSTANCE = new MaxAgeRule();

    private MaxAgeRule() {
    }

    @Override
    public int bits() {
        return ActionBits.AGE;
    }

    @Override
    long firstLook(HeartbeatHandler h, Plan cfg, long first, long now) {
        GuardState g = h.guardState();
        Guards guards = Guards.of(cfg);
        if (g == null || !(guards.maxAgeNanos > 0 || g.phase() != GuardState.LIVING)) {
            return first;
        }
        int phase = g.phase();
        return earliest(first, phase == GuardState.LIVING ? g.ageDeadline
                : g.goodbyeAt() + (phase == GuardState.WARNED ? guards.warningWaitNanos() : guards.graceNanos));
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        GuardState g = h.guardState();
        Guards guards = Guards.of(bound.config);
        if (g == null || !(guards.maxAgeNanos > 0 || g.phase() != GuardState.LIVING)) {
            return 0;
        }
        int phase = g.phase();
        if (phase == GuardState.LIVING) {
            // Due while another close is held: handed all the same, it joins the held closes (consultVeto), so its
            // re-check performs it in the same episode and maxCloseHold bounds it from the episode's first hold.
            // (Not handed, it waited for a look after the hold ended, and began an episode of its own: seed 577.)
            if (now - g.ageDeadline >= 0) {
                h.lookAt(now + retryNanos(guards)); // by then the event loop has begun the goodbye
                return ActionBits.AGE;
            }
            h.lookAt(g.ageDeadline);
            return 0;
        }
        long end = g.goodbyeAt() + guards.graceNanos;
        long step = phase == GuardState.WARNED ? g.goodbyeAt() + guards.warningWaitNanos() : end;
        if (end - now > 0) {
            h.lookAt(end);
        }
        if (now - step >= 0) {
            h.lookAt(now + retryNanos(guards));
            return ActionBits.AGE;
        }
        h.lookAt(step);
        return 0;
    }

    /** How soon the worker looks again after handing the event loop a goodbye step. */
    private static long retryNanos(Guards guards) {
        return guards.graceNanos == 0 ? CloseSequence.GOODBYE_WRITE_WAIT_NANOS
                : guards.twoPhase ? guards.warningWaitNanos() : guards.graceNanos;
    }

    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        GuardState g = h.guardState();
        Guards guards = Guards.of(cfg);
        int phase = g.phase();
        if (phase == GuardState.LIVING) {
            if (now - g.ageDeadline < 0) {
                return;
            }
            int serial = h.serial();
            int veto = CloseSequence.consultVeto(h, ctx, CloseReason.MAX_AGE, now);
            if (veto == CloseSequence.VETO_HELD || !h.canStillAct(serial)) {
                return; // held for a while; or the veto closed, removed or reconfigured
            }
            if (veto == CloseSequence.VETO_CLOSE_NOW || h.goodbyeSaid()) {
                // Told its goodbye under an earlier configuration (whose grace a switch to one without
                // guards did not keep): not told again; the age closes it now.
                if (CloseSequence.announce(h, ctx, CloseReason.MAX_AGE, now - g.birth, false)) {
                    CloseSequence.closeNow(h, ctx);
                }
                return;
            }
            ctx.fireUserEventTriggered(ApiAccess.api().goodbyeEvent(CloseReason.MAX_AGE,
                    Duration.ofNanos(guards.graceNanos)));
            if (!h.canStillAct(serial)) {
                return; // the application closed, removed or reconfigured in reaction
            }
            if (guards.twoPhase && warn(h, ctx, guards, g, now)) {
                return;
            }
            h.goodbyeBegun(); // the grace runs whether or not the probe has words for it
            g.goodbyeBegan(GuardState.SAID, now);
            ChannelFuture written = CloseSequence.sayGoodbye(h, ctx, guards.goodbye, CloseReason.MAX_AGE);
            if (guards.graceNanos == 0 && CloseSequence.announce(h, ctx, CloseReason.MAX_AGE, now - g.birth, false)) {
                CloseSequence.closeAfter(h, ctx, written); // (the veto was asked before the goodbye)
            }
            return;
        }
        long at = g.goodbyeAt();
        if (now - (at + guards.graceNanos) >= 0) {
            if (CloseSequence.announce(h, ctx, CloseReason.MAX_AGE, now - g.birth, true)) {
                CloseSequence.closeNow(h, ctx);
            }
        } else if (phase == GuardState.WARNED && now - (at + guards.warningWaitNanos()) >= 0) {
            finish(h, ctx, guards, g); // no answer to the goodbye's ping in time: the final half anyway
        }
    }

    /** Event loop: the first half of a two-phase goodbye; false if the probe has none to give now. */
    private static boolean warn(HeartbeatHandler h, ChannelHandlerContext ctx, Guards guards, GuardState g, long now) {
        Object warning;
        Object ping;
        try {
            warning = guards.goodbye.newGoodbyeWarning(ctx, CloseReason.MAX_AGE);
            if (warning == null) {
                return false;
            }
            ping = guards.goodbye.newPing(ctx, Guards.GOODBYE_TOKEN);
        } catch (Throwable t) {
            h.monitor().actionFailed(h, t);
            return false;
        }
        h.goodbyeBegun();
        g.goodbyeBegan(GuardState.WARNED, now);
        ctx.write(warning);
        ctx.writeAndFlush(ping);
        return true;
    }

    /** Event loop: the final half of a two-phase goodbye. */
    private static void finish(HeartbeatHandler h, ChannelHandlerContext ctx, Guards guards, GuardState g) {
        g.goodbyeSaid();
        CloseSequence.sayGoodbye(h, ctx, guards.goodbye, CloseReason.MAX_AGE);
    }

    /**
     * Event loop, on the read path while a two-phase goodbye waits: consumes the answer to the
     * goodbye's ping and sends the final half. The answer proves the peer has seen the first half, so
     * every stream it opened before is known, as gRPC's server reasons.
     *
     * @return whether {@code msg} was that answer (released here)
     */
    @Override
    boolean onInbound(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, Object msg) {
        GuardState g = h.guardState();
        Guards guards = Guards.of(cfg);
        ApiAccess api = ApiAccess.api();
        if (g == null || g.phase() != GuardState.WARNED || guards.goodbye == null || !api.isAnswer(guards.goodbye, msg)
                || api.tokenOf(guards.goodbye, msg) != Guards.GOODBYE_TOKEN) {
            return false;
        }
        ReferenceCountUtil.release(msg);
        finish(h, ctx, guards, g);
        return true;
    }
}
