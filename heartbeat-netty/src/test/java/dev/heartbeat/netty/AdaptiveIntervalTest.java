/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.SocketAddress;
import java.time.Duration;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The adaptive keep-alive wired to the handler: each channel pings at its peer's learned interval and reports back. */
class AdaptiveIntervalTest {

    private final VirtualTime.World world = new VirtualTime.World(3);
    private final HeartbeatMonitor monitor = world.monitor;
    private final AdaptiveKeepAlive<SocketAddress> tuner = AdaptiveKeepAlive.builder()
            .minInterval(Duration.ofSeconds(1)).maxInterval(Duration.ofSeconds(10)).step(Duration.ofSeconds(1))
            .successesToGrow(1).failuresToSettle(1).build();
    private final HeartbeatConfig cfg = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(30))
            .timeout(Duration.ofMillis(500)).maxMissedPings(1).whenWriterIdle().adaptiveInterval(tuner).build();

    @AfterEach
    void tearDown() {
        world.close();
    }

    @Test
    void anAnsweredIdleGapLengthensTheNextChannelsIntervalAndALostOneSettlesIt() {
        EmbeddedChannel first = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        SocketAddress peer = first.remoteAddress();
        assertEquals(Duration.ofSeconds(1), monitor.configOf(first).pingInterval(), "the tuner's minimum");
        world.advance(1_010);
        Http2PingFrame ping = assertInstanceOf(Http2PingFrame.class, first.readOutbound());
        world.advance(20);
        first.writeInbound(new DefaultHttp2PingFrame(ping.content(), true));
        assertEquals(Duration.ofSeconds(2), tuner.interval(peer), "1 s of silence both ways was carried");

        EmbeddedChannel second = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        assertEquals(Duration.ofSeconds(2), monitor.configOf(second).pingInterval());
        world.advance(2_010);
        assertInstanceOf(Http2PingFrame.class, second.readOutbound());
        world.advance(600); // no answer: the NAT dropped the idle mapping
        assertFalse(second.isOpen());
        assertEquals(Duration.ofSeconds(1), tuner.interval(peer), "2 s failed: back to the last good 1 s");
        assertEquals(AdaptiveKeepAlive.Phase.SETTLED, tuner.state(peer).orElseThrow().phase());
    }

    @Test
    void anAnswerAfterTrafficIsNoEvidence() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        world.advance(500);
        ch.writeInbound("server push"); // the path was not idle for the interval
        world.advance(520);
        Http2PingFrame ping = assertInstanceOf(Http2PingFrame.class, ch.readOutbound());
        ch.writeInbound(new DefaultHttp2PingFrame(ping.content(), true));
        assertEquals(Duration.ofSeconds(1), tuner.interval(ch.remoteAddress()), "not lengthened");
    }

    @Test
    void tooManyPingsRaisesTheFloor() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        ch.writeInbound(new io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame(
                io.netty.handler.codec.http2.Http2Error.ENHANCE_YOUR_CALM,
                io.netty.buffer.ByteBufUtil.writeAscii(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT,
                        "too_many_pings")));
        assertEquals(Duration.ofSeconds(2), tuner.interval(ch.remoteAddress()));
        assertEquals(Duration.ofSeconds(2), tuner.state(ch.remoteAddress()).orElseThrow().floor());
    }

    @Test
    void needsAKeepAliveAndAMatchingProbe() {
        assertThrows(IllegalStateException.class, () -> HeartbeatConfig.ping(Probes.http2())
                .interval(Duration.ofSeconds(1)).adaptiveInterval(tuner).build(), "pings on read silence");
        assertThrows(IllegalStateException.class, () -> HeartbeatConfig.ping(ch -> "PING")
                .interval(Duration.ofSeconds(1)).whenWriterIdle().adaptiveInterval(tuner).build(), "no matching");
        assertThrows(IllegalStateException.class, () -> HeartbeatConfig.closeWhenIdle().adaptiveInterval(tuner));
    }
}
