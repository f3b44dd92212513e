/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import dev.heartbeat.netty.CloseReason;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;

/**
 * The WebSocket echo, after {@code WebSocketServerProtocolHandler}: text, binary and continuation
 * frames go back as they came (the protocol handler answers Pings and Close frames itself). When the
 * handshake completes it has the idle handling start pinging ({@link IdleHandling#startPings}: no
 * WebSocket frame can be written before). Its goodbye is a Close frame, status 1001 (going away) with
 * the reason as its text. Anything else that reaches it (an HTTP request for another path than the
 * WebSocket's) closes the connection. Sharable.
 */
@ChannelHandler.Sharable
final class WebSocketEcho extends EchoHandler {

    private final IdleHandling idle;

    WebSocketEcho(DemoCounters counters, IdleHandling idle) {
        super(counters, idle.saysGoodbyes());
        this.idle = idle;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame
                || msg instanceof ContinuationWebSocketFrame) {
            counters.linesEchoed.increment();
            ctx.write(msg, ctx.voidPromise());
            return;
        }
        ReferenceCountUtil.release(msg);
        if (!(msg instanceof WebSocketFrame)) {
            ctx.close(); // not a WebSocket: a request for another path
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof WebSocketServerProtocolHandler.HandshakeComplete) {
            idle.startPings(ctx.channel());
        }
        super.userEventTriggered(ctx, evt);
    }

    @Override
    void sayGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        if (ctx.pipeline().get(WebSocketFrameEncoder.class) != null) { // before the handshake: no frames yet
            ctx.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, reason.name()),
                    ctx.voidPromise());
        }
    }
}
