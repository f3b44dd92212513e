/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.util.Optional;
import java.util.function.Predicate;

import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.Rtt;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Records each round trip the Heartbeat handler measures into {@link PingRtt}. It goes right before
 * the Heartbeat handler: for a message that may answer a ping it reads the channel's
 * {@code monitor.rttOf(channel)}, passes the message on (the Heartbeat handler matches it and updates
 * its estimate, on this thread, before the call returns) and reads it again. The estimator is RFC
 * 6298's: the first sample R sets SRTT = R, each later one SRTT' = SRTT + (R - SRTT) / 8 with the
 * division truncated, so R = SRTT + 8 (SRTT' - SRTT), within 7 ns. An answer that gave no sample (a
 * late one, or not ours) leaves both values as they were and records nothing.
 *
 * <p>The library keeps no per-sample hook yet (its Micrometer RTT timer is to come); this costs two
 * pipeline look-ups per answer, nothing for other messages. Sharable; runs on the event loop.
 */
@ChannelHandler.Sharable
final class RttSampler extends ChannelInboundHandlerAdapter {

    /** RFC 6298's alpha is 1/8: a sample moves SRTT by an eighth of its distance from it. */
    private static final int INVERSE_ALPHA = 8;

    private final HeartbeatMonitor monitor;
    private final Predicate<Object> mayAnswer;
    private final PingRtt rtt;

    /**
     * @param mayAnswer whether a message may be an answer to a ping (cheap: called for every message)
     */
    RttSampler(HeartbeatMonitor monitor, Predicate<Object> mayAnswer, PingRtt rtt) {
        this.monitor = monitor;
        this.mayAnswer = mayAnswer;
        this.rtt = rtt;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!mayAnswer.test(msg)) {
            ctx.fireChannelRead(msg);
            return;
        }
        Rtt before = rttOf(ctx);
        ctx.fireChannelRead(msg);
        long sample = sample(before, rttOf(ctx));
        if (sample >= 0) {
            rtt.record(sample);
        }
    }

    /** The round trip that moved the estimate from {@code before} to {@code after}, or -1 if none did. */
    static long sample(Rtt before, Rtt after) {
        if (after == null || after.equals(before)) {
            return -1;
        }
        if (before == null) {
            return after.smoothed().toNanos();
        }
        long srtt = before.smoothed().toNanos();
        return srtt + INVERSE_ALPHA * (after.smoothed().toNanos() - srtt);
    }

    private Rtt rttOf(ChannelHandlerContext ctx) {
        try {
            Optional<Rtt> r = monitor.rttOf(ctx.channel());
            return r.orElse(null);
        } catch (IllegalArgumentException closing) {
            return null; // the pipeline let go of the Heartbeat handler (the channel closed)
        }
    }
}
