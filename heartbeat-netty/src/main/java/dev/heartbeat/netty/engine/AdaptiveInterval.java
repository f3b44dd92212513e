/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.net.SocketAddress;

import io.netty.channel.Channel;

/**
 * The adaptive keep-alive on a channel ({@link HeartbeatConfig.Builder#adaptiveInterval}): the channel
 * pings at the interval its {@link AdaptiveKeepAlive} learned for its remote address, reports each of
 * its own pings that probed the path, and moves to the tuner's interval after each answer, so that a
 * connection that stays up learns as well as one that reconnects. Stateless: it reads the handler's
 * stamps and its {@link ProbeState}. Costs a tuner look-up (a synchronized map access) per answer to
 * our latest ping, and a reconfiguration when the interval changes. Event loop only.
 *
 * <p>A ping probed the path's idle timeout when nothing but the keep-alive itself crossed the path for
 * the interval before it. On the write side, {@code whenWriterIdle} (which the tuner needs) writes a
 * ping only after that long without writes, its previous ping included. On the read side, the last
 * read before the ping is either that long before it, or the answer to our previous ping: that answer
 * is the keep-alive, not traffic. Pinging every {@code i} leaves the path idle from one answer to the
 * next ping, {@code i} less a round trip, and that is the gap a NAT must carry for {@code i} to work.
 * A read in the answer's read batch (ended within 1/64 of the interval after it) counts as the answer:
 * it crossed the path at about the same time. A read after the ping was written is not judged (the
 * path was not idle when the answer came).
 *
 * <p>A probing ping answered is a success of the channel's interval. A probing ping still unanswered
 * when Heartbeat closes the channel for {@link CloseReason#PING_TIMEOUT}, or when the channel goes
 * inactive by no close of Heartbeat's (the peer's reset: a NAT that forgot the mapping may answer the
 * ping with one; or the application's close while the ping awaits its answer), is a failure of it.
 * Anything else is no evidence either way.
 */
public final class AdaptiveInterval {

    /** A read within {@code interval >>> this} after our answer belongs to the answer's read batch (1/64). */
    private static final int ANSWER_BATCH_SHIFT = 6;

    private AdaptiveInterval() {
    }

    /**
     * Event loop: {@code cfg} with the ping interval its tuner learned for the channel's remote
     * address; {@code cfg} itself without a tuner, without a remote address, or if the interval is that already.
     */
    static Plan configFor(Plan cfg, Channel channel) {
        SocketAddress peer = cfg.tuner == null ? null : channel.remoteAddress();
        if (peer == null) {
            return cfg;
        }
        long learned = cfg.tuner.interval(peer).toNanos();
        return learned == cfg.pingIntervalNanos ? cfg : cfg.withInterval(learned);
    }

    /**
     * Event loop, at the answer to our latest ping, before {@code probe} records it ({@code lastRead}:
     * the read stamp before the answer's read batch): reports a success if the ping probed the path, and
     * moves the channel to the tuner's interval if that changed (by this answer, or another channel's).
     */
    static void answered(HeartbeatHandler h, Plan cfg, ProbeState probe, Channel channel, long lastRead) {
        SocketAddress peer = channel.remoteAddress();
        if (peer == null) {
            return;
        }
        if (probed(h, cfg, probe, lastRead)) {
            cfg.tuner.succeeded(peer, cfg.owner.pingInterval());
        }
        Plan learned = configFor(cfg, channel);
        if (learned != cfg) {
            h.reconfigure(learned); // idleness measured afresh: the next ping comes the new interval after this answer
        }
    }

    /**
     * Event loop: the channel is closing for PING_TIMEOUT, or went inactive by no close of Heartbeat's:
     * a failure of the channel's interval if our latest ping probed the path and awaits its answer.
     */
    static void lost(HeartbeatHandler h, Plan cfg, Channel channel) {
        SocketAddress peer = channel.remoteAddress();
        ProbeState probe = h.probeState();
        if (peer == null || probe == null || !h.pingOnWire() || h.readingOpaque()
                || probe.answeredSince(h.pingWritten())) {
            return;
        }
        if (probed(h, cfg, probe, h.lastReadOpaque())) {
            cfg.tuner.failed(peer, cfg.owner.pingInterval());
        }
    }

    /**
     * Event loop: the peer said we ping too often: with a tuner and a remote address, the tuner raises the
     * peer's floor ({@link AdaptiveKeepAlive#tooManyPings}) and the channel moves to its interval; else
     * the channel's interval doubles.
     */
    static Plan slower(Plan cfg, Channel channel) {
        SocketAddress peer = cfg.tuner == null ? null : channel.remoteAddress();
        if (peer == null) {
            return cfg.withDoubledInterval();
        }
        cfg.tuner.tooManyPings(peer);
        return configFor(cfg, channel);
    }

    /**
     * Whether our latest ping (on the wire) probed the path: the last read before it ({@code lastRead})
     * was the interval before it, or in the read batch of the answer to our previous ping.
     */
    private static boolean probed(HeartbeatHandler h, Plan cfg, ProbeState probe, long lastRead) {
        long written = h.pingWritten();
        if (lastRead - written >= 0) {
            return false; // read since the ping: the gap before it is not known
        }
        long interval = cfg.pingIntervalNanos;
        return written - lastRead >= interval
                || (probe.answeredSince(lastRead - (interval >>> ANSWER_BATCH_SHIFT))
                        && lastRead - probe.answeredAt() >= 0);
    }
}
