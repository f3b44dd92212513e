/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseReason;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;

/**
 * Maximum unwritable time ({@code maxUnwritable}): the channel has stayed unwritable (its outbound
 * buffer above the high water mark) for the timeout. The event loop stamps the spell's start
 * ({@link GuardState#unwritableSince}); the worker looks at its deadline; the event loop checks again
 * and closes for UNWRITABLE, writing the goodbye without waiting for it.
 */
public final class UnwritableRule extends Rule {

    public static final UnwritableRule INSTANCE = new UnwritableRule();

    private UnwritableRule() {
    }

    @Override
    public int bits() {
        return ActionBits.UNWRITABLE;
    }

    @Override
    long firstLook(HeartbeatHandler h, Plan cfg, long first, long now) {
        GuardState g = h.guardState();
        return g != null && g.unwritable() ? earliest(first, g.unwritableSince() + cfg.guards.maxUnwritableNanos)
                : first;
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        GuardState g = h.guardState();
        long max = bound.config.guards.maxUnwritableNanos;
        if (!g.unwritable()) {
            // A channel that turns unwritable after now is stamped by its event loop, and its
            // deadline (stamp + timeout) is after this next look: found exactly in time.
            h.lookAt(now + max);
            return 0;
        }
        long due = g.unwritableSince() + max;
        if (now - due < 0) {
            h.lookAt(due);
            return 0;
        }
        h.lookAt(now + Math.max(1, max / 4));
        return h.ctx.channel().isWritable() ? 0 : ActionBits.UNWRITABLE;
    }

    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        GuardState g = h.guardState();
        Channel channel = ctx.channel();
        if (g.unwritable() && !channel.isWritable() && now - g.unwritableSince() >= cfg.guards.maxUnwritableNanos) {
            CloseSequence.closeWithoutWaiting(h, ctx, CloseReason.UNWRITABLE, now - g.unwritableSince());
        }
    }
}
