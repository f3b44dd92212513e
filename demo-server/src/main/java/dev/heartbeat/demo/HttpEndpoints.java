/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side, after {@code HttpServerCodec} and {@code HttpObjectAggregator}:
 * <ul>
 * <li>{@code GET /metrics}: Prometheus text, from Micrometer's Prometheus registry ({@link Metrics});</li>
 * <li>{@code GET /healthz}: 200 {@code ok};</li>
 * <li>{@code POST /debug/gc}: {@code System.gc()} twice (off the event loop), then
 *     {@code {"heap_used_bytes": N, "connections": M}}, so a load test can measure heap per
 *     connection.</li>
 * </ul>
 */
@ChannelHandler.Sharable
final class HttpEndpoints extends SimpleChannelInboundHandler<FullHttpRequest> {

    private static final Logger LOG = LoggerFactory.getLogger(HttpEndpoints.class);

    private final Metrics metrics;
    private final DemoCounters counters;
    private final Executor blocking;
    private final dev.heartbeat.netty.HeartbeatMonitor monitor; // null unless --idle-impl heartbeat

    /**
     * @param blocking runs {@code /debug/gc}, which would otherwise stall an event loop
     * @param monitor the monitor {@code /drain} drains; null without Heartbeat
     */
    HttpEndpoints(Metrics metrics, DemoCounters counters, Executor blocking,
            dev.heartbeat.netty.HeartbeatMonitor monitor) {
        this.metrics = metrics;
        this.counters = counters;
        this.blocking = blocking;
        this.monitor = monitor;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        if (!req.decoderResult().isSuccess()) {
            respond(ctx, false, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8", "bad request\n");
            return;
        }
        String path = new QueryStringDecoder(req.uri()).path();
        HttpMethod method = req.method();
        switch (path) {
            case "/metrics":
                if (isGet(method)) {
                    respond(ctx, keepAlive, HttpResponseStatus.OK, Metrics.CONTENT_TYPE, metrics.scrape());
                } else {
                    notAllowed(ctx, keepAlive, "GET, HEAD");
                }
                break;
            case "/healthz":
                if (isGet(method)) {
                    respond(ctx, keepAlive, HttpResponseStatus.OK, "text/plain; charset=utf-8", "ok");
                } else {
                    notAllowed(ctx, keepAlive, "GET, HEAD");
                }
                break;
            case "/debug/gc":
                if (HttpMethod.POST.equals(method)) {
                    gc(ctx, keepAlive);
                } else {
                    notAllowed(ctx, keepAlive, "POST");
                }
                break;
            case "/drain":
                if (HttpMethod.POST.equals(method)) {
                    drain(ctx, keepAlive, new QueryStringDecoder(req.uri()).parameters().get("window"));
                } else {
                    notAllowed(ctx, keepAlive, "POST");
                }
                break;
            default:
                respond(ctx, keepAlive, HttpResponseStatus.NOT_FOUND, "text/plain; charset=utf-8",
                        "not found; try /metrics, /healthz, POST /debug/gc or POST /drain?window=30s\n");
                break;
        }
    }

    /** POST /drain?window=D: every connection closed, spread over D (reason DRAIN); answers the count. */
    private void drain(ChannelHandlerContext ctx, boolean keepAlive, java.util.List<String> window) {
        if (monitor == null) {
            respond(ctx, keepAlive, HttpResponseStatus.CONFLICT, "text/plain; charset=utf-8",
                    "drain is Heartbeat's: this server runs another --idle-impl\n");
            return;
        }
        java.time.Duration d;
        try {
            if (window == null || window.size() != 1) {
                throw new IllegalArgumentException("give one window, e.g. /drain?window=30s");
            }
            d = new DurationConverter().convert(window.get(0));
            monitor.drain(d).whenComplete((n, failure) -> respond(ctx, keepAlive,
                    failure == null ? HttpResponseStatus.OK : HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "application/json", failure == null ? "{\"draining\": " + n + ", \"window_ms\": " + d.toMillis()
                            + "}\n" : "{\"error\": \"" + failure.getMessage() + "\"}\n"));
        } catch (Exception e) {
            respond(ctx, keepAlive, HttpResponseStatus.BAD_REQUEST, "text/plain; charset=utf-8",
                    "bad drain window: " + e.getMessage() + "\n");
        }
    }

    private static boolean isGet(HttpMethod method) {
        return HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method);
    }

    private void gc(ChannelHandlerContext ctx, boolean keepAlive) {
        try {
            blocking.execute(() -> {
                System.gc();
                System.gc();
                long heapUsed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
                String json = "{\"heap_used_bytes\": " + heapUsed + ", \"connections\": " + counters.open.sum() + "}\n";
                respond(ctx, keepAlive, HttpResponseStatus.OK, "application/json", json);
            });
        } catch (RejectedExecutionException shuttingDown) {
            respond(ctx, false, HttpResponseStatus.SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
                    "shutting down\n");
        }
    }

    private static void notAllowed(ChannelHandlerContext ctx, boolean keepAlive, String allow) {
        FullHttpResponse res = response(HttpResponseStatus.METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
                "method not allowed; use " + allow + "\n");
        res.headers().set(HttpHeaderNames.ALLOW, allow);
        send(ctx, keepAlive, res);
    }

    private static void respond(ChannelHandlerContext ctx, boolean keepAlive, HttpResponseStatus status,
            String contentType, String body) {
        send(ctx, keepAlive, response(status, contentType, body));
    }

    private static FullHttpResponse response(HttpResponseStatus status, String contentType, String body) {
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        res.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, res.content().readableBytes());
        return res;
    }

    /** Any thread. HEAD bodies are dropped by HttpServerCodec (it knows the request method). */
    private static void send(ChannelHandlerContext ctx, boolean keepAlive, FullHttpResponse res) {
        if (keepAlive) {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.writeAndFlush(res, ctx.voidPromise());
        } else {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated in ChannelHandler, current in ChannelInboundHandler
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.debug("metrics connection {}: {}", ctx.channel(), cause.toString());
        ctx.close();
    }
}
