/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
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
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Probes#webSocket()} on a real WebSocket server pipeline ({@code HttpServerCodec},
 * {@code HttpObjectAggregator}, {@code WebSocketServerProtocolHandler}, after a real handshake) with a
 * client peer made of Netty's WebSocket frame codec (masking, as a client must). Shows both places
 * the Heartbeat handler may go, and what the default {@code dropPongFrames} does to the wrong one.
 */
class WebSocketProbeTest {

    private static final long TOKEN = 0x1122_3344_5566_7788L;
    private static final String UPGRADE = "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    /** Keeps the WebSocket frames that reach it (and, if it passes them on, retains them); passes the rest on. */
    static final class FrameCatcher extends ChannelInboundHandlerAdapter {
        final List<WebSocketFrame> frames = new ArrayList<>();
        private final boolean passOn;

        FrameCatcher(boolean passOn) {
            this.passOn = passOn;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof WebSocketFrame frame) {
                frames.add(passOn ? frame.retain() : frame);
                if (passOn) {
                    ctx.fireChannelRead(frame);
                }
            } else {
                ctx.fireChannelRead(msg); // the upgrade request goes on to the protocol handler
            }
        }

        void release() {
            frames.forEach(ReferenceCountUtil::release);
        }
    }

    private final Probe probe = Probes.webSocket();
    private final FrameCatcher before = new FrameCatcher(true);
    private final FrameCatcher after = new FrameCatcher(false);
    private EmbeddedChannel server;
    /** The client: decodes the server's (unmasked) frames, encodes its own masked. */
    private final EmbeddedChannel client = new EmbeddedChannel(new WebSocket13FrameDecoder(false, false, 65536),
            new WebSocket13FrameEncoder(true));

    @AfterEach
    void tearDown() {
        before.release();
        after.release();
        server.finishAndReleaseAll();
        client.finishAndReleaseAll();
    }

    /** A server pipeline: codec, aggregator, {@code before}, the protocol handler, {@code after}; handshaken. */
    private void start(boolean dropPongFrames) {
        WebSocketServerProtocolConfig config = WebSocketServerProtocolConfig.newBuilder().websocketPath("/ws")
                .dropPongFrames(dropPongFrames).build();
        server = new EmbeddedChannel(new HttpServerCodec(), new HttpObjectAggregator(65536), before,
                new WebSocketServerProtocolHandler(config), after);
        server.writeInbound(Unpooled.copiedBuffer(UPGRADE, StandardCharsets.US_ASCII));
        server.runPendingTasks();
        ByteBuf response = server.readOutbound();
        try {
            assertTrue(response.toString(StandardCharsets.US_ASCII).startsWith("HTTP/1.1 101"),
                    response.toString(StandardCharsets.US_ASCII));
        } finally {
            response.release();
        }
    }

    /** The server writes the probe's ping from the tail; the client decodes it. */
    private PingWebSocketFrame serverPings(long token) throws Exception {
        server.writeAndFlush(probe.newPing(server.pipeline().lastContext(), token));
        for (ByteBuf b; (b = server.readOutbound()) != null; ) {
            client.writeInbound(b);
        }
        return assertInstanceOf(PingWebSocketFrame.class, client.readInbound());
    }

    /** The client sends a frame to the server. */
    private void clientSends(WebSocketFrame frame) {
        client.writeAndFlush(frame);
        for (ByteBuf b; (b = client.readOutbound()) != null; ) {
            server.writeInbound(b);
        }
    }

    @Test
    void shouldMatchThePongAfterTheProtocolHandlerWhenItKeepsPongs() throws Exception {
        start(false);
        PingWebSocketFrame ping = serverPings(TOKEN);
        try {
            assertEquals(8, ping.content().readableBytes());
            assertEquals(TOKEN, ping.content().getLong(ping.content().readerIndex()), "the token is the data");
            clientSends(new PongWebSocketFrame(ping.content().retainedDuplicate())); // RFC 6455: echo the data
        } finally {
            ping.release();
        }
        clientSends(new PongWebSocketFrame(Unpooled.copyLong(TOKEN - 1)));
        clientSends(new PongWebSocketFrame(Unpooled.copyLong(7)));
        clientSends(new PongWebSocketFrame()); // an unsolicited, empty heartbeat

        assertEquals(4, after.frames.size());
        assertEquals(0, probe.classify(after.frames.get(0), TOKEN, 2), "the matching answer");
        assertTrue(probe.consumes(0));
        assertEquals(1, probe.classify(after.frames.get(1), TOKEN, 2), "the ping before the latest");
        assertEquals(Probe.UNSOLICITED, probe.classify(after.frames.get(2), TOKEN, 2), "someone else's ping");
        assertEquals(Probe.UNSOLICITED, probe.classify(after.frames.get(3), TOKEN, 2), "no token");
        assertFalse(probe.consumes(Probe.UNSOLICITED));
    }

    @Test
    void shouldMatchThePongBeforeTheProtocolHandlerWithItsDefaults() throws Exception {
        start(true);
        PingWebSocketFrame ping = serverPings(TOKEN);
        try {
            clientSends(new PongWebSocketFrame(ping.content().retainedDuplicate()));
        } finally {
            ping.release();
        }

        assertEquals(1, before.frames.size(), "the frame decoder sits where HttpServerCodec was: before us");
        assertEquals(0, probe.classify(before.frames.get(0), TOKEN, 1));
        assertTrue(after.frames.isEmpty());
    }

    @Test
    void shouldNeverSeeAPongAfterTheProtocolHandlerWithItsDefaults() throws Exception {
        start(true);
        int unanswered = 0;
        for (long token = TOKEN; token < TOKEN + Probe.MISPLACEMENT_PINGS; token++) {
            PingWebSocketFrame ping = serverPings(token);
            unanswered++;
            try {
                clientSends(new PongWebSocketFrame(ping.content().retainedDuplicate()));
            } finally {
                ping.release();
            }
        }
        clientSends(new TextWebSocketFrame("traffic flows"));

        // Placed here, the handler sees the text but none of the pongs: what reportMissingAnswers is for.
        assertEquals(1, after.frames.size());
        assertEquals(Probe.NOT_AN_ANSWER, probe.classify(after.frames.get(0), TOKEN + 2, unanswered));
        Probe fresh = Probes.custom(c -> new PingWebSocketFrame(), PongWebSocketFrame.class::isInstance);
        assertTrue(fresh.reportMissingAnswers(server, unanswered), "a WARN, once");
        assertFalse(fresh.reportMissingAnswers(server, unanswered));
    }
}
