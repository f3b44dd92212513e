/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.probe;

import java.nio.charset.StandardCharsets;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.ProbePlacement;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;

/**
 * HTTP/2 PING frames, answered by PING ACK frames with the same 8 bytes, and GOAWAY goodbyes: the
 * probe {@link Probes#http2()} returns (one instance for every channel).
 */
final class Http2Probe extends Probe {
    static final Http2Probe INSTANCE = new Http2Probe();
    /** The debug data of a GOAWAY for ping abuse, to recognise the peer's. */
    private static final ByteBuf TOO_MANY_PINGS_BYTES = Unpooled.unreleasableBuffer(
            Unpooled.copiedBuffer(Probes.TOO_MANY_PINGS, StandardCharsets.US_ASCII)).asReadOnly();

    @Override
    public String name() {
        return "http2";
    }

    private Http2Probe() {
        super(Matching.BY_TOKEN, true);
    }

    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) {
        return new DefaultHttp2PingFrame(token); // 24 B per ping: the frame holds the token, not a buffer
    }

    @Override
    protected boolean isAnswer(Object msg) {
        return msg instanceof Http2PingFrame ping && ping.ack();
    }

    @Override
    protected long tokenOf(Object answer) {
        return ((Http2PingFrame) answer).content();
    }

    @Override
    protected boolean isPeerPing(Object msg) {
        return msg instanceof Http2PingFrame ping && !ping.ack();
    }

    @Override
    public boolean recognisesPeerPings() {
        return true;
    }

    @Override
    protected boolean isApplicationMessage(Object msg) {
        return msg instanceof Http2HeadersFrame || msg instanceof Http2DataFrame;
    }

    /**
     * GOAWAY with the reason's name as debug data: {@code NO_ERROR} for the closes that end a
     * connection with nothing wrong on the wire (idleness, ping timeout, maximum age, drain, as gRPC-java
     * and Go's {@code x/net/http2} send for theirs); {@code ENHANCE_YOUR_CALM} for a peer whose behaviour
     * loads the server: ping abuse (with the debug data {@code too_many_pings}, the words gRPC clients look
     * for to back off) and a peer that does not read ({@code WRITE_STALL}, {@code UNWRITABLE}). Netty's
     * {@code Http2FrameCodec} fills in the last stream id, and a GOAWAY with an error code makes it close
     * the connection as soon as the frame is written.
     */
    @Override
    public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        Http2Error error = switch (reason) {
            case PING_ABUSE, WRITE_STALL, UNWRITABLE -> Http2Error.ENHANCE_YOUR_CALM;
            default -> Http2Error.NO_ERROR;
        };
        return new DefaultHttp2GoAwayFrame(error, ByteBufUtil.writeAscii(ctx.alloc(), Probes.words(reason)));
    }

    @Override
    public boolean hasTwoPhaseGoodbye() {
        return true;
    }

    @Override
    protected boolean isTooManyPings(Object msg) {
        return msg instanceof Http2GoAwayFrame goAway && goAway.errorCode() == Http2Error.ENHANCE_YOUR_CALM.code()
                && ByteBufUtil.equals(goAway.content(), TOO_MANY_PINGS_BYTES);
    }

    @Override
    public boolean recognisesTooManyPings() {
        return true;
    }

    /**
     * GOAWAY {@code NO_ERROR} with the largest stream id (2^31 - 1): the peer learns to open no
     * more streams while those it opened and we have not seen yet still count, as gRPC-java's
     * graceful shutdown begins; the final GOAWAY ({@link #newGoodbye}) then names the real last one.
     */
    @Override
    public Object newGoodbyeWarning(ChannelHandlerContext ctx, CloseReason reason) {
        return new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR, ByteBufUtil.writeAscii(ctx.alloc(), reason.name()))
                .setExtraStreamIds(Integer.MAX_VALUE);
    }

    @Override
    protected String placementAdvice() {
        return "put the Heartbeat handler after Http2FrameCodec, whose PING ACK frames it must see";
    }

    @Override
    protected ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
        String subject = ProbePlacement.subject(ctx, this);
        if (ctx.channel() instanceof Http2StreamChannel) {
            return ProbePlacement.Finding.wrong(subject + " is in the pipeline of an HTTP/2 stream, where PING "
                    + "frames are neither written nor read: add Heartbeat's handler to the connection's pipeline, "
                    + "after Http2FrameCodec");
        }
        ProbePlacement.Place codec = ProbePlacement.first(ctx.pipeline(), Http2FrameCodec.class::isInstance);
        if (codec != null) {
            return codec.index() < ProbePlacement.self(ctx).index() ? ProbePlacement.Finding.FITS
                    : ProbePlacement.Finding.wrong(subject + " is before Http2FrameCodec " + codec.quoted()
                            + ", so it reads bytes, never the PING ACK frames: add Heartbeat's handler after "
                            + "Http2FrameCodec");
        }
        ProbePlacement.Place other = ProbePlacement.first(ctx.pipeline(), Http2ConnectionHandler.class::isInstance);
        return ProbePlacement.Finding.unknown(subject + (other != null
                ? " has no Http2FrameCodec but " + other.quoted() + ", which may refuse the Http2PingFrame "
                        + "this probe writes"
                : " has no Http2FrameCodec in its pipeline, so its placement cannot be checked")
                + ": add Heartbeat's handler after Http2FrameCodec (with ALPN or an h2c upgrade, when the codec is "
                + "added)");
    }
}
