/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.time.Duration;
import java.util.function.Consumer;
import java.util.function.Predicate;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.PingPolicing;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.probe.Probes;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.util.concurrent.EventExecutor;

/**
 * The demo server's per-connection pipeline, independent of the transport: the protocol that
 * {@link ServerConfig#protocol()} selects ({@code --probe}: lines, WebSocket, HTTP/2 or MQTT), with
 * the idle handling that {@link ServerConfig#idleImpl()} selects where that protocol needs it, and
 * the echo. {@link DemoServer} puts it behind TCP; the load test puts the very same pipeline behind
 * Netty's in-JVM local transport, so both measure one server.
 *
 * <pre>{@code
 * try (EchoPipeline echo = EchoPipeline.create(config, workers.next())) { // starts the Heartbeat worker
 *     new ServerBootstrap().group(boss, workers).channel(LocalServerChannel.class)
 *             .childHandler(echo.initializer()).bind(new LocalAddress("echo"));
 *     ...
 * }                                                                  // stops the worker
 * }</pre>
 *
 * <table>
 * <caption>Pipelines</caption>
 * <tr><th>--probe</th><th>pipeline (idle: Heartbeat's handler, or IdleStateHandler and its policy; police:
 *     the ping policing, with {@code --police-pings} only)</th></tr>
 * <tr><td>line</td><td>idle, LineBasedFrameDecoder, police ({@link LineProbe}: PING lines),
 *     {@link LineHandler}</td></tr>
 * <tr><td>websocket</td><td>HttpServerCodec, HttpObjectAggregator, idle, police (Ping frames: before
 *     WebSocketServerProtocolHandler, which answers and drops them), WebSocketServerProtocolHandler
 *     ({@code /ws}), {@link WebSocketEcho}</td></tr>
 * <tr><td>http2</td><td>Http2FrameCodec (h2c, prior knowledge), idle, police (PING frames), {@link Http2Echo}</td></tr>
 * <tr><td>mqtt</td><td>idle (until CONNECT: {@code --idle-timeout}), MqttDecoder, MqttEncoder, the keep-alive
 *     rule ({@code MqttKeepAlive}: 1.5 x the Keep Alive of CONNECT), police (PINGREQ), {@link MqttEcho}</td></tr>
 * </table>
 *
 * <p>The ping policing ({@link PingPolicing}) judges each peer ping as it arrives, from one clock read,
 * and needs no timer: it runs alike under every idle impl. Its closes are counted by a Heartbeat
 * monitor: the idle handling's with {@code --idle-impl heartbeat}; with the others, one of this
 * pipeline's own whose worker never starts (it lends the policing its clock and counts).
 *
 * <p>Thread-safe; the initializer is shared by every accepted channel. Only the settings of the idle
 * handling, the protocol and {@link ServerConfig#maxLine()} are used; host, ports and threads are the
 * caller's.
 */
public final class EchoPipeline implements AutoCloseable {

    /** The largest HTTP request (the WebSocket upgrade), WebSocket frame and MQTT packet the server takes. */
    private static final int MAX_HTTP_BYTES = 64 * 1024;

    private final ServerConfig config;
    private final DemoCounters counters = new DemoCounters();
    private final PingRtt pingRtt = new PingRtt();
    private final LoopLag loopLag = new LoopLag();
    /** The name of the ping policing handler ({@code --police-pings}). */
    static final String POLICE = "police-pings";

    private final HeartbeatMonitor monitor; // null unless the idle impl is heartbeat
    private final boolean ownsMonitor;
    /** Counts the ping policing's closes: null without it, else the monitor or (other idle impls) an unstarted one. */
    private final HeartbeatMonitor policingMonitor;
    private final ChannelInitializer<Channel> initializer;

    private EchoPipeline(ServerConfig config, HeartbeatMonitor monitor, boolean ownsMonitor) {
        this.config = config;
        this.monitor = monitor;
        this.ownsMonitor = ownsMonitor;
        this.policingMonitor = !config.policesPings() ? null
                : monitor != null ? monitor : HeartbeatMonitor.builder().build(); // never started: no thread
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
        if (config.idleImpl() != ServerConfig.IdleImpl.HEARTBEAT) {
            return new EchoPipeline(config, null, false);
        }
        HeartbeatMonitor.Builder b = HeartbeatMonitor.builder().actionBudget(config.lifecycle().actionBudget())
                .lazyHandOffs(config.lazyHandOffs());
        if (config.tick() != null) {
            b.tick(config.tick());
        }
        if (config.workerHost() == ServerConfig.WorkerHost.LOOP) {
            if (host == null) {
                throw new IllegalArgumentException("worker-host=loop needs an event loop to host the cycles");
            }
            b.hostedBy(host);
        }
        return new EchoPipeline(config, b.build().startWorker(), true);
    }

    /**
     * The pipeline with a monitor of the caller's (tests: a monitor on a manual ticker, run with
     * {@code runOnce()}); {@link #close} leaves it running.
     *
     * @throws IllegalArgumentException unless the settings say {@code --idle-impl heartbeat}
     */
    static EchoPipeline withMonitor(ServerConfig config, HeartbeatMonitor monitor) {
        if (config.idleImpl() != ServerConfig.IdleImpl.HEARTBEAT) {
            throw new IllegalArgumentException("a monitor serves --idle-impl heartbeat only, not " + config.idleImpl());
        }
        return new EchoPipeline(config, monitor, false);
    }

    /** The child handler of a {@code ServerBootstrap}: sets up each accepted channel's pipeline. */
    public ChannelInitializer<Channel> initializer() {
        return initializer;
    }

    /** The counters every connection of this pipeline bumps. */
    public DemoCounters counters() {
        return counters;
    }

    /** The round-trip times of the server's pings. */
    public PingRtt pingRtt() {
        return pingRtt;
    }

    /** The lag of the server's event loops, once its owner starts the probes ({@code --loop-lag}). */
    public LoopLag loopLag() {
        return loopLag;
    }

    /** The Heartbeat monitor, or null unless the idle impl is heartbeat. */
    public HeartbeatMonitor monitor() {
        return monitor;
    }

    /** Pings written to silent clients (ping policy), by either idle impl. */
    public long pingsSent() {
        return monitor == null ? counters.pingsSent.sum() : monitor.stats().pingsSent();
    }

    /**
     * Connections closed for idleness (close policy) or unanswered pings (ping policy), by either idle
     * impl; not those the ping policing closed.
     */
    public long idleCloses() {
        return monitor == null ? counters.closedReaderIdle.sum() + counters.closedPingTimeout.sum()
                : monitor.stats().closedTotal() - monitor.stats().closed(CloseReason.PING_ABUSE);
    }

    /**
     * Connections closed for {@code reason}, by either idle impl (the netty impl closes for two reasons
     * only), and for {@code PING_ABUSE} by the ping policing.
     */
    public long closedFor(CloseReason reason) {
        if (monitor != null) {
            return monitor.stats().closed(reason);
        }
        switch (reason) {
            case READER_IDLE:
                return counters.closedReaderIdle.sum();
            case PING_TIMEOUT:
                return counters.closedPingTimeout.sum();
            case PING_ABUSE:
                return policingMonitor == null ? 0 : policingMonitor.stats().closed(reason);
            default:
                return 0;
        }
    }

    /** The settings. */
    public ServerConfig config() {
        return config;
    }

    /** One initializer for all connections; the handlers without per-connection state are shared too. */
    private ChannelInitializer<Channel> newInitializer() {
        Consumer<ChannelPipeline> protocol;
        switch (config.protocol()) {
            case LINE:
                protocol = line();
                break;
            case WEBSOCKET:
                protocol = webSocket();
                break;
            case HTTP2:
                protocol = http2();
                break;
            case MQTT:
                protocol = mqtt();
                break;
            default:
                throw new AssertionError(config.protocol());
        }
        return new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                protocol.accept(ch.pipeline());
            }
        };
    }

    private IdleHandling idle(Probe probe, Predicate<Object> mayAnswer) {
        return IdleHandling.create(config, monitor, counters, pingRtt, probe, mayAnswer);
    }

    /** The ping policing of the peer pings {@code probe} recognises, or null without {@code --police-pings}. */
    private PingPolicing policing(Probe probe) {
        ServerConfig.PeerPingRules rules = config.peerPingRules();
        return rules == null ? null : PingPolicing.builder(probe).minInterval(rules.minInterval())
                .permitWithoutTraffic(rules.permitWithoutTraffic()).maxStrikes(rules.maxStrikes()).build();
    }

    /** Adds the policing handler at the end of {@code p}, if pings are policed. */
    private void police(ChannelPipeline p, PingPolicing policing) {
        if (policing != null) {
            p.addLast(POLICE, policing.newHandler(policingMonitor));
        }
    }

    private Consumer<ChannelPipeline> line() {
        IdleHandling idle = idle(Probes.of(ch -> LineHandler.pingLine()), null);
        PingPolicing policing = policing(LineProbe.INSTANCE);
        LineHandler lines = new LineHandler(counters);
        int maxLine = config.maxLine();
        return p -> {
            idle.addTo(p, false);
            p.addLast("framer", new LineBasedFrameDecoder(maxLine, true, true));
            police(p, policing); // after the framer: judges whole lines
            p.addLast("echo", lines);
        };
    }

    private Consumer<ChannelPipeline> webSocket() {
        IdleHandling idle = idle(Probes.webSocket(), PongWebSocketFrame.class::isInstance);
        PingPolicing policing = policing(Probes.webSocket());
        WebSocketEcho echo = new WebSocketEcho(counters, idle);
        // Pongs are dropped by the protocol handler (its default): the idle handler goes before it.
        WebSocketServerProtocolConfig ws = WebSocketServerProtocolConfig.newBuilder()
                .websocketPath(ServerConfig.WEBSOCKET_PATH).maxFramePayloadLength(MAX_HTTP_BYTES).build();
        return p -> {
            p.addLast("http", new HttpServerCodec());
            p.addLast("http-aggregator", new HttpObjectAggregator(MAX_HTTP_BYTES));
            idle.addTo(p, true);
            police(p, policing); // before the protocol handler, which answers Pings and drops them
            p.addLast("ws", new WebSocketServerProtocolHandler(ws));
            p.addLast("echo", echo);
        };
    }

    private Consumer<ChannelPipeline> http2() {
        IdleHandling idle = idle(Probes.http2(), m -> m instanceof Http2PingFrame ping && ping.ack());
        PingPolicing policing = policing(Probes.http2());
        Http2Echo echo = new Http2Echo(counters, config.idleImpl() == ServerConfig.IdleImpl.HEARTBEAT
                && config.policy() == ServerConfig.Policy.PING);
        return p -> {
            p.addLast("h2", Http2FrameCodecBuilder.forServer().build()); // h2c: the client's preface comes first
            idle.addTo(p, false); // after the codec: sees the PING ACK frames
            police(p, policing); // the codec acks each PING itself and passes it on
            p.addLast("echo", echo);
        };
    }

    private Consumer<ChannelPipeline> mqtt() {
        IdleHandling idle = idle(null, null); // the server never pings: --policy close, until CONNECT
        ChannelHandler keepAlive = idle.mqttKeepAlive(); // 1.5 x the Keep Alive from CONNECT on; sharable
        PingPolicing policing = policing(Probes.mqttClient()); // the clients' PINGREQ
        MqttEcho echo = new MqttEcho(counters);
        return p -> {
            idle.addTo(p, false);
            p.addLast("mqtt-decoder", new MqttDecoder(MAX_HTTP_BYTES));
            p.addLast("mqtt-encoder", MqttEncoder.INSTANCE);
            if (keepAlive != null) {
                p.addLast("mqtt-keep-alive", keepAlive);
            }
            police(p, policing);
            p.addLast("echo", echo);
        };
    }

    /**
     * Stops the Heartbeat worker (if this pipeline started one) within the timeout, and the loop lag
     * probes; channels are left as they are.
     *
     * @return whether the worker stopped in time (always true without one)
     */
    public boolean close(Duration timeout) {
        loopLag.stop();
        if (policingMonitor != null && policingMonitor != monitor) {
            policingMonitor.close(timeout); // never started: returns at once
        }
        return monitor == null || !ownsMonitor || monitor.close(timeout);
    }

    /** Stops the Heartbeat worker, if any, waiting a bounded time. */
    @Override
    public void close() {
        close(Duration.ofSeconds(2));
    }
}
