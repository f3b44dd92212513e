/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.CloseSequence;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link PingPolicing} in virtual time: what a peer's pings may do, and what happens when they may not. */
class PingPolicingTest {

    private final ManualTicker ticker = new ManualTicker(-TimeUnit.HOURS.toNanos(1)); // below zero on purpose
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
    private final List<Object> events = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    /** Keeps user events; releases what it reads. */
    private final class Events extends ChannelInboundHandlerAdapter {
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }
    }

    @AfterEach
    void tearDown() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
        monitor.close();
    }

    private EmbeddedChannel police(PingPolicing policing) {
        EmbeddedChannel ch = new EmbeddedChannel(policing.newHandler(monitor), new Events());
        channels.add(ch);
        return ch;
    }

    private void advanceSeconds(long s) {
        ticker.advance(s, TimeUnit.SECONDS);
    }

    private static PingPolicing.Builder http2() {
        return PingPolicing.builder(Probes.http2()).minInterval(Duration.ofSeconds(10));
    }

    @Test
    void shouldAcceptPingsExactlyTheMinimumIntervalApartForever() {
        EmbeddedChannel ch = police(http2().permitWithoutTraffic(true).maxStrikes(0).build());
        for (int i = 0; i < 100; i++) {
            advanceSeconds(10);
            ch.writeInbound(new DefaultHttp2PingFrame(i));
        }
        assertTrue(ch.isOpen());
        assertNull(ch.readOutbound());
        assertEquals(0, monitor.stats().closed(CloseReason.PING_ABUSE));
    }

    @Test
    void shouldCloseWithGoAwayEnhanceYourCalmAfterTheStrikes() {
        EmbeddedChannel ch = police(http2().permitWithoutTraffic(true).build()); // 2 strikes forgiven
        advanceSeconds(10);
        ch.writeInbound(new DefaultHttp2PingFrame(1)); // accepted
        advanceSeconds(9);
        ch.writeInbound(new DefaultHttp2PingFrame(2)); // 1 s early: strike 1
        ch.writeInbound(new DefaultHttp2PingFrame(3)); // strike 2
        assertTrue(ch.isOpen());
        assertTrue(events.isEmpty());
        ch.writeInbound(new DefaultHttp2PingFrame(4)); // strike 3: more than maxStrikes

        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.PING_ABUSE)), events, "announced before the close");
        Http2GoAwayFrame goAway = assertInstanceOf(Http2GoAwayFrame.class, ch.readOutbound());
        assertEquals(Http2Error.ENHANCE_YOUR_CALM.code(), goAway.errorCode());
        assertEquals("too_many_pings", goAway.content().toString(StandardCharsets.US_ASCII));
        goAway.release();
        assertFalse(ch.isOpen(), "closed once the goodbye was written");
        assertEquals(1, monitor.stats().closed(CloseReason.PING_ABUSE));
    }

    @Test
    void shouldHoldPingsWithoutTrafficToTheLongerInterval() {
        EmbeddedChannel ch = police(http2().minIntervalWithoutTraffic(Duration.ofSeconds(60)).maxStrikes(0).build());
        advanceSeconds(10);
        ch.writeInbound(new DefaultHttp2DataFrame(Unpooled.copyLong(1)));
        ch.writeInbound(new DefaultHttp2PingFrame(1)); // traffic since the start: 10 s is enough
        assertTrue(ch.isOpen());
        advanceSeconds(59);
        ch.writeInbound(new DefaultHttp2PingFrame(2)); // no traffic since the last ping: needs 60 s
        assertFalse(ch.isOpen());
        ReferenceCountUtil.release(ch.readOutbound());
    }

    @Test
    void shouldForgiveStrikesWhenTheApplicationWrites() {
        EmbeddedChannel ch = police(http2().permitWithoutTraffic(true).maxStrikes(1).build());
        for (int i = 0; i < 10; i++) {
            advanceSeconds(1);
            ch.writeInbound(new DefaultHttp2PingFrame(i)); // each too early: strike 1
            ch.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.copyLong(i))); // the server answers data: forgiven
            ReferenceCountUtil.release(ch.readOutbound());
        }
        assertTrue(ch.isOpen(), "never more than one strike between two writes of the application");
        advanceSeconds(1);
        ch.writeInbound(new DefaultHttp2PingFrame(10));
        ch.writeInbound(new DefaultHttp2PingFrame(11));
        assertFalse(ch.isOpen(), "two strikes in a row with nothing written in between");
        ReferenceCountUtil.release(ch.readOutbound());
    }

    /** gRPC's rule: a request in between forgives the strikes (issue 26, item 13). */
    @Test
    void shouldForgiveStrikesWhenTheApplicationReads() {
        EmbeddedChannel ch = police(http2().permitWithoutTraffic(true).build()); // 2 strikes forgiven
        ch.writeInbound(new DefaultHttp2PingFrame(1)); // 0 s after the start: too early, strike 1
        ch.writeInbound(new DefaultHttp2DataFrame(Unpooled.copyLong(1))); // a request: forgiven
        ch.writeInbound(new DefaultHttp2PingFrame(2)); // strike 1 again
        ch.writeInbound(new DefaultHttp2DataFrame(Unpooled.copyLong(2)));
        ch.writeInbound(new DefaultHttp2PingFrame(3));
        assertTrue(ch.isOpen(), "ping, request, ping, request, ping: never more than one strike");
        assertEquals(List.of(), events);
        assertEquals(0, monitor.stats().closed(CloseReason.PING_ABUSE));
        ch.writeInbound(new DefaultHttp2PingFrame(4)); // strike 2
        ch.writeInbound(new DefaultHttp2PingFrame(5)); // strike 3, with no request in between
        assertFalse(ch.isOpen());
        ReferenceCountUtil.release(ch.readOutbound());
    }

    /**
     * A flooder that reads nothing: the GOAWAY's write never completes, and the close waits for it at
     * most {@link Guards#GOODBYE_WRITE_WAIT_NANOS}, as Heartbeat's own goodbyes do (issue 26, item 9).
     */
    @Test
    void shouldCloseWithinTheGoodbyeWaitWhenTheGoodbyeIsNeverWritten() {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                ReferenceCountUtil.release(msg); // the peer reads nothing: the write never completes
            }
        }, http2().permitWithoutTraffic(true).maxStrikes(0).build().newHandler(monitor), new Events());
        channels.add(ch);
        ch.freezeTime();
        advanceSeconds(10);
        ch.writeInbound(new DefaultHttp2PingFrame(1));
        ch.writeInbound(new DefaultHttp2PingFrame(2)); // strike 1: more than maxStrikes
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.PING_ABUSE)), events);
        assertEquals(1, monitor.stats().closed(CloseReason.PING_ABUSE));
        long waitNanos = CloseSequence.GOODBYE_WRITE_WAIT_NANOS;
        ch.advanceTimeBy(waitNanos - 1, TimeUnit.NANOSECONDS);
        ch.runScheduledPendingTasks();
        assertTrue(ch.isOpen(), "waits for the goodbye's write, up to the cap");
        ch.advanceTimeBy(1, TimeUnit.NANOSECONDS);
        ch.runScheduledPendingTasks();
        assertFalse(ch.isOpen(), "closed at the cap, though the goodbye was never written");
    }

    @Test
    void shouldCloseWebSocketPeersWithPolicyViolation() {
        EmbeddedChannel ch = police(PingPolicing.builder(Probes.webSocket()).minInterval(Duration.ofSeconds(5))
                .permitWithoutTraffic(true).maxStrikes(0).build());
        advanceSeconds(5);
        ch.writeInbound(new TextWebSocketFrame("hello"));
        ch.writeInbound(new PingWebSocketFrame(Unpooled.copyLong(1)));
        assertTrue(ch.isOpen());
        ch.writeInbound(new PingWebSocketFrame(Unpooled.copyLong(2)));
        CloseWebSocketFrame close = assertInstanceOf(CloseWebSocketFrame.class, ch.readOutbound());
        assertEquals(1008, close.statusCode());
        assertEquals("too_many_pings", close.reasonText());
        close.release();
        assertFalse(ch.isOpen());
    }

    @Test
    void shouldLetAHandlerThatClosesOnTheEventHaveTheLastWord() throws Exception {
        EmbeddedChannel ch = new EmbeddedChannel(
                PingPolicing.builder(Probes.mqttClient()).minInterval(Duration.ofSeconds(5)).maxStrikes(0).build()
                        .newHandler(monitor),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        ctx.close();
                    }
                });
        channels.add(ch);
        ch.writeInbound(Probes.mqttClient().newPing(null, 0)); // PINGREQ (the probe needs no context), 0 s in
        assertFalse(ch.isOpen());
        assertNull(ch.readOutbound(), "MQTT has no goodbye, and the handler closed first");
        assertEquals(1, monitor.stats().closed(CloseReason.PING_ABUSE));
    }

    /** Real codecs on both sides: the GOAWAY is on the wire, and the client's codec reads it. */
    @Test
    void shouldPutTheGoAwayOnTheWire() {
        EmbeddedChannel server = new EmbeddedChannel(Http2FrameCodecBuilder.forServer().build(),
                http2().permitWithoutTraffic(true).maxStrikes(0).build().newHandler(monitor), new Events());
        List<Object> clientGot = new ArrayList<>();
        EmbeddedChannel client = new EmbeddedChannel(Http2FrameCodecBuilder.forClient().build(),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        clientGot.add(msg);
                    }
                });
        channels.add(server);
        channels.add(client);
        exchange(client, server);
        client.writeAndFlush(new DefaultHttp2PingFrame(1));
        client.writeAndFlush(new DefaultHttp2PingFrame(2)); // 0 s apart
        exchange(client, server);
        assertFalse(server.isOpen());
        Http2GoAwayFrame goAway = clientGot.stream().filter(Http2GoAwayFrame.class::isInstance)
                .map(Http2GoAwayFrame.class::cast).findFirst().orElseThrow();
        assertEquals(Http2Error.ENHANCE_YOUR_CALM.code(), goAway.errorCode());
        assertEquals("too_many_pings", goAway.content().toString(StandardCharsets.US_ASCII));
        clientGot.forEach(ReferenceCountUtil::release);
    }

    private static void exchange(EmbeddedChannel client, EmbeddedChannel server) {
        boolean moved = true;
        while (moved) {
            moved = false;
            for (ByteBuf b; (b = client.readOutbound()) != null; moved = true) {
                deliver(server, b);
            }
            for (ByteBuf b; (b = server.readOutbound()) != null; moved = true) {
                deliver(client, b);
            }
        }
    }

    /** Bytes to a peer; a closed peer drops them, as a closed socket would. */
    private static void deliver(EmbeddedChannel to, ByteBuf bytes) {
        if (to.isOpen()) {
            to.writeInbound(bytes);
        } else {
            bytes.release();
        }
    }

    @Test
    void shouldRefuseBadSettingsNamingThem() {
        IllegalArgumentException custom = assertThrows(IllegalArgumentException.class,
                () -> PingPolicing.builder(Probes.of(ch -> "PING\n")));
        assertTrue(custom.getMessage().contains("recognises no peer pings"), custom.getMessage());
        IllegalArgumentException negative = assertThrows(IllegalArgumentException.class,
                () -> http2().minInterval(Duration.ofSeconds(-1)));
        assertEquals("minInterval cannot be negative: PT-1S", negative.getMessage());
        IllegalArgumentException strikes = assertThrows(IllegalArgumentException.class, () -> http2().maxStrikes(-1));
        assertEquals("maxStrikes cannot be negative: -1", strikes.getMessage());
        assertThrows(IllegalArgumentException.class, () -> http2().minIntervalWithoutTraffic(Duration.ofDays(100_000)));
        assertEquals(Duration.ofSeconds(10), http2().minIntervalWithoutTraffic(Duration.ofSeconds(1)).build()
                .minIntervalWithoutTraffic(), "raised to minInterval");
    }
}
