/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseReason;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * Write stall ({@code writeStall}): bytes wait in the outbound buffer and none of them left for the
 * timeout. The worker looks {@link Guards#STALL_LOOKS} times per timeout, on a grid from the
 * configuration's start, and hands a look to the event loop while bytes are pending; the event loop
 * compares the outbound buffer with its last picture ({@link GuardState#stalled}; a tracked write
 * between two looks compares the pending bytes too, {@link GuardState#beforeWrite}) and closes for
 * WRITE_STALL. The goodbye is written but not waited for: it queues behind the bytes the peer does
 * not read.
 */
public final class WriteStallRule extends Rule {

    public static final WriteStallRule INSTANCE = new WriteStallRule();

    private WriteStallRule() {
    }

    @Override
    public int bits() {
        return ActionBits.STALL;
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        // The looks keep to a fixed grid from the configuration's start, whatever other rules' judgements
        // come between: a picture taken at a grid point is judged exactly a timeout later, at a grid point,
        // so a stall is closed at most a quarter of the timeout after its due time (a grid of "now + a
        // quarter" drifts with the other rules' looks, and the close could come half a timeout late).
        GuardState g = h.guardState();
        Guards guards = bound.config.guards;
        long quarter = guards.stallLookNanos();
        long k = (now - g.configuredAt) / quarter; // the latest grid point at or before now
        h.lookAt(g.configuredAt + (k + 1) * quarter);
        boolean gridPoint = (int) k != g.stallGridLooked; // else a judgement for another rule
        g.stallGridLooked = (int) k;
        boolean decisive = false;
        if (g.stallPictured()) {
            // The picture was taken at a look that came a little after its grid point (a tick, the coalescing
            // window), so the grid point a timeout later is a little short of a timeout after the picture: the
            // stall is decided exactly when its picture is a timeout old, not a quarter later.
            long due = g.stallPictureAt() + guards.writeStallNanos;
            if (due - now > 0) {
                h.lookAt(due);
            } else {
                decisive = true;
            }
        }
        return (gridPoint || decisive) && Guards.pendingBytes(h.ctx.channel()) > 0 ? ActionBits.STALL : 0;
    }

    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        GuardState g = h.guardState();
        ChannelOutboundBuffer buf = ctx.channel().unsafe().outboundBuffer();
        if (buf != null && g.stalled(System.identityHashCode(buf.current()), buf.totalPendingWriteBytes(),
                buf.currentProgress(), h.lastWriteStamp(), now, cfg.guards.writeStallNanos)) {
            CloseSequence.closeWithoutWaiting(h, ctx, CloseReason.WRITE_STALL, g.stallNanos(now));
        }
    }
}
