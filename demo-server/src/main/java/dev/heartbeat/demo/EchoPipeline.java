/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.EventExecutor;

/**
 * The demo server's per-connection pipeline, independent of the transport: the idle handling that
 * {@link ServerConfig#idleImpl()} selects, newline framing and the echo. {@link DemoServer} puts it
 * behind TCP; the load test puts the very same pipeline behind Netty's in-JVM local transport, so both
 * measure one server.
 *
 * <pre>{@code
 * try (EchoPipeline echo = EchoPipeline.create(config, workers.next())) { // starts the Heartbeat worker
 *     new ServerBootstrap().group(boss, workers).channel(LocalServerChannel.class)
 *             .childHandler(echo.initializer()).bind(new LocalAddress("echo"));
 *     ...
 * }                                                                  // stops the worker
 * }</pre>
 *
 * <p>Thread-safe; the initializer is shared by every accepted channel. Only the settings of the idle
 * handling and {@link ServerConfig#maxLine()} are used; host, ports and threads are the caller's.
 */
public final class EchoPipeline implements AutoCloseable {

    private final ServerConfig config;
    private final DemoCounters counters = new DemoCounters();
    private final HeartbeatMonitor monitor; // null unless the idle impl is heartbeat
    private final ChannelInitializer<Channel> initializer;

    private EchoPipeline(ServerConfig config, EventExecutor host) {
        this.config = config;
        if (config.idleImpl() == ServerConfig.IdleImpl.HEARTBEAT) {
            HeartbeatMonitor.Builder b = HeartbeatMonitor.builder();
            if (config.tick() != null) {
                b.tick(config.tick());
            }
            if (config.workerHost() == ServerConfig.WorkerHost.LOOP) {
                if (host == null) {
                    throw new IllegalArgumentException("worker-host=loop needs an event loop to host the cycles");
                }
                b.hostedBy(host);
            }
            this.monitor = b.build().startWorker();
        } else {
            this.monitor = null;
        }
        this.initializer = newInitializer();
    }

    /**
     * The pipeline for these settings; with the heartbeat idle impl this starts a monitor and its worker,
     * whose cycles run on {@code host} if the settings say {@code worker-host=loop}.
     *
     * @param host one of the server's event loops; may be null only with {@code worker-host=thread}
     * @throws IllegalArgumentException if the settings ask for a host loop and none is given
     */
    public static EchoPipeline create(ServerConfig config, EventExecutor host) {
        return new EchoPipeline(config, host);
    }

    /** The child handler of a {@code ServerBootstrap}: sets up each accepted channel's pipeline. */
    public ChannelInitializer<Channel> initializer() {
        return initializer;
    }

    /** The counters every connection of this pipeline bumps. */
    public DemoCounters counters() {
        return counters;
    }

    /** The Heartbeat monitor, or null unless the idle impl is heartbeat. */
    public HeartbeatMonitor monitor() {
        return monitor;
    }

    /** PING lines written to silent clients (ping policy), by either idle impl. */
    public long pingsSent() {
        return monitor == null ? counters.pingsSent.sum() : monitor.stats().pingsSent();
    }

    /** Connections closed for idleness (close policy) or unanswered pings (ping policy), by either idle impl. */
    public long idleCloses() {
        return monitor == null ? counters.closedReaderIdle.sum() + counters.closedPingTimeout.sum()
                : monitor.stats().closedTotal();
    }

    /** The settings. */
    public ServerConfig config() {
        return config;
    }

    /** One initializer for all connections; the handlers without per-connection state are shared too. */
    private ChannelInitializer<Channel> newInitializer() {
        LineHandler lines = new LineHandler(counters);
        ServerConfig.IdleImpl impl = config.idleImpl();
        ServerConfig.Policy policy = config.policy();
        HeartbeatConfig heartbeat = impl == ServerConfig.IdleImpl.HEARTBEAT ? heartbeatConfig() : null;
        ChannelHandler sharedNettyPolicy = impl != ServerConfig.IdleImpl.NETTY ? null
                : policy == ServerConfig.Policy.CLOSE ? new NettyIdlePolicies.CloseOnIdle(counters)
                : policy == ServerConfig.Policy.EVENT ? new NettyIdlePolicies.CountEvents(counters)
                : null; // ping: one per channel
        long nettyReaderIdleNanos = (policy == ServerConfig.Policy.PING ? config.pingInterval() : config.idleTimeout())
                .toNanos();
        long pingTimeoutNanos = config.pingTimeout().toNanos();
        int maxMissedPings = config.maxMissedPings();
        int maxLine = config.maxLine();
        HeartbeatMonitor heartbeatMonitor = monitor;
        return new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                ChannelPipeline p = ch.pipeline();
                if (heartbeat != null) {
                    p.addLast("idle", heartbeatMonitor.newHandler(heartbeat));
                } else if (impl == ServerConfig.IdleImpl.NETTY) {
                    p.addLast("idle", new IdleStateHandler(false, nettyReaderIdleNanos, 0, 0, TimeUnit.NANOSECONDS));
                    p.addLast("idle-policy", sharedNettyPolicy != null ? sharedNettyPolicy
                            : new NettyIdlePolicies.PingOnIdle(counters, pingTimeoutNanos, maxMissedPings));
                }
                p.addLast("framer", new LineBasedFrameDecoder(maxLine, true, true));
                p.addLast("lines", lines);
            }
        };
    }

    private HeartbeatConfig heartbeatConfig() {
        switch (config.policy()) {
            case CLOSE:
                return HeartbeatConfig.closeWhenIdle().readerIdle(config.idleTimeout()).build();
            case EVENT:
                return HeartbeatConfig.events().readerIdle(config.idleTimeout()).build();
            case PING:
                return HeartbeatConfig.ping(ch -> LineHandler.pingLine())
                        .interval(config.pingInterval())
                        .timeout(config.pingTimeout())
                        .maxMissedPings(config.maxMissedPings())
                        .build();
            default:
                throw new AssertionError(config.policy());
        }
    }

    /**
     * Stops the Heartbeat worker (if any) within the timeout; channels are left as they are.
     *
     * @return whether the worker stopped in time (always true without one)
     */
    public boolean close(Duration timeout) {
        return monitor == null || monitor.close(timeout);
    }

    /** Stops the Heartbeat worker, if any, waiting a bounded time. */
    @Override
    public void close() {
        close(Duration.ofSeconds(2));
    }
}
