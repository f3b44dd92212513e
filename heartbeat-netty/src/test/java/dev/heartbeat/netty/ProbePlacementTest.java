/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A probe on the wrong side of its codec is found when the channel starts, not after missed pings:
 * the pipelines are built as a {@code ChannelInitializer} builds them, one handler after another on an
 * active channel, so the codec may come after the Heartbeat handler; the check runs once the
 * initializer is done (the channel's next task). A placement that can never see the answers the
 * configuration needs is refused (an {@link IllegalStateException} down the pipeline, naming the
 * handlers and the fix, and the channel closed); a right one says nothing.
 */
class ProbePlacementTest {

    /** The application: records the exceptions that reach it, releases what it reads. */
    static final class Application extends ChannelInboundHandlerAdapter {
        final List<Throwable> caught = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        @SuppressWarnings("deprecation")
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            caught.add(cause);
        }
    }

    private final VirtualTime.World world = new VirtualTime.World(3);
    private final Application app = new Application();

    @AfterEach
    void tearDown() {
        world.close();
    }

    private static HeartbeatConfig pings(Probe probe, AckMode ackMode) {
        return HeartbeatConfig.ping(probe).interval(Duration.ofSeconds(10)).timeout(Duration.ofSeconds(2))
                .ackMode(ackMode).build();
    }

    /**
     * A channel whose pipeline gets {@code namesAndHandlers} one by one, then the application, as an
     * initializer adds them; then its pending tasks run.
     */
    private EmbeddedChannel channel(Object... namesAndHandlers) {
        EmbeddedChannel ch = world.channel();
        for (int i = 0; i < namesAndHandlers.length; i += 2) {
            ch.pipeline().addLast((String) namesAndHandlers[i], (ChannelHandler) namesAndHandlers[i + 1]);
        }
        ch.pipeline().addLast("app", app);
        ch.runPendingTasks();
        return ch;
    }

    private void assertRefused(EmbeddedChannel ch, String... words) {
        assertEquals(1, app.caught.size(), "one exception: " + app.caught);
        Throwable t = app.caught.get(0);
        assertTrue(t instanceof IllegalStateException, t.toString());
        for (String w : words) {
            assertTrue(t.getMessage().contains(w), "'" + w + "' in: " + t.getMessage());
        }
        assertFalse(ch.isOpen(), "refused: closed at once, not after missed pings");
    }

    private void assertSilent(EmbeddedChannel ch) {
        assertEquals(List.of(), app.caught);
        assertTrue(ch.isOpen());
    }

    private ChannelHandler heartbeat(HeartbeatConfig config) {
        return world.monitor.newHandler(config);
    }

    /**
     * The codec is added first and the Heartbeat handler put before it: an {@code EmbeddedChannel} runs its
     * pending tasks inside every write, and the codec writes its SETTINGS when it is added, which would run
     * the check in the middle of the initializer (an event loop runs it after). The MQTT and WebSocket
     * cases add the codec after the Heartbeat handler.
     */
    @Test
    void anHttp2ProbeBeforeHttp2FrameCodecIsRefusedWhenTheChannelStarts() {
        EmbeddedChannel ch = channel("h2", Http2FrameCodecBuilder.forServer().build());
        ch.pipeline().addBefore("h2", "heartbeat", heartbeat(pings(Probes.http2(), AckMode.MATCHED_ONLY)));
        ch.runPendingTasks();
        assertRefused(ch, "'heartbeat'", "'h2'", "after Http2FrameCodec");
    }

    @Test
    void anHttp2ProbeAfterHttp2FrameCodecIsSilent() {
        EmbeddedChannel ch = channel("h2", Http2FrameCodecBuilder.forServer().build(),
                "heartbeat", heartbeat(pings(Probes.http2(), AckMode.MATCHED_ONLY)));
        assertSilent(ch);
    }

    @Test
    void aWebSocketProbeBeforeTheHttpCodecIsRefused() {
        EmbeddedChannel ch = channel("heartbeat", heartbeat(pings(Probes.webSocket(), AckMode.MATCHED_EXTENDS)),
                "http", new HttpServerCodec(), "aggregator", new HttpObjectAggregator(65536),
                "ws", new WebSocketServerProtocolHandler("/ws"));
        assertRefused(ch, "'heartbeat'", "'http'", "after");
    }

    @Test
    void aWebSocketProbeAfterAProtocolHandlerThatDropsPongsIsRefused() {
        EmbeddedChannel ch = channel("http", new HttpServerCodec(), "aggregator", new HttpObjectAggregator(65536),
                "ws", new WebSocketServerProtocolHandler("/ws"),
                "heartbeat", heartbeat(pings(Probes.webSocket(), AckMode.MATCHED_ONLY)));
        assertRefused(ch, "'heartbeat'", "'ws'", "dropPongFrames(false)");
    }

    @Test
    void aWebSocketProbeAfterAProtocolHandlerThatKeepsPongsIsSilent() {
        WebSocketServerProtocolConfig keepsPongs = WebSocketServerProtocolConfig.newBuilder().websocketPath("/ws")
                .dropPongFrames(false).build();
        EmbeddedChannel ch = channel("http", new HttpServerCodec(), "aggregator", new HttpObjectAggregator(65536),
                "ws", new WebSocketServerProtocolHandler(keepsPongs),
                "heartbeat", heartbeat(pings(Probes.webSocket(), AckMode.MATCHED_ONLY)));
        assertSilent(ch);
    }

    @Test
    void aWebSocketProbeBetweenTheHttpCodecAndTheProtocolHandlerIsSilent() {
        EmbeddedChannel ch = channel("http", new HttpServerCodec(), "aggregator", new HttpObjectAggregator(65536),
                "heartbeat", heartbeat(pings(Probes.webSocket(), AckMode.MATCHED_ONLY)),
                "ws", new WebSocketServerProtocolHandler("/ws"));
        assertSilent(ch);
    }

    @Test
    void anMqttProbeBeforeMqttDecoderIsRefused() {
        EmbeddedChannel ch = channel("heartbeat", heartbeat(pings(Probes.mqttClient(), AckMode.MATCHED_ONLY)),
                "decoder", new MqttDecoder(), "encoder", MqttEncoder.INSTANCE);
        assertRefused(ch, "'heartbeat'", "'decoder'", "after MqttDecoder");
    }

    @Test
    void anMqttProbeAfterMqttDecoderIsSilent() {
        EmbeddedChannel ch = channel("decoder", new MqttDecoder(), "encoder", MqttEncoder.INSTANCE,
                "heartbeat", heartbeat(pings(Probes.mqttClient(), AckMode.MATCHED_ONLY)));
        assertSilent(ch);
    }

    /** With ANY_INBOUND any read settles a ping, so the misplaced probe still keeps live peers: a WARN, no refusal. */
    @Test
    void aMisplacedProbeUnderAnyInboundIsWarnedAboutNotRefused() {
        EmbeddedChannel ch = channel("h2", Http2FrameCodecBuilder.forServer().build());
        HeartbeatConfig config = pings(Probes.http2(), AckMode.ANY_INBOUND);
        ch.pipeline().addBefore("h2", "heartbeat", heartbeat(config));
        ch.runPendingTasks();
        assertSilent(ch);
        assertEquals(ProbePlacement.Outcome.WARNED, 
                ProbePlacement.check(ch.pipeline().context("heartbeat"), config.plan));
    }

    @Test
    void aPipelineWithoutTheCodecIsWarnedAbout() {
        HeartbeatConfig config = pings(Probes.mqttClient(), AckMode.MATCHED_ONLY);
        EmbeddedChannel ch = channel("heartbeat", heartbeat(config));
        assertSilent(ch);
        assertEquals(ProbePlacement.Outcome.WARNED, 
                ProbePlacement.check(ch.pipeline().context("heartbeat"), config.plan));
    }

    @Test
    void anHttp2ProbeInAStreamsPipelineIsRefused() {
        // An Http2StreamChannel's pipeline: the child channels Http2MultiplexHandler makes for each stream.
        EmbeddedChannel connection = channel("h2", Http2FrameCodecBuilder.forServer().build(),
                "multiplex", new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
        Channel stream = new Http2StreamChannelBootstrap(connection).handler(new ChannelInboundHandlerAdapter())
                .open().syncUninterruptibly().getNow();
        Application streamApp = new Application();
        stream.pipeline().addLast("heartbeat", heartbeat(pings(Probes.http2(), AckMode.MATCHED_ONLY)));
        stream.pipeline().addLast("app", streamApp);
        connection.runPendingTasks();
        assertEquals(1, streamApp.caught.size(), "refused: " + streamApp.caught);
        assertTrue(streamApp.caught.get(0).getMessage().contains("connection's pipeline"),
                streamApp.caught.get(0).getMessage());
        assertFalse(stream.isOpen());
    }

    @Test
    void theCheckedPlacementsAreSilentWhenCheckedAgain() {
        HeartbeatConfig config = pings(Probes.http2(), AckMode.MATCHED_ONLY);
        EmbeddedChannel ch = channel("h2", Http2FrameCodecBuilder.forServer().build(), "heartbeat", heartbeat(config));
        assertEquals(ProbePlacement.Outcome.SILENT, 
                ProbePlacement.check(ch.pipeline().context("heartbeat"), config.plan));
    }
}
