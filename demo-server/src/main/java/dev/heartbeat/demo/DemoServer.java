/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The demo echo server: newline-delimited text lines over TCP, echoed back; idle connections handled
 * by Heartbeat, by Netty's {@code IdleStateHandler} (for A/B runs) or not at all; and an HTTP
 * endpoint with Prometheus metrics. {@link #start} binds and returns; {@link #close} stops it.
 *
 * <pre>{@code
 * try (DemoServer server = DemoServer.start(ServerConfig.builder().port(0).metricsPort(0).build())) {
 *     int port = server.port();          // the OS-chosen port
 *     ...
 * }
 * }</pre>
 *
 * <p>The command line is {@link DemoCommand}; {@link #main} runs it.
 */
public final class DemoServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DemoServer.class);

    /** How long {@link #close} lets event loops finish: well inside the 5 s a stop may take. */
    private static final long SHUTDOWN_TIMEOUT_MILLIS = 2_500;
    /**
     * {@code TCP_NOTSENT_LOWAT} of each accepted channel when a write stall is guarded (epoll): the kernel
     * reports a socket writable once fewer unsent bytes than this wait in it, so Netty's outbound buffer,
     * which the guard watches, moves as the peer drains. 16 KiB: about a segment ten times over.
     */
    static final long NOTSENT_LOWAT_BYTES = 16 * 1024;

    private final ServerConfig config;
    private final String transport;
    private final EchoPipeline echo;
    private final DemoCounters counters;
    private final HeartbeatMonitor monitor;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    private final ExecutorService blocking;
    private final Metrics metrics;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final CountDownLatch closed = new CountDownLatch(1);
    private Channel serverChannel;
    private Channel metricsChannel;

    private DemoServer(ServerConfig config) {
        this.config = config;
        boolean epoll;
        switch (config.transport()) {
            case EPOLL:
                if (!Epoll.isAvailable()) {
                    throw new IllegalStateException("--transport epoll: epoll is not available here: "
                            + Epoll.unavailabilityCause());
                }
                epoll = true;
                break;
            case NIO:
                epoll = false;
                break;
            default:
                epoll = Epoll.isAvailable();
                break;
        }
        this.transport = epoll ? "epoll" : "nio";
        this.bossGroup = newGroup(epoll, 1, "demo-boss");
        this.workerGroup = newGroup(epoll, config.workerThreads(), "demo-worker");
        this.echo = EchoPipeline.create(config, workerGroup.next());
        if (config.loopLag() != null) {
            echo.loopLag().start(workerGroup, config.loopLag());
        }
        this.counters = echo.counters();
        this.monitor = echo.monitor();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(4),
                new DefaultThreadFactory("demo-debug", true));
        this.blocking = pool;
        this.metrics = new Metrics(config, transport, echo);
    }

    // EpollEventLoopGroup and NioEventLoopGroup are deprecated in Netty 4.2 (in favour of
    // MultiThreadIoEventLoopGroup, which 4.1 lacks); this server builds against both.
    @SuppressWarnings("deprecation")
    private static EventLoopGroup newGroup(boolean epoll, int threads, String name) {
        DefaultThreadFactory factory = new DefaultThreadFactory(name);
        return epoll ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }

    /**
     * Starts a server and binds its ports.
     *
     * @throws IllegalStateException if epoll was asked for but is not available
     * @throws Exception if a port cannot be bound (the server is then already closed)
     */
    public static DemoServer start(ServerConfig config) throws Exception {
        DemoServer server = new DemoServer(config);
        try {
            server.bind();
            return server;
        } catch (Exception | Error e) {
            server.close();
            throw e;
        }
    }

    private void bind() throws InterruptedException {
        Class<? extends ServerChannel> channelClass =
                "epoll".equals(transport) ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(bossGroup, workerGroup)
                .channel(channelClass)
                .option(ChannelOption.SO_BACKLOG, 8192)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(echo.initializer());
        if ("epoll".equals(transport) && !config.lifecycle().writeStall().isZero()) {
            // A write-stall guard sees progress where Netty sees it: bytes leaving its outbound buffer. Without a
            // low-water mark on the unsent bytes, Linux wakes the writer only once a third of an autotuned send
            // buffer (up to megabytes) is free, so a reader that drains slowly looks stalled for seconds.
            bootstrap.childOption(EpollChannelOption.TCP_NOTSENT_LOWAT, NOTSENT_LOWAT_BYTES);
        }
        serverChannel = bootstrap
                .bind(config.host(), config.port())
                .sync()
                .channel();
        if (config.metricsEnabled()) {
            HttpEndpoints endpoints = new HttpEndpoints(metrics, counters, blocking,
                    config.idleImpl() == ServerConfig.IdleImpl.HEARTBEAT ? echo.monitor() : null);
            metricsChannel = new ServerBootstrap()
                    .group(bossGroup, workerGroup)
                    .channel(channelClass)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(64 * 1024),
                                    endpoints);
                        }
                    })
                    .bind(config.host(), config.metricsPort())
                    .sync()
                    .channel();
        }
    }

    /** The settings. */
    public ServerConfig config() {
        return config;
    }

    /** The echo server's bound address. */
    public InetSocketAddress address() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** The echo server's bound port: the OS-chosen one if configured as 0. */
    public int port() {
        return address().getPort();
    }

    /** The HTTP endpoint's bound port, or -1 if disabled. */
    public int metricsPort() {
        return metricsChannel == null ? -1 : ((InetSocketAddress) metricsChannel.localAddress()).getPort();
    }

    /** "epoll" or "nio". */
    public String transport() {
        return transport;
    }

    /** The server's counters. */
    public DemoCounters counters() {
        return counters;
    }

    /** The Heartbeat monitor, or null unless the idle impl is heartbeat. */
    public HeartbeatMonitor monitor() {
        return monitor;
    }

    /** The Prometheus text that {@code GET /metrics} serves. */
    public String renderMetrics() {
        return metrics.scrape();
    }

    /**
     * The one line printed at startup, which a parent process can wait for, e.g.
     * {@code demo-server listening on 127.0.0.1:7000 (transport=epoll, idle-impl=heartbeat,
     * policy=close, idle-timeout=30s) metrics on :9100}.
     */
    public String readyLine() {
        InetSocketAddress a = address();
        String host = a.getHostString();
        if (host.indexOf(':') >= 0) {
            host = "[" + host + "]";
        }
        return "demo-server listening on " + host + ":" + a.getPort() + " (transport=" + transport
                + ", idle-impl=" + config.idleImpl() + ", " + config.idleSummary() + ")"
                + (metricsChannel == null ? " metrics off" : " metrics on :" + metricsPort());
    }

    /** Waits until {@link #close} has finished. */
    public void awaitClosed() throws InterruptedException {
        closed.await();
    }

    /**
     * Stops accepting, closes every connection and the event loops, then the Heartbeat monitor.
     * Bounded (about 3 s at worst); idempotent; callers after the first wait for the first.
     */
    @Override
    public void close() {
        if (!closing.compareAndSet(false, true)) {
            try {
                closed.await(SHUTDOWN_TIMEOUT_MILLIS + 1_000, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        try {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_TIMEOUT_MILLIS);
            if (serverChannel != null) {
                serverChannel.close().awaitUninterruptibly(500); // stop accepting first
            }
            if (metricsChannel != null) {
                metricsChannel.close().awaitUninterruptibly(500);
            }
            // Shutting the loops down closes every channel registered with them.
            Future<?> workers = workerGroup.shutdownGracefully(0, SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            Future<?> boss = bossGroup.shutdownGracefully(0, SHUTDOWN_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            blocking.shutdownNow();
            workers.awaitUninterruptibly(remainingMillis(deadline));
            boss.awaitUninterruptibly(remainingMillis(deadline));
            if (!echo.close(Duration.ofMillis(Math.max(100, remainingMillis(deadline))))) {
                LOG.warn("the Heartbeat worker did not stop in time");
            }
        } finally {
            closed.countDown();
        }
    }

    private static long remainingMillis(long deadline) {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    /** Runs the command line: see {@code --help}. */
    public static void main(String[] args) {
        int status = DemoCommand.run(args);
        if (status != 0) {
            System.exit(status);
        }
    }
}
