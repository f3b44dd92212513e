/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatConfig;
import io.netty.channel.ChannelHandlerContext;

/**
 * Overload (Envoy's {@code reduce_timeouts}): while {@code HeartbeatMonitor.reduceIdleTimeouts(f)}
 * has a factor below 1, every {@code closeWhenIdle} channel is closed once idle for {@code f} times
 * its timeout, on the same wheel entry: the worker finds the scaled deadline from the stamps, and the
 * event loop checks it again before it closes. Part of the {@code closeWhenIdle} configurations only:
 * the drop-in {@code events()} policy and the ping policy are not scaled, their timing is a promise
 * (IdleStateHandler's, or the peer's keep-alive). Stateless: the factor is the monitor's.
 */
public final class OverloadRule extends Rule {

    public static final OverloadRule INSTANCE = new OverloadRule();

    private OverloadRule() {
    }

    /** Whether {@code cfg} is scaled under overload. */
    static boolean applies(Plan cfg) {
        HeartbeatConfig.Policy kind = cfg.policy.kind();
        return kind == HeartbeatConfig.Policy.CLOSE || kind == HeartbeatConfig.Policy.CLOSE_WITH_EXCEPTION;
    }

    @Override
    public int bits() {
        return ActionBits.OVERLOAD;
    }

    @Override
    long firstLook(HeartbeatHandler h, Plan cfg, long first, long now) {
        double factor = h.monitor().overloadFactor();
        return factor < 1 ? nextDeadline(h, cfg, factor, first) : first; // started or switched during an overload
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        double factor = bound.monitor.overloadFactor();
        if (factor >= 1) {
            return 0; // the monitor moves the entries when an overload begins
        }
        Plan cfg = bound.config;
        // Times wrap around (they are compared by subtraction), so "no deadline" is a time, not a sentinel:
        // Long.MAX_VALUE would read as the past to a ticker near Long.MIN_VALUE.
        long over = nextDeadline(h, cfg, factor, now + HeartbeatConfig.MAX_TIMEOUT.toNanos());
        if (over - now > 0) {
            h.lookAt(over);
            return 0;
        }
        // Idle beyond the scaled timeout: the close is decided. The next look is for its outcome: when
        // a hold of the veto ends, or shortly (the event loop found traffic, or closed). Never a
        // deadline in the past, which would expire every cycle. Traffic the event loop found is no
        // earlier than now, so the scaled deadline it set for a kind due now is at least that kind's
        // scaled timeout away: a look then is in time for it, where the retry alone came 100 ms after a
        // scaled 8 ms (seed 1678); a kind not due yet keeps its own deadline, which traffic only puts off
        // (seed 8116: a read raced an all-idle close of 79 ms, and the writer-idle one was due first).
        GuardState g = h.guardState();
        long soon = earliest(now + CloseSequence.RECHECK_RETRY_NANOS,
                Rule.latest(now + bound.monitor.worker.tickNanos(), deadlineAfterTraffic(h, cfg, factor, now)));
        h.lookAt(g != null && g.holdsAt(now) ? g.heldUntil() : soon);
        return idleKind(h, cfg, factor, now) >= 0 ? ActionBits.OVERLOAD : 0;
    }

    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        double factor = h.monitor().overloadFactor();
        int kind = factor < 1 ? idleKind(h, cfg, factor, now) : -1;
        if (kind < 0) {
            return; // traffic since, or the overload is over
        }
        CloseReason reason = kind == CheckOrder.READER ? CloseReason.READER_IDLE
                : kind == CheckOrder.WRITER ? CloseReason.WRITER_IDLE : CloseReason.ALL_IDLE;
        if (CloseSequence.announce(h, ctx, reason, now - CheckOrder.lastActivity(h, kind), true)) {
            h.monitor().overloadClose(); // counted when it goes ahead: a close the veto holds is not one yet
            CloseSequence.closeWithGoodbye(h, ctx, reason);
        }
    }

    /** Worker or event loop: the kind idle for {@code factor} of its timeout at {@code now}, or -1. */
    static int idleKind(HeartbeatHandler h, Plan cfg, double factor, long now) {
        boolean busy = h.readingOpaque();
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            long timeout = scaled(CheckOrder.timeout(cfg, kind), factor);
            if (timeout > 0 && !(busy && kind != CheckOrder.WRITER)
                    && now - CheckOrder.lastActivity(h, kind) >= timeout) {
                return kind;
            }
        }
        return -1;
    }

    /** When the earliest scaled deadline comes, from the stamps; {@code otherwise} if later or none. */
    static long nextDeadline(HeartbeatHandler h, Plan cfg, double factor, long otherwise) {
        long next = otherwise;
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            long timeout = scaled(CheckOrder.timeout(cfg, kind), factor);
            if (timeout > 0) {
                next = earliest(next, CheckOrder.lastActivity(h, kind) + timeout);
            }
        }
        return next;
    }

    /**
     * The earliest scaled deadline once traffic no earlier than {@code now} came (or none did): a kind
     * due at {@code now} a whole scaled timeout later, any other at its deadline from the stamps.
     * {@code cfg} has a timeout: it closes when idle.
     */
    private static long deadlineAfterTraffic(HeartbeatHandler h, Plan cfg, double factor, long now) {
        long next = now + HeartbeatConfig.MAX_TIMEOUT.toNanos();
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            long timeout = scaled(CheckOrder.timeout(cfg, kind), factor);
            if (timeout > 0) {
                long due = CheckOrder.lastActivity(h, kind) + timeout;
                next = earliest(next, due - now > 0 ? due : now + timeout);
            }
        }
        return next;
    }

    private static long scaled(long timeout, double factor) {
        return timeout == 0 ? 0 : Math.max(1, (long) (timeout * factor));
    }
}
