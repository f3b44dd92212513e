/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.testing.LeakDetection;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2ChannelDuplexHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Frame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code --probe http2}: the demo server's HTTP/2 pipeline ({@code Http2FrameCodec}, Heartbeat, the
 * echo) on an {@code EmbeddedChannel} against a client made of Netty's own frame codec, built not to
 * acknowledge PINGs by itself (as a silent peer would not), with Heartbeat's monitor in virtual
 * time. PING after 100 ms of silence, 2 missed pings of 50 ms each close.
 */
@ExtendWith(LeakDetection.class)
class Http2PipelineTest {

    /** The client's end: keeps the frames it receives (retained until the test ends) and opens streams. */
    static final class Client extends Http2ChannelDuplexHandler {
        final List<Http2Frame> frames = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Http2Frame frame) {
                frames.add(frame);
            } else {
                ReferenceCountUtil.release(msg);
            }
        }

        <T extends Http2Frame> List<T> all(Class<T> type) {
            List<T> out = new ArrayList<>();
            for (Http2Frame f : frames) {
                if (type.isInstance(f)) {
                    out.add(type.cast(f));
                }
            }
            return out;
        }

        <T extends Http2Frame> T last(Class<T> type) {
            List<T> all = all(type);
            assertFalse(all.isEmpty(), "no " + type.getSimpleName() + " in " + frames);
            return all.get(all.size() - 1);
        }
    }

    private Client client;
    private VirtualPair pair;

    private static ServerConfig.Builder config() {
        return ServerConfig.builder().protocol(ServerConfig.Protocol.HTTP2)
                .policy(ServerConfig.Policy.PING).pingInterval(Duration.ofMillis(100))
                .pingTimeout(Duration.ofMillis(50)).maxMissedPings(2).metricsDisabled().port(0);
    }

    @BeforeEach
    void start() {
        start(config().build());
    }

    /** A fresh pair with these settings, in place of the one before. */
    private void start(ServerConfig config) {
        if (pair != null) {
            tearDown();
        }
        client = new Client();
        pair = new VirtualPair(config, Http2FrameCodecBuilder.forClient().autoAckPingFrame(false).build(), client);
        pair.exchange(); // the prefaces and SETTINGS, both ways
    }

    @AfterEach
    void tearDown() {
        client.frames.forEach(ReferenceCountUtil::release);
        pair.close();
    }

    private List<Http2PingFrame> serverPings() {
        return client.all(Http2PingFrame.class).stream().filter(p -> !p.ack()).toList();
    }

    @Test
    void echoesEachDataFrameOnItsStream() {
        Http2FrameStream stream = client.newStream();
        pair.client.write(new DefaultHttp2HeadersFrame(new DefaultHttp2Headers().method("POST").path("/echo")
                .scheme("http"), false).stream(stream));
        pair.client.writeAndFlush(new DefaultHttp2DataFrame(Unpooled.copiedBuffer("12345", StandardCharsets.US_ASCII),
                false).stream(stream));
        pair.exchange();
        Http2HeadersFrame response = client.last(Http2HeadersFrame.class);
        assertEquals("200", response.headers().status().toString());
        assertEquals(stream.id(), response.stream().id());
        Http2DataFrame echo = client.last(Http2DataFrame.class);
        assertEquals("12345", echo.content().toString(StandardCharsets.US_ASCII));
        assertEquals(stream.id(), echo.stream().id(), "on the stream it came on");
        assertFalse(echo.isEndStream(), "the stream stays open until the client ends it");
        assertEquals(1, pair.echo.counters().linesEchoed());
    }

    @Test
    void aPingAckWithItsTokenAnswersThePingAndGivesItsRoundTrip() {
        pair.advance(99);
        assertTrue(serverPings().isEmpty(), "no PING before 100 ms of silence");
        pair.advance(2);
        Http2PingFrame ping = serverPings().get(0);
        pair.advance(3);
        pair.client.writeAndFlush(new DefaultHttp2PingFrame(ping.content(), true));
        pair.exchange();
        assertEquals(3, pair.monitor.rttOf(pair.server).orElseThrow().smoothed().toMillis());
        assertEquals(1, pair.echo.pingRtt().count());
        pair.advance(140);
        assertTrue(pair.server.isOpen(), "answered: a fresh round");
        assertEquals(2, serverPings().size(), "the next PING after 100 ms of silence again");
    }

    @Test
    void aPeerThatDoesNotAckIsToldPingTimeoutInAGoAwayThenClosed() {
        pair.advance(101);
        Http2PingFrame ping = serverPings().get(0);
        pair.client.writeAndFlush(new DefaultHttp2PingFrame(ping.content() + 1, true)); // not our token
        pair.exchange();
        pair.advance(150);
        assertFalse(pair.server.isOpen());
        assertEquals(2, serverPings().size(), "the second ping, then the close");
        Http2GoAwayFrame bye = client.last(Http2GoAwayFrame.class);
        assertEquals(0, bye.errorCode(), "NO_ERROR");
        assertEquals(CloseReason.PING_TIMEOUT.name(), bye.content().toString(StandardCharsets.US_ASCII));
        assertEquals(1, pair.echo.closedFor(CloseReason.PING_TIMEOUT));
        assertEquals(0, pair.echo.pingRtt().count(), "no answer, no round trip");
        assertInstanceOf(Http2GoAwayFrame.class, client.frames.get(client.frames.size() - 1), "the goodbye came last");
    }

    /**
     * {@code --police-pings}: the third PING sooner than 100 ms after the connect, 2 strikes forgiven,
     * closes after a GOAWAY in gRPC's words; pings 100 ms apart are only acknowledged.
     */
    @Test
    void aClientThatPingsTooOftenIsToldEnhanceYourCalmThenClosed() {
        start(config().pingInterval(Duration.ofSeconds(10))
                .policePings(new ServerConfig.PeerPingRules(Duration.ofMillis(100), true, 2)).build());
        for (int i = 0; i < 4; i++) {
            pair.advance(100);
            pair.client.writeAndFlush(new DefaultHttp2PingFrame(i));
            pair.exchange();
        }
        assertTrue(pair.server.isOpen(), "100 ms apart: accepted");
        for (int i = 0; i < 3; i++) {
            pair.advance(10);
            pair.client.writeAndFlush(new DefaultHttp2PingFrame(i));
            pair.exchange();
        }
        assertFalse(pair.server.isOpen());
        assertEquals(7, client.all(Http2PingFrame.class).stream().filter(Http2PingFrame::ack).count(),
                "the codec acknowledges each PING as it reads it, before the policing sees it");
        Http2GoAwayFrame bye = client.last(Http2GoAwayFrame.class);
        assertEquals(Http2Error.ENHANCE_YOUR_CALM.code(), bye.errorCode());
        assertEquals("too_many_pings", bye.content().toString(StandardCharsets.US_ASCII));
        assertEquals(1, client.all(Http2GoAwayFrame.class).size(), "one goodbye: the policing's");
        assertEquals(1, pair.echo.closedFor(CloseReason.PING_ABUSE));
        assertEquals(0, pair.echo.idleCloses());
    }
}
