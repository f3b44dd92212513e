/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.reactor;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.heartbeat.netty.CloseDecision;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.CloseVeto;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http2.Http2FrameCodec;
import reactor.netty.NettyPipeline;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;
import reactor.netty.tcp.TcpServer;

/**
 * Heartbeat on Reactor Netty (and so Spring WebFlux): one call installs one Heartbeat handler per
 * connection on an {@link HttpServer} or a {@link TcpServer}, in place of Reactor's own
 * {@code idleTimeout}, on the monitor's shared wheel.
 *
 * <pre>{@code
 * HeartbeatMonitor monitor = HeartbeatMonitor.start();
 * HeartbeatConfig idle = ReactorHeartbeat.idleTimeout(Duration.ofSeconds(60)).build();
 * DisposableServer server = ReactorHeartbeat.install(HttpServer.create(), monitor, idle)
 *         .route(routes -> routes.get("/", (req, res) -> res.sendString(Mono.just("hi"))))
 *         .bindNow();
 * }</pre>
 *
 * <p><b>Per connection, not per request.</b> The handler goes in through
 * {@code doOnChannelInit}, which Reactor runs once per accepted connection after its own handlers,
 * not through {@code doOnConnection}, which an {@code HttpServer} runs for every request (and whose
 * handlers it removes when the request ends). Where it goes, by Reactor's {@link NettyPipeline} names:
 * <table>
 * <caption>Where Heartbeat sits</caption>
 * <tr><th>Server protocols</th><th>Heartbeat</th><th>Requests counted by</th></tr>
 * <tr><td>HTTP/1.1 (the default), with or without TLS</td><td>before {@code reactor.left.httpCodec}: it
 *     sees the connection's bytes</td><td>a handler before {@code reactor.left.httpTrafficHandler}</td></tr>
 * <tr><td>h2c only (prior knowledge)</td><td>after {@code reactor.left.httpCodec} (the
 *     {@code Http2FrameCodec}), before {@code reactor.left.h2MultiplexHandler}: where the HTTP/2 probe's
 *     PING and GOAWAY frames are encoded and its answers decoded</td><td>the codec's active streams</td></tr>
 * <tr><td>HTTP/1.1 and h2c</td><td>before {@code reactor.left.h2cUpgradeHandler}; when the connection
 *     turns to HTTP/2 (prior knowledge or {@code Upgrade: h2c}), replaced by a handler made for the
 *     HTTP/2 configuration after the {@code Http2FrameCodec}</td><td>as HTTP/1.1, then as h2c</td></tr>
 * <tr><td>{@link TcpServer}</td><td>before {@code reactor.right.reactiveBridge}, at channel init: after
 *     Reactor's {@code reactor.left.*} handlers (TLS, logging); a codec added later with
 *     {@code addHandlerFirst} goes before it, one added with {@code addHandlerLast} after it</td><td>none</td></tr>
 * </table>
 * HTTP/2 over TLS (ALPN) is not supported yet: {@link #install(HttpServer, HeartbeatMonitor, HeartbeatConfig)}
 * refuses a secure server that offers HTTP/2.
 *
 * <p><b>Reactor's {@code idleTimeout} semantics.</b> {@link #idleTimeout} makes the configuration that
 * closes a connection after that long with neither a read nor a write (all idle, as Reactor's
 * {@code IdleTimeoutHandler}), counted between requests and never during one: the close is held while a
 * request is in flight ({@link #holdRequests}), and when the last request ends (its response's last
 * content written; on HTTP/2 its last stream closed) idleness is counted from then. A connection that
 * never sends a request is closed after the timeout. Add the rest of Heartbeat to the builder
 * ({@code maxAge}, {@code goodbye(Probes.http2())}, ...); {@link HeartbeatMonitor#drain} and the
 * monitor's counters and close reasons work as on any channel.
 *
 * <p>The handler is named {@value #HANDLER_NAME}: {@code monitor.reconfigure(channel, config)} and
 * {@code monitor.configOf(channel)} find it on the connection's channel.
 */
public final class ReactorHeartbeat {

    /** The name of Heartbeat's handler in a connection's pipeline. */
    public static final String HANDLER_NAME = "heartbeat";
    /** The name of the handler that counts an HTTP/1.1 connection's requests in flight. */
    public static final String REQUESTS_HANDLER_NAME = "heartbeat.requests";

    private static final Logger LOG = LoggerFactory.getLogger(ReactorHeartbeat.class);
    /** Whether the WARN about a pipeline this class does not know was logged (once per process). */
    private static final AtomicBoolean WARNED_UNKNOWN = new AtomicBoolean();

    private ReactorHeartbeat() {
    }

    /**
     * Reactor's {@code HttpServer.idleTimeout(idle)} on Heartbeat: close a connection that has neither
     * read nor written for {@code idle} while no request is in flight ({@link #holdRequests}, asking
     * again every {@code idle}, without bound, as Reactor never closes during a request). A builder, so
     * that the rest of Heartbeat can be added: bound the hold with {@code maxCloseHold}, add
     * {@code maxAge}, {@code writeStall}, a {@code goodbye}...
     *
     * @param idle at least 1 ms
     */
    public static HeartbeatConfig.Builder idleTimeout(Duration idle) {
        return HeartbeatConfig.closeWhenIdle()
                .allIdle(idle)
                .beforeClose(holdRequests(idle))
                .maxCloseHold(HeartbeatConfig.MAX_TIMEOUT);
    }

    /**
     * The close veto that holds idle closes (reader, writer and all idle) while a request is in flight
     * on the connection ({@link #requestInFlight}), asking again {@code recheck} later; other closes
     * (maximum age, write stall, ping timeout) go ahead. With {@code recheck} as long as the idle timeout,
     * a connection whose request ended is closed on time: the first look after the end finds it not yet
     * idle and waits for its real deadline.
     *
     * @param recheck at least 1 ms
     */
    public static CloseVeto holdRequests(Duration recheck) {
        CloseDecision hold = CloseDecision.extend(recheck);
        return (channel, reason) -> (reason == CloseReason.READER_IDLE || reason == CloseReason.WRITER_IDLE
                || reason == CloseReason.ALL_IDLE) && requestInFlight(channel) ? hold : CloseDecision.PROCEED;
    }

    /**
     * Whether a request is in flight on a connection this class installed Heartbeat on: an HTTP/1.1
     * request read and not yet answered (a WebSocket after its upgrade stays in flight), or an active
     * HTTP/2 stream. False for other channels. Call it on the channel's event loop (a close veto is).
     */
    public static boolean requestInFlight(Channel connection) {
        ConnectionRequests requests = connection.attr(ConnectionRequests.KEY).get();
        return requests != null && requests.inFlight();
    }

    /**
     * Installs Heartbeat on every connection of {@code server} with {@code config}, for HTTP/1.1 and
     * HTTP/2 alike.
     *
     * @throws IllegalArgumentException if {@code server} is secure and offers HTTP/2 (ALPN: not supported yet)
     */
    public static HttpServer install(HttpServer server, HeartbeatMonitor monitor, HeartbeatConfig config) {
        return install(server, monitor, config, config);
    }

    /**
     * Installs Heartbeat on every connection of {@code server}: {@code http1} while the connection speaks
     * HTTP/1.1 (and before it has said anything), {@code http2} once it speaks h2c, for example pings with
     * {@code Probes.http2()} and a GOAWAY goodbye.
     *
     * @throws IllegalArgumentException if {@code server} is secure and offers HTTP/2 (ALPN: not supported yet)
     */
    public static HttpServer install(HttpServer server, HeartbeatMonitor monitor, HeartbeatConfig http1,
            HeartbeatConfig http2) {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(monitor, "monitor");
        Objects.requireNonNull(http1, "http1");
        Objects.requireNonNull(http2, "http2");
        if (server.configuration().isSecure()
                && java.util.Arrays.asList(server.configuration().protocols()).contains(HttpProtocol.H2)) {
            throw new IllegalArgumentException("ReactorHeartbeat does not support HTTP/2 over TLS (ALPN) yet: this "
                    + "server offers " + java.util.Arrays.toString(server.configuration().protocols())
                    + "; use HTTP/1.1 over TLS, or h2c behind a TLS-terminating proxy");
        }
        return server.doOnChannelInit((observer, channel, remote) -> onHttpChannel(channel, monitor, http1, http2));
    }

    /** Installs Heartbeat on every connection of {@code server} with {@code config}. */
    public static TcpServer install(TcpServer server, HeartbeatMonitor monitor, HeartbeatConfig config) {
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(monitor, "monitor");
        Objects.requireNonNull(config, "config");
        return server.doOnChannelInit((observer, channel, remote) ->
                channel.pipeline().addBefore(NettyPipeline.ReactiveBridge, HANDLER_NAME, monitor.newHandler(config)));
    }

    /** Event loop, at a new HTTP connection's init, after Reactor's own handlers: see the class comment's table. */
    private static void onHttpChannel(Channel channel, HeartbeatMonitor monitor, HeartbeatConfig http1,
            HeartbeatConfig http2) {
        ChannelPipeline p = channel.pipeline();
        ConnectionRequests requests = new ConnectionRequests(monitor, http2);
        ChannelHandler codec = p.get(NettyPipeline.HttpCodec);
        if (codec instanceof Http2FrameCodec) {
            channel.attr(ConnectionRequests.KEY).set(requests);
            p.addAfter(NettyPipeline.HttpCodec, HANDLER_NAME, monitor.newHandler(http2));
            requests.onHttp2(channel, (Http2FrameCodec) codec);
            return;
        }
        String first = codec != null ? NettyPipeline.HttpCodec
                : p.get(NettyPipeline.H2CUpgradeHandler) != null ? NettyPipeline.H2CUpgradeHandler : null;
        if (first == null || p.get(NettyPipeline.HttpTrafficHandler) == null) {
            if (WARNED_UNKNOWN.compareAndSet(false, true)) {
                LOG.warn("ReactorHeartbeat does not know this HTTP pipeline, and installed nothing on {}: {} "
                        + "(logged once)", channel, p.names());
            }
            return;
        }
        channel.attr(ConnectionRequests.KEY).set(requests);
        p.addBefore(first, HANDLER_NAME, monitor.newHandler(http1));
        p.addBefore(NettyPipeline.HttpTrafficHandler, REQUESTS_HANDLER_NAME, requests);
    }
}
