/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.WriteTimeoutException;

/**
 * {@link HeartbeatConfig#closeWhenIdle()}: closes an idle channel for the first idle kind in
 * {@code IdleStateHandler}'s order, after its close event; with {@code withTimeoutExceptions()} it
 * fires {@code ReadTimeoutException} or {@code WriteTimeoutException} first, as
 * {@code ReadTimeoutHandler} does. Judging is {@link IdlePolicy}'s. Stateless: two instances.
 */
public final class ClosePolicy extends IdlePolicy {

    public static final ClosePolicy QUIETLY = new ClosePolicy(false);
    public static final ClosePolicy WITH_EXCEPTION = new ClosePolicy(true);

    private final boolean withException;

    private ClosePolicy(boolean withException) {
        this.withException = withException;
    }

    @Override
    public HeartbeatConfig.Policy kind() {
        return withException ? HeartbeatConfig.Policy.CLOSE_WITH_EXCEPTION : HeartbeatConfig.Policy.CLOSE;
    }

    /** Closes for the first idle kind of {@code bits}, in IdleStateHandler's order, if any is still idle. */
    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        int order = order(bits);
        int kind = -1;
        for (int i = 0; i < 3 && kind < 0; i++) {
            int k = CheckOrder.kindAt(order, i);
            if (idle(h, k, cfg, bits, now)) {
                kind = k;
            }
        }
        if (kind < 0) {
            return; // activity since the worker's verdict: its next check will look again
        }
        CloseReason reason = kind == CheckOrder.READER ? CloseReason.READER_IDLE
                : kind == CheckOrder.WRITER ? CloseReason.WRITER_IDLE : CloseReason.ALL_IDLE;
        int serial = h.serial();
        if (!CloseSequence.announce(h, ctx, reason, now - CheckOrder.lastActivity(h, kind), true)) {
            return;
        }
        if (withException) {
            ctx.fireExceptionCaught(kind == CheckOrder.WRITER
                    ? WriteTimeoutException.INSTANCE : ReadTimeoutException.INSTANCE);
        }
        if (!h.canStillAct(serial)) {
            return; // a handler reacted to the event or exception (closed, removed or reconfigured): done
        }
        CloseSequence.closeWithGoodbye(h, ctx, reason);
    }
}
