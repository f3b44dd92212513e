/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.nio.charset.StandardCharsets;

import dev.heartbeat.netty.CloseReason;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.util.ReferenceCountUtil;

/**
 * The HTTP/2 echo, frame by frame after {@code Http2FrameCodec} (h2c with prior knowledge): a
 * request's HEADERS are answered {@code :status 200}, and each DATA frame is written back on its own
 * stream, its bytes returned to the client's flow-control window at once; a stream ends when the
 * client ends it. The codec answers PINGs and SETTINGS itself; every other frame is dropped. Its
 * goodbye is a GOAWAY (NO_ERROR) with the reason as debug data. Sharable.
 */
@ChannelHandler.Sharable
final class Http2Echo extends EchoHandler {

    /** Whether Heartbeat's ping probe, which has a goodbye, is not there to say it (see {@link #saysGoodbyeAhead}). */
    private final boolean goodbyeAhead;

    /**
     * @param heartbeatPings whether the channels' Heartbeat configuration pings with {@code Probes.http2()},
     *     whose two-phase GOAWAY Heartbeat writes itself at max age
     */
    Http2Echo(DemoCounters counters, boolean heartbeatPings) {
        super(counters, heartbeatPings);
        this.goodbyeAhead = !heartbeatPings;
    }

    @Override
    boolean saysGoodbyeAhead() {
        return goodbyeAhead;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof Http2HeadersFrame request) {
            ctx.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().status(HttpResponseStatus.OK.codeAsText()),
                    request.isEndStream()).stream(request.stream()), ctx.voidPromise());
        } else if (msg instanceof Http2DataFrame data) {
            Http2FrameStream stream = data.stream();
            int consumed = data.initialFlowControlledBytes();
            boolean end = data.isEndStream();
            counters.linesEchoed.increment();
            // The same bytes go back: the new frame takes over the buffer (and releases it once written).
            ctx.write(new DefaultHttp2DataFrame(data.content(), end).stream(stream), ctx.voidPromise());
            if (consumed > 0 && !end) { // an ended stream gives its window back as it closes
                ctx.write(new DefaultHttp2WindowUpdateFrame(consumed).stream(stream), ctx.voidPromise());
            }
        } else {
            ReferenceCountUtil.release(msg); // PING (answered by the codec), SETTINGS, WINDOW_UPDATE, RST...
        }
    }

    @Override
    void sayGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        ctx.writeAndFlush(new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR,
                Unpooled.copiedBuffer(reason.name(), StandardCharsets.US_ASCII)), ctx.voidPromise());
    }
}
