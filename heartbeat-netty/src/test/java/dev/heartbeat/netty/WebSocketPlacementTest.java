/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The misplacement WARN after missed answers, through the handler on a real server pipeline in virtual
 * time: Netty's {@code WebSocketServerProtocolHandler} drops Pong frames by default, so a Heartbeat
 * handler after it writes pings whose answers never reach it while the peer's text keeps coming; it
 * says so once. Placed before the protocol handler, it sees every Pong and says nothing. The probe
 * here is a custom one around {@link Probes#webSocket()}, which does not judge its place when the
 * channel starts (the built-in probe would be refused then: {@code ProbePlacementTest}): this WARN is
 * the check for such probes.
 */
class WebSocketPlacementTest {

    private static final String UPGRADE = "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    /** {@link Probes#webSocket()}, counting the WARNs it logs (a fresh instance: the WARN is once per probe). */
    static final class WatchedWebSocketProbe extends Probe {
        private final Probe webSocket = Probes.webSocket();
        int warnings;

        WatchedWebSocketProbe() {
            super(Matching.BY_TOKEN, true);
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) throws Exception {
            return webSocket.newPing(ctx, token);
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return webSocket.isAnswer(msg);
        }

        @Override
        protected long tokenOf(Object answer) {
            return webSocket.tokenOf(answer);
        }

        @Override
        protected String placementAdvice() {
            return webSocket.placementAdvice();
        }

        @Override
        boolean reportMissingAnswers(Channel channel, int pingsWithoutAnswer) {
            boolean logged = super.reportMissingAnswers(channel, pingsWithoutAnswer);
            if (logged) {
                warnings++;
            }
            return logged;
        }
    }

    /** The application: takes the text frames (and releases them). */
    @ChannelHandler.Sharable
    static final class Application extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }
    }

    private final VirtualTime.World world = new VirtualTime.World(3);
    private final WatchedWebSocketProbe probe = new WatchedWebSocketProbe();
    /** Keep-alive pings every second we do not write; matched Pongs only; never closes within the test. */
    private final HeartbeatConfig config = HeartbeatConfig.ping(probe).interval(Duration.ofSeconds(1))
            .timeout(Duration.ofSeconds(1)).maxMissedPings(100).ackMode(AckMode.MATCHED_ONLY).whenWriterIdle().build();
    /** The client: decodes the server's (unmasked) frames, encodes its own masked. */
    private final EmbeddedChannel client = new EmbeddedChannel(new WebSocket13FrameDecoder(false, false, 65536),
            new WebSocket13FrameEncoder(true));
    private EmbeddedChannel server;
    private int pongs;

    @AfterEach
    void tearDown() {
        world.close();
        client.finishAndReleaseAll();
    }

    /** The server pipeline with the Heartbeat handler before or after the protocol handler (default settings). */
    private void start(boolean heartbeatFirst) {
        ChannelHandler heartbeat = world.monitor.newHandler(config);
        WebSocketServerProtocolHandler protocol = new WebSocketServerProtocolHandler("/ws");
        server = world.channel(new HttpServerCodec(), new HttpObjectAggregator(65536),
                heartbeatFirst ? heartbeat : protocol, heartbeatFirst ? protocol : heartbeat, new Application());
        server.writeInbound(Unpooled.copiedBuffer(UPGRADE, StandardCharsets.US_ASCII));
        server.runPendingTasks();
        ByteBuf response = server.readOutbound();
        try {
            assertTrue(response.toString(StandardCharsets.US_ASCII).startsWith("HTTP/1.1 101"));
        } finally {
            response.release();
        }
    }

    /** 8 s: the client sends text every 500 ms and answers every ping with its Pong, as a browser does. */
    private void talk() {
        for (int ms = 100; ms <= 8_000; ms += 100) {
            world.advance(100);
            for (ByteBuf b; (b = server.readOutbound()) != null; ) {
                client.writeInbound(b);
            }
            for (Object frame; (frame = client.readInbound()) != null; ) {
                if (frame instanceof PingWebSocketFrame ping) {
                    clientSends(new PongWebSocketFrame(ping.content().retainedDuplicate()));
                    pongs++;
                }
                ReferenceCountUtil.release(frame);
            }
            if (ms % 500 == 0) {
                clientSends(new TextWebSocketFrame("traffic " + ms));
            }
        }
    }

    private void clientSends(Object frame) {
        client.writeAndFlush(frame);
        for (ByteBuf b; (b = client.readOutbound()) != null; ) {
            server.writeInbound(b);
        }
    }

    @Test
    void afterTheProtocolHandlerItWarnsOnceThatThePongsAreSwallowed() {
        start(false);
        talk();
        assertTrue(pongs >= Probe.MISPLACEMENT_PINGS, "the client answered every ping: " + pongs);
        assertEquals(1, probe.warnings, "one WARN: pings written, traffic flowing, no Pong ever seen");
        assertEquals(0, world.monitor.answersConsumed());
        assertTrue(world.monitor.rttOf(server).isEmpty());
    }

    @Test
    void beforeTheProtocolHandlerItSeesThePongsAndSaysNothing() {
        start(true);
        talk();
        assertTrue(pongs >= Probe.MISPLACEMENT_PINGS, "pings went out: " + pongs);
        assertEquals(0, probe.warnings);
        assertEquals(pongs, world.monitor.answersConsumed(), "every Pong recognised and kept from the application");
        assertTrue(world.monitor.rttOf(server).isPresent());
        assertTrue(server.isOpen());
    }
}
