/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;

/**
 * The state of a ping configuration whose probe recognises its answers (see {@link Probe}): the
 * token of the latest ping, how many pings await an answer, when the latest was answered, and the
 * channel's round-trip time (the {@link RttEstimator} this extends, for its two longs). Allocated
 * only for such configurations; the ping policy's own state (when a ping was decided and written,
 * the pings missed) is in the handler's slots for every ping configuration. The token and counts
 * are the event loop's alone; {@link #answeredAt} and the estimate are read by the worker and by
 * {@code HeartbeatMonitor.rttOf} (opaque). 56 bytes ({@code HandlerLayoutTest}).
 */
final class ProbeState extends RttEstimator {

    private static final VarHandle ANSWERED_AT;
    private static final VarHandle EVER_ANSWERED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            ANSWERED_AT = lookup.findVarHandle(ProbeState.class, "answeredAt", long.class);
            EVER_ANSWERED = lookup.findVarHandle(ProbeState.class, "everAnswered", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Event loop only: the latest ping's token; random at the first ping, then + 1 per ping. */
    private long latestToken = ThreadLocalRandom.current().nextLong();
    /** Event loop only: pings written since the last answer of ours (saturating). */
    private int unanswered;
    /** Ticker time of the latest answer to the latest ping; meaningful once {@link #everAnswered}. Opaque. */
    @SuppressWarnings("unused") // accessed through ANSWERED_AT
    private long answeredAt;
    /** An answer of ours was ever seen. Set by the event loop, read by the worker. Opaque. */
    @SuppressWarnings("unused") // accessed through EVER_ANSWERED
    private boolean everAnswered;

    /** Event loop: the token of the ping about to be made. */
    long nextToken() {
        return latestToken + 1;
    }

    /** Event loop: the ping of {@link #nextToken()} is being written. */
    void wrote() {
        latestToken++;
        if (unanswered < Integer.MAX_VALUE) {
            unanswered++;
        }
    }

    /** Event loop: the latest ping's write failed. */
    void writeFailed() {
        // Tokens must stay consecutive over the pings counted, and for in-order probes a ping that never
        // left must not take the place of one that did: the failed one was the latest (one ping per timeout).
        latestToken--;
        if (unanswered > 0) {
            unanswered--;
        }
    }

    /**
     * Event loop, for every inbound message: records an answer to one of our pings; returns true if
     * the probe consumes it (then released here, and not passed on).
     */
    boolean onInbound(HeartbeatHandler h, BoundConfig bound, ChannelHandlerContext ctx, Object msg, long lastRead) {
        Probe probe = bound.config.probe;
        int c = probe.classify(msg, latestToken, unanswered);
        if (c >= 0) {
            if (c == 0 && h.pingOnWire()) { // the latest ping, which has a write time: an RTT sample
                long now = bound.ticker.nanoTime();
                long written = h.pingWritten();
                addSample(now - written);
                AdaptiveKeepAlive<java.net.SocketAddress> tuner = bound.config.tuner;
                if (tuner != null && written - lastRead >= bound.config.pingIntervalNanos
                        && ctx.channel().remoteAddress() != null) {
                    // Nothing read for the interval before the ping, nothing written (a keep-alive): the
                    // path carried an idle gap that long.
                    tuner.succeeded(ctx.channel().remoteAddress(), bound.config.pingInterval());
                }
                ANSWERED_AT.setOpaque(this, now);
                EVER_ANSWERED.setOpaque(this, true);
            }
            unanswered = c;
            if (probe.consumes(c)) {
                bound.monitor.answerConsumed();
                ReferenceCountUtil.release(msg);
                return true;
            }
        } else if (c == Probe.NOT_AN_ANSWER && unanswered >= Probe.MISPLACEMENT_PINGS
                && !(boolean) EVER_ANSWERED.getOpaque(this)) {
            probe.reportMissingAnswers(ctx.channel(), unanswered);
        }
        return false;
    }

    /** Worker or event loop: ticker time of the latest answer to the latest ping; see {@link #answeredSince}. */
    long answeredAt() {
        return (long) ANSWERED_AT.getOpaque(this);
    }

    /** Worker or event loop: whether the latest ping was answered at or after {@code time}. */
    boolean answeredSince(long time) {
        return (boolean) EVER_ANSWERED.getOpaque(this) && (long) ANSWERED_AT.getOpaque(this) - time >= 0;
    }
}
