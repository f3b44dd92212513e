/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.time.Duration;

import dev.heartbeat.netty.micrometer.HeartbeatMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A pinging client told {@code too_many_pings} doubles its ping interval, as gRPC clients do. */
class PingBackoffTest {

    private final VirtualTime.World world = new VirtualTime.World(3);
    private final HeartbeatMonitor monitor = world.monitor;

    @AfterEach
    void tearDown() {
        world.close();
    }

    private static int pings(EmbeddedChannel ch) {
        int n = 0;
        for (Object m; (m = ch.readOutbound()) != null; ReferenceCountUtil.release(m)) {
            n += m instanceof Http2PingFrame ? 1 : 0;
        }
        return n;
    }

    @Test
    void http2GoAwayTooManyPingsDoublesTheIntervalAndGoesOn() {
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.ping(Probes.http2())
                .interval(Duration.ofSeconds(1)).timeout(Duration.ofSeconds(1)).maxMissedPings(100).whenWriterIdle()
                .build()), r);
        world.advance(1_010);
        assertEquals(1, pings(ch), "a ping after 1 s of write silence");
        ch.writeInbound(new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR,
                ByteBufUtil.writeAscii(UnpooledByteBufAllocator.DEFAULT, "bye")));
        assertEquals(0, monitor.pingBackoffs(), "another goodbye is not a back-off");
        ch.writeInbound(new DefaultHttp2GoAwayFrame(Http2Error.ENHANCE_YOUR_CALM,
                ByteBufUtil.writeAscii(UnpooledByteBufAllocator.DEFAULT, "too_many_pings")));
        assertEquals(1, monitor.pingBackoffs());
        assertEquals(Duration.ofSeconds(2), monitor.configOf(ch).pingInterval());
        assertEquals(new HeartbeatPingBackoffEvent(Duration.ofSeconds(2)).toString(), r.events.get(0).toString());
        world.advance(1_990);
        assertEquals(0, pings(ch), "no ping before 2 s of write silence now");
        world.advance(30);
        assertEquals(1, pings(ch));
    }

    @Test
    void webSocketClose1008TooManyPingsDoublesTheInterval() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.ping(Probes.webSocket())
                .interval(Duration.ofSeconds(5)).build()), new KeepAliveTest.Recorder());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HeartbeatMetrics(monitor).bindTo(registry);
        ch.writeInbound(new CloseWebSocketFrame(1008, "too_many_pings"));
        ch.writeInbound(new CloseWebSocketFrame(1008, "too_many_pings"));
        assertEquals(Duration.ofSeconds(20), monitor.configOf(ch).pingInterval(), "doubled twice");
        assertEquals(2, monitor.pingBackoffs());
        assertEquals(2.0, registry.get("heartbeat.pings.backoffs").functionCounter().count());
        Object passedOn = ch.readInbound();
        assertNull(passedOn, "consumed by the recorder: passed on, not swallowed");
    }

    @Test
    void theServerSideGoodbyeOfPingPolicingIsWhatTheClientRecognises() {
        EmbeddedChannel server = new EmbeddedChannel(new io.netty.channel.ChannelInboundHandlerAdapter());
        Object bye = Probes.http2().newGoodbye(server.pipeline().firstContext(), CloseReason.PING_ABUSE);
        Http2GoAwayFrame goAway = assertInstanceOf(Http2GoAwayFrame.class, bye);
        assertTrue(Probes.http2().isTooManyPings(goAway));
        goAway.release();
        server.finishAndReleaseAll();
    }
}
