/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.testing.LeakDetection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocket13FrameEncoder;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code --probe websocket}: the demo server's WebSocket pipeline ({@code HttpServerCodec},
 * {@code HttpObjectAggregator}, Heartbeat, {@code WebSocketServerProtocolHandler}, the echo) on an
 * {@code EmbeddedChannel}, after a real upgrade, against a client made of Netty's WebSocket frame
 * codec, with Heartbeat's monitor in virtual time. Ping after 100 ms of silence, 2 missed pings of
 * 50 ms each close.
 */
@ExtendWith(LeakDetection.class)
class WebSocketPipelineTest {

    private static final String UPGRADE = "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";

    /** The frames the client received, in order (retained until the test ends). */
    private final List<WebSocketFrame> received = new ArrayList<>();
    private VirtualPair pair;

    @AfterEach
    void tearDown() {
        received.forEach(ReferenceCountUtil::release);
        pair.close();
    }

    private static ServerConfig.Builder config() {
        return ServerConfig.builder().protocol(ServerConfig.Protocol.WEBSOCKET).policy(ServerConfig.Policy.PING)
                .pingInterval(Duration.ofMillis(100)).pingTimeout(Duration.ofMillis(50)).maxMissedPings(2)
                .metricsDisabled().port(0);
    }

    /** Connects; with {@code upgrade}, does the handshake and leaves the client speaking WebSocket. */
    private void start(ServerConfig config, boolean upgrade) {
        pair = new VirtualPair(config, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                received.add((WebSocketFrame) msg);
            }
        });
        if (!upgrade) {
            return;
        }
        pair.server.writeInbound(Unpooled.copiedBuffer(UPGRADE, StandardCharsets.US_ASCII));
        pair.server.runPendingTasks();
        ByteBuf response = pair.server.readOutbound();
        try {
            assertTrue(response.toString(StandardCharsets.US_ASCII).startsWith("HTTP/1.1 101"),
                    response.toString(StandardCharsets.US_ASCII));
        } finally {
            response.release();
        }
        // From now on the client speaks WebSocket: the frame codec (masking its frames, as a client must).
        pair.client.pipeline().addFirst(new WebSocket13FrameDecoder(false, false, 65536),
                new WebSocket13FrameEncoder(true));
    }

    private void send(WebSocketFrame frame) {
        pair.client.writeAndFlush(frame);
        pair.exchange();
    }

    private <T extends WebSocketFrame> T last(Class<T> type) {
        return assertInstanceOf(type, received.get(received.size() - 1));
    }

    @Test
    void echoesTextAndBinaryFrames() {
        start(config().build(), true);
        send(new TextWebSocketFrame("12345"));
        assertEquals("12345", last(TextWebSocketFrame.class).text());
        send(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {1, 2, (byte) 0xFF})));
        assertEquals(3, last(BinaryWebSocketFrame.class).content().readableBytes());
        assertEquals(2, pair.echo.counters().linesEchoed());
    }

    @Test
    void aMatchingPongAnswersThePingAndGivesItsRoundTrip() {
        start(config().build(), true);
        pair.advance(99);
        assertTrue(received.isEmpty(), "no ping before 100 ms of silence");
        pair.advance(2);
        PingWebSocketFrame ping = last(PingWebSocketFrame.class);
        pair.advance(7); // the answer takes 7 ms
        send(new PongWebSocketFrame(ping.content().retainedDuplicate()));
        assertEquals(1, pair.echo.pingRtt().count(), "one round trip recorded");
        assertEquals(7, pair.monitor.rttOf(pair.server).orElseThrow().smoothed().toMillis(), "7 ms, on the ticker");
        assertTrue(pair.echo.pingRtt().exposition().contains("demo_ping_rtt_seconds_max 0.007"),
                pair.echo.pingRtt().exposition());

        int answered = received.size();
        for (int ms = 0; ms < 1_000; ms++) { // a second more, each ping answered as it comes: never closed
            pair.advance(1);
            for (; answered < received.size(); answered++) {
                send(new PongWebSocketFrame(last(PingWebSocketFrame.class).content().retainedDuplicate()));
            }
        }
        assertTrue(pair.server.isOpen());
        assertTrue(received.size() >= 9, "pinged every 100 ms of silence: " + received.size());
        assertEquals(received.size(), pair.echo.pingRtt().count());
    }

    @Test
    void aSilentClientIsToldPingTimeoutThenClosed() {
        start(config().build(), true);
        pair.advance(250); // ping at 100 ms, missed at 150, again, missed at 200: closed
        assertFalse(pair.server.isOpen());
        assertEquals(3, received.size(), "two pings, then the goodbye: " + received);
        CloseWebSocketFrame bye = last(CloseWebSocketFrame.class);
        assertEquals(1001, bye.statusCode(), "going away");
        assertEquals(CloseReason.PING_TIMEOUT.name(), bye.reasonText());
        assertEquals(1, pair.echo.closedFor(CloseReason.PING_TIMEOUT));
    }

    @Test
    void underMatchedOnlyOnlyTheMatchingPongAnswers() {
        start(config().build(), true);
        pair.advance(101);
        PingWebSocketFrame ping = last(PingWebSocketFrame.class);
        long token = ping.content().getLong(ping.content().readerIndex());
        send(new PongWebSocketFrame(Unpooled.copyLong(token + 1))); // someone else's token
        int ms = 101;
        for (; ms < 400 && pair.server.isOpen(); ms++) {
            if (ms % 10 == 0) {
                send(new TextWebSocketFrame("traffic")); // talking does not answer a ping either
            }
            pair.advance(1);
        }
        assertFalse(pair.server.isOpen(), "closed though it talked");
        assertTrue(ms <= 210, "closed at " + ms + " ms: the second ping's timeout, within a few ticks");
        assertEquals(CloseReason.PING_TIMEOUT.name(), last(CloseWebSocketFrame.class).reasonText());
    }

    @Test
    void anyInboundLetsTalkAnswer() {
        start(config().ackMode(AckMode.ANY_INBOUND).build(), true);
        for (int i = 0; i < 50; i++) {
            pair.advance(20);
            send(new TextWebSocketFrame("traffic"));
        }
        assertTrue(pair.server.isOpen());
    }

    /** {@code --police-pings}: the third Ping sooner than 100 ms after the connect, 2 strikes forgiven, closes. */
    @Test
    void aClientThatPingsTooOftenIsToldPolicyViolationThenClosed() {
        start(config().pingInterval(Duration.ofSeconds(10))
                .policePings(new ServerConfig.PeerPingRules(Duration.ofMillis(100), true, 2)).build(), true);
        for (int i = 0; i < 3; i++) {
            pair.advance(10);
            send(new PingWebSocketFrame(Unpooled.copyLong(i)));
        }
        assertFalse(pair.server.isOpen());
        assertEquals(3, received.size(), "two Pongs, then the goodbye: " + received);
        assertInstanceOf(PongWebSocketFrame.class, received.get(1), "the protocol handler answered the strikes");
        CloseWebSocketFrame bye = last(CloseWebSocketFrame.class);
        assertEquals(1008, bye.statusCode(), "policy violation");
        assertEquals("too_many_pings", bye.reasonText());
        assertEquals(1, pair.echo.closedFor(CloseReason.PING_ABUSE));
        assertEquals(0, pair.echo.idleCloses());
    }

    @Test
    void noPingBeforeTheHandshakeButTheSameDeadline() {
        start(config().build(), false);
        pair.advance(199);
        assertTrue(pair.server.isOpen(), "a silent client's close window: 100 ms + 2 x 50 ms");
        pair.advance(2);
        assertFalse(pair.server.isOpen());
        assertNull(pair.server.readOutbound(), "no frame went out: there was no WebSocket yet");
        assertEquals(1, pair.echo.closedFor(CloseReason.READER_IDLE));
    }
}
