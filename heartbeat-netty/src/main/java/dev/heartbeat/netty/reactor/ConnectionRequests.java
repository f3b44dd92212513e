/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.reactor;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http2.CleartextHttp2ServerUpgradeHandler;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.AttributeKey;

/**
 * One HTTP connection's requests in flight, for the close veto of {@link ReactorHeartbeat#holdRequests}:
 * HTTP/1.1 requests read and not yet answered (counted by this handler, which sits after Reactor's
 * HTTP codec), or, once the connection speaks HTTP/2, its active streams (read from the
 * {@code Http2FrameCodec}'s connection). When the last request ends, the connection's idleness is
 * measured from then ({@link HeartbeatMonitor#resetReadTimeout}), as Reactor's {@code idleTimeout}
 * starts its handler again after each response.
 *
 * <p>On a server that speaks HTTP/1.1 and h2c, the connection starts as HTTP/1.1 with Heartbeat before
 * the h2c upgrade handler, where it sees bytes; when the connection turns to HTTP/2 (prior knowledge or
 * an {@code Upgrade: h2c}), this handler replaces that Heartbeat handler by one made for the HTTP/2
 * configuration right after the {@code Http2FrameCodec}, where the HTTP/2 probe's pings and GOAWAY
 * work, and leaves the pipeline.
 *
 * <p>Event loop only: every field is the channel's event loop's.
 */
final class ConnectionRequests extends ChannelDuplexHandler {

    /** Where a connection keeps its requests: read by the close veto. */
    static final AttributeKey<ConnectionRequests> KEY = AttributeKey.valueOf(ConnectionRequests.class.getName());

    private final HeartbeatMonitor monitor;
    /** The configuration for the connection once it speaks HTTP/2. */
    private final HeartbeatConfig http2Config;
    /** HTTP/1.1 requests read, not yet answered by a final response's last content. */
    private int http1InFlight;
    /** Whether the response being written is informational (1xx): its end is not the request's. */
    private boolean informational;
    /** The HTTP/2 connection, once the channel speaks HTTP/2; null before. */
    private Http2Connection http2;

    ConnectionRequests(HeartbeatMonitor monitor, HeartbeatConfig http2Config) {
        this.monitor = monitor;
        this.http2Config = http2Config;
    }

    /** Whether a request is in flight: an HTTP/1.1 request unanswered, or an active HTTP/2 stream. */
    boolean inFlight() {
        return http1InFlight > 0 || (http2 != null && http2.numActiveStreams() > 0);
    }

    /** Event loop: the channel speaks HTTP/2 through {@code codec}; its streams are its requests from now on. */
    void onHttp2(Channel channel, Http2FrameCodec codec) {
        http2 = codec.connection();
        http1InFlight = 0;
        http2.addListener(new Http2ConnectionAdapter() {
            @Override
            public void onStreamClosed(Http2Stream stream) {
                if (http2.numActiveStreams() == 0) {
                    monitor.resetReadTimeout(channel);
                }
            }
        });
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest) {
            http1InFlight++;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof HttpResponse) {
            // 1xx (100 Continue, 101 Switching Protocols) does not answer the request: after a 101 the
            // connection is the request's (a WebSocket), in flight until it closes, as Reactor sees it.
            informational = ((HttpResponse) msg).status().codeClass() == HttpStatusClass.INFORMATIONAL;
        }
        if (msg instanceof LastHttpContent && !informational && http1InFlight > 0 && --http1InFlight == 0) {
            monitor.resetReadTimeout(ctx.channel());
        }
        ctx.write(msg, promise);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof CleartextHttp2ServerUpgradeHandler.PriorKnowledgeUpgradeEvent
                || evt instanceof HttpServerUpgradeHandler.UpgradeEvent) {
            toHttp2(ctx);
        }
        super.userEventTriggered(ctx, evt);
    }

    /** Event loop: the connection turned to HTTP/2; moves Heartbeat after the frame codec and leaves. */
    private void toHttp2(ChannelHandlerContext ctx) {
        ChannelPipeline p = ctx.pipeline();
        Http2FrameCodec codec = p.get(Http2FrameCodec.class);
        if (codec == null) {
            return; // an upgrade to something else: stay HTTP/1.1
        }
        if (p.get(ReactorHeartbeat.HANDLER_NAME) != null) {
            p.remove(ReactorHeartbeat.HANDLER_NAME);
        }
        p.addAfter(p.context(codec).name(), ReactorHeartbeat.HANDLER_NAME, monitor.newHandler(http2Config));
        onHttp2(ctx.channel(), codec);
        p.remove(this);
    }
}
