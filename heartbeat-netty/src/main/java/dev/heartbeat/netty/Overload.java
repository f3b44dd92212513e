/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

/**
 * Overload (Envoy's {@code reduce_timeouts}): while {@code HeartbeatMonitor.reduceIdleTimeouts(f)}
 * has a factor below 1, every {@code closeWhenIdle} channel is closed once idle for {@code f} times
 * its timeout, on the same wheel entry: the worker finds the scaled deadline from the stamps, and the
 * event loop checks it again before it closes. The drop-in {@code events()} policy and the ping
 * policy are not scaled: their timing is a promise (IdleStateHandler's, or the peer's keep-alive).
 * Stateless: the factor is the monitor's.
 */
final class Overload {

    /** A close of an idle channel under a reduced timeout. */
    static final int CLOSE = 1 << 21;

    private Overload() {
    }

    /** Whether {@code cfg} is scaled under overload. */
    static boolean applies(HeartbeatConfig cfg) {
        return cfg.policy instanceof ClosePolicy;
    }

    /** Worker or event loop: the kind idle for {@code factor} of its timeout at {@code now}, or -1. */
    static int idleKind(HeartbeatHandler h, HeartbeatConfig cfg, double factor, long now) {
        boolean busy = h.readingOpaque();
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            long timeout = scaled(IdlePolicy.timeout(cfg, kind), factor);
            if (timeout > 0 && !(busy && kind != CheckOrder.WRITER)
                    && now - IdlePolicy.lastActivity(h, kind) >= timeout) {
                return kind;
            }
        }
        return -1;
    }

    /** Worker: when the earliest scaled deadline comes, from the stamps; {@code otherwise} if later or none. */
    static long nextDeadline(HeartbeatHandler h, HeartbeatConfig cfg, double factor, long otherwise) {
        long next = otherwise;
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            long timeout = scaled(IdlePolicy.timeout(cfg, kind), factor);
            if (timeout > 0) {
                next = HandlerPolicy.earliest(next, IdlePolicy.lastActivity(h, kind) + timeout);
            }
        }
        return next;
    }

    /** Event loop: closes the channel if it is still idle under the factor now in force. */
    static void perform(HeartbeatHandler h, io.netty.channel.ChannelHandlerContext ctx, HeartbeatConfig cfg,
            double factor, long now) {
        int kind = factor < 1 ? idleKind(h, cfg, factor, now) : -1;
        if (kind < 0) {
            return; // traffic since, or the overload is over
        }
        CloseReason reason = kind == CheckOrder.READER ? CloseReason.READER_IDLE
                : kind == CheckOrder.WRITER ? CloseReason.WRITER_IDLE : CloseReason.ALL_IDLE;
        if (h.announceClose(ctx, reason, now - IdlePolicy.lastActivity(h, kind))) {
            h.monitor().overloadClose(); // counted when it goes ahead: a close the veto holds is not one yet
            h.closeWithGoodbye(ctx, reason);
        }
    }

    private static long scaled(long timeout, double factor) {
        return timeout == 0 ? 0 : Math.max(1, (long) (timeout * factor));
    }
}
