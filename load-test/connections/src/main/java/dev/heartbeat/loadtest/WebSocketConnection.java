/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.net.URI;

import dev.heartbeat.demo.ServerConfig;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakerFactory;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.util.ReferenceCountUtil;

/**
 * The client side of one {@code --probe websocket} connection: Netty's {@code HttpClientCodec} for
 * the upgrade to {@code /ws} (a {@code WebSocketClientHandshaker}, which then puts Netty's WebSocket
 * frame codec in its place), and no {@code WebSocketClientProtocolHandler}: that one answers every
 * Ping by itself, and a silent client must not. Echo requests are text frames of a decimal number;
 * the server's Pings are answered (when the role says so) by a Pong with the same data; the keep-alive
 * is an unsolicited Pong; a flooder's ping a Ping; the server's goodbye is a Close frame whose text
 * names the reason (1008 with {@code too_many_pings}: {@code PING_ABUSE}).
 */
final class WebSocketConnection extends ClientConnection {

    /** The server's WebSocket; the host only goes into the request's Host header. */
    private static final URI URI_WS = URI.create("ws://127.0.0.1" + ServerConfig.WEBSOCKET_PATH);
    private static final int MAX_FRAME_BYTES = 64 * 1024;

    private WebSocketClientHandshaker handshaker;

    WebSocketConnection(int index, Role role, boolean expectsClose) {
        super(index, role, expectsClose);
    }


    @Override
    void addCodecs(ChannelHandlerContext ctx) {
        ChannelPipeline p = ctx.pipeline();
        p.addBefore(ctx.name(), "http", new HttpClientCodec());
        p.addBefore(ctx.name(), "http-aggregator", new HttpObjectAggregator(MAX_FRAME_BYTES));
    }

    @Override
    void start() {
        handshaker = WebSocketClientHandshakerFactory.newHandshaker(URI_WS, WebSocketVersion.V13, null, false,
                EmptyHttpHeaders.INSTANCE, MAX_FRAME_BYTES);
        stamp();
        handshaker.handshake(channel);
    }

    private boolean open() {
        return handshaker != null && handshaker.isHandshakeComplete();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof FullHttpResponse response) {
                handshaker.finishHandshake(channel, response); // throws if it is not the upgrade: closes
                ready();
            } else if (msg instanceof TextWebSocketFrame text) {
                long number = parseDecimal(text.content());
                if (number >= 0) {
                    loop.echoReceived(this, number, System.nanoTime());
                }
            } else if (msg instanceof PingWebSocketFrame ping) {
                if (loop.pingReceived(this, System.nanoTime())) {
                    write(new PongWebSocketFrame(ping.content().retain())); // RFC 6455: the same data
                }
            } else if (msg instanceof CloseWebSocketFrame close) {
                goodbye(close.statusCode() == WebSocketCloseStatus.POLICY_VIOLATION.code(), close.reasonText());
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    boolean sendEcho(long number) {
        if (!open()) {
            return false;
        }
        ByteBuf buf = channel.alloc().buffer(20);
        writeDecimal(buf, number);
        write(new TextWebSocketFrame(buf));
        return true;
    }

    @Override
    void sendKeepAlive() {
        if (open()) {
            write(new PongWebSocketFrame()); // unsolicited: a one-way heartbeat (RFC 6455, 5.5.3)
        }
    }

    @Override
    boolean canPing() {
        return open();
    }

    @Override
    Object newPing() {
        return new PingWebSocketFrame();
    }
}
