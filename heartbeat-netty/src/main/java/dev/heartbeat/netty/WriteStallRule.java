/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * Write stall ({@code writeStall}): bytes wait in the outbound buffer and none of them left for the
 * timeout. The worker looks {@link Guards#STALL_LOOKS} times per timeout and hands a look to the
 * event loop while bytes are pending; the event loop compares the outbound buffer with its last
 * picture ({@link GuardState#stalled}) and closes for WRITE_STALL. The goodbye is written but not
 * waited for: it queues behind the bytes the peer does not read.
 */
final class WriteStallRule extends Rule {

    static final WriteStallRule INSTANCE = new WriteStallRule();

    private WriteStallRule() {
    }

    @Override
    int bits() {
        return ActionBits.STALL;
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        h.lookAt(now + bound.config.guards.stallLookNanos());
        return Guards.pendingBytes(h.ctx.channel()) > 0 ? ActionBits.STALL : 0;
    }

    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        GuardState g = h.guardState();
        ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
        if (buf != null && g.stalled(System.identityHashCode(buf.current()), buf.totalPendingWriteBytes(),
                buf.currentProgress(), h.lastWriteOpaque(), now, cfg.guards.writeStallNanos)) {
            CloseSequence.closeWithoutWaiting(h, ctx, CloseReason.WRITE_STALL, g.stallNanos(now));
        }
    }
}
