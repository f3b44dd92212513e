/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2SettingsAckFrame;
import io.netty.handler.codec.http2.Http2SettingsFrame;
import io.netty.util.ReferenceCountUtil;

/**
 * The client side of one {@code --probe http2} connection: Netty's {@code Http2FrameCodec} (h2c with
 * prior knowledge), built to acknowledge neither PINGs nor SETTINGS by itself: a silent client must
 * not answer pings, and every write must be stamped ({@link ClientConnection}), so this handler makes
 * those acks itself. An active connection opens one stream (a POST's HEADERS) and sends each echo
 * request as a DATA frame of a decimal number on it, the server echoing each on the same stream; the
 * bytes received go back to the server's window every 16 KiB. The server's PINGs are acknowledged
 * with the same 8 bytes when the role says so; the keep-alive, and a flooder's ping, is a PING of its
 * own; the server's goodbye is a GOAWAY whose debug data names the reason ({@code ENHANCE_YOUR_CALM}
 * with {@code too_many_pings}: {@code PING_ABUSE}).
 */
final class Http2Connection extends ClientConnection {

    /** Bytes received on the echo stream before they are given back to the server's window. */
    private static final int WINDOW_RETURN_BYTES = 16 * 1024;
    /** The keep-alive PING's data: not a token of the server's. */
    private static final long KEEP_ALIVE = 0x6b656570616c6976L;
    /** A flooder's PING data: "flooding". */
    private static final long FLOOD = 0x666c6f6f64696e67L;

    /** Opens streams through the codec; only an active connection has one. */
    private static final class StreamOpener extends Http2ChannelDuplexHandler {
    }

    private StreamOpener opener;
    private Http2FrameStream stream;
    private int unreturned;

    Http2Connection(int index, Role role, boolean expectsClose) {
        super(index, role, expectsClose);
    }


    @Override
    void addCodecs(ChannelHandlerContext ctx) {
        ChannelPipeline p = ctx.pipeline();
        p.addBefore(ctx.name(), "h2", Http2FrameCodecBuilder.forClient().autoAckPingFrame(false)
                .autoAckSettingsFrame(false).build());
        if (role == Role.ACTIVE) {
            opener = new StreamOpener();
            p.addBefore(ctx.name(), "h2-streams", opener);
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof Http2DataFrame data) {
                long number = parseDecimal(data.content());
                if (number >= 0) {
                    loop.echoReceived(this, number, System.nanoTime());
                }
                returnWindow(data);
            } else if (msg instanceof Http2PingFrame ping) {
                if (!ping.ack() && loop.pingReceived(this, System.nanoTime())) {
                    write(new DefaultHttp2PingFrame(ping.content(), true)); // RFC 9113: the same 8 bytes
                }
            } else if (msg instanceof Http2SettingsFrame) {
                write(Http2SettingsAckFrame.INSTANCE); // set-up: every role acknowledges the server's SETTINGS
            } else if (msg instanceof Http2GoAwayFrame goAway) {
                goodbye(goAway.errorCode() == Http2Error.ENHANCE_YOUR_CALM.code(),
                        goAway.content().toString(StandardCharsets.US_ASCII));
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    private void returnWindow(Http2DataFrame data) {
        unreturned += data.initialFlowControlledBytes();
        if (unreturned >= WINDOW_RETURN_BYTES && !data.isEndStream()) {
            write(new DefaultHttp2WindowUpdateFrame(unreturned).stream(data.stream()));
            unreturned = 0;
        }
    }

    @Override
    boolean sendEcho(long number) {
        if (opener == null) {
            return false;
        }
        if (stream == null) {
            stream = opener.newStream();
            write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().method("POST").path("/echo").scheme("http")
                    .authority("127.0.0.1"), false).stream(stream));
        }
        ByteBuf buf = channel.alloc().buffer(20);
        writeDecimal(buf, number);
        write(new DefaultHttp2DataFrame(buf, false).stream(stream));
        return true;
    }

    @Override
    void sendKeepAlive() {
        write(new DefaultHttp2PingFrame(KEEP_ALIVE, false));
    }

    @Override
    boolean canPing() {
        return true;
    }

    @Override
    Object newPing() {
        return new DefaultHttp2PingFrame(FLOOD, false);
    }
}
