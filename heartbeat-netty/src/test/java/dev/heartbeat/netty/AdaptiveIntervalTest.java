/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
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
        first.close(); // by the application, with no ping awaiting its answer: no evidence either way

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
    void aLiveChannelLearnsOnItsOwnPingsAndMovesToTheLearnedInterval() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        SocketAddress peer = ch.remoteAddress();
        world.advance(1_010);
        answer(ch, 20);
        assertEquals(Duration.ofSeconds(2), tuner.interval(peer));
        assertEquals(Duration.ofSeconds(2), monitor.configOf(ch).pingInterval(), "the open channel moved to it");
        world.advance(1_990);
        assertNull(ch.readOutbound(), "no ping before 2 s of silence after the answer");
        world.advance(20);
        answer(ch, 20); // after the previous answer, which is no traffic: the path carried 2 s
        assertEquals(Duration.ofSeconds(3), tuner.interval(peer));
        assertEquals(Duration.ofSeconds(3), monitor.configOf(ch).pingInterval());
        world.advance(3_010);
        answer(ch, 20);
        assertEquals(Duration.ofSeconds(4), monitor.configOf(ch).pingInterval());
        assertTrue(ch.isOpen());
    }

    @Test
    void aServerPushBetweenPingsIsTrafficButTheAnswerToOurPreviousPingIsNot() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        SocketAddress peer = ch.remoteAddress();
        world.advance(1_010);
        answer(ch, 20);
        world.advance(1_000);
        ch.writeInbound("server push"); // 1 s into the 2 s: the path was not idle for 2 s
        world.advance(1_010);
        answer(ch, 20);
        assertEquals(Duration.ofSeconds(2), tuner.interval(peer), "not lengthened");
        world.advance(2_010);
        answer(ch, 20); // 2 s with nothing but our ping and its answer: that counts
        assertEquals(Duration.ofSeconds(3), tuner.interval(peer));
    }

    @Test
    void aResetWhileAQuietPingAwaitsItsAnswerIsAFailureOfItsInterval() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        SocketAddress peer = ch.remoteAddress();
        world.advance(1_010);
        answer(ch, 20);
        world.advance(2_010);
        assertInstanceOf(Http2PingFrame.class, ch.readOutbound());
        reset(ch); // a NAT that forgot the mapping answers the ping with a reset
        assertEquals(Duration.ofSeconds(1), tuner.interval(peer), "2 s failed: back to the last good 1 s");
        assertEquals(AdaptiveKeepAlive.Phase.SETTLED, tuner.state(peer).orElseThrow().phase());
        assertEquals(Duration.ofSeconds(2), tuner.state(peer).orElseThrow().ceiling());
    }

    @Test
    void aResetWithNoQuietPingAwaitingItsAnswerIsNoFailure() {
        EmbeddedChannel idle = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        SocketAddress peer = idle.remoteAddress();
        world.advance(1_010);
        answer(idle, 20);
        world.advance(500);
        reset(idle); // the ping was answered: whatever closed it, it was not the idle gap
        EmbeddedChannel busy = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        world.advance(1_500);
        busy.writeInbound("server push");
        world.advance(510);
        assertInstanceOf(Http2PingFrame.class, busy.readOutbound());
        reset(busy); // the path carried a push 0.5 s before the ping: not the NAT's idle timeout
        assertEquals(Duration.ofSeconds(2), tuner.interval(peer));
        assertEquals(0, tuner.state(peer).orElseThrow().failures());
    }

    @Test
    void reconfiguredToAnAdaptiveConfigurationAChannelPingsAtItsPeersLearnedInterval() {
        EmbeddedChannel first = world.channel(monitor.newHandler(cfg), new KeepAliveTest.Recorder());
        world.advance(1_010);
        answer(first, 20);
        first.close();
        HeartbeatConfig plain = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(30))
                .whenWriterIdle().build();
        EmbeddedChannel ch = world.channel(monitor.newHandler(plain), new KeepAliveTest.Recorder());
        assertTrue(monitor.reconfigure(ch, cfg));
        ch.runPendingTasks();
        assertEquals(Duration.ofSeconds(2), monitor.configOf(ch).pingInterval());
    }

    /** Reads the channel's ping and, {@code rttMillis} later, answers it. */
    private void answer(EmbeddedChannel ch, long rttMillis) {
        Http2PingFrame ping = assertInstanceOf(Http2PingFrame.class, ch.readOutbound());
        world.advance(rttMillis);
        ch.writeInbound(new DefaultHttp2PingFrame(ping.content(), true));
    }

    /** The peer's reset: the transport closes the channel (as NIO does after a read fails), not the pipeline. */
    private static void reset(EmbeddedChannel ch) {
        ch.unsafe().close(ch.unsafe().voidPromise());
        ch.runPendingTasks();
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
        assertEquals(Duration.ofSeconds(2), monitor.configOf(ch).pingInterval(), "the channel at the tuner's interval");
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
