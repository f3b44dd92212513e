/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The keep-alive semantics users port from gRPC, in virtual time: keep-alive pings when we have not
 * written (NAT refresh) combined with a reader-idle liveness close in one configuration
 * ({@code whenWriterIdle().closeWhenReaderIdle(...)}), and the default ping driven by read silence.
 */
class KeepAliveTest {

    private static final Duration INTERVAL = Duration.ofSeconds(1);
    private static final Duration LIVENESS = Duration.ofSeconds(3);

    /** Records the user events and messages that reach it. */
    static final class Recorder extends ChannelInboundHandlerAdapter {
        final List<Object> events = new ArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            // the application's data: consumed
        }
    }

    private final VirtualTime.World world = new VirtualTime.World(5); // wraps during the tests
    private final HeartbeatMonitor monitor = world.monitor;

    @AfterEach
    void tearDown() {
        world.close();
    }

    /** A client with gRPC's combination: a ping after 1 s without writes, a close after 3 s without reads. */
    private EmbeddedChannel client(Recorder recorder) {
        HeartbeatConfig cfg = HeartbeatConfig.ping(ch -> "PING").interval(INTERVAL).timeout(Duration.ofSeconds(5))
                .maxMissedPings(3).whenWriterIdle().closeWhenReaderIdle(LIVENESS).build();
        return world.channel(monitor.newHandler(cfg), recorder);
    }

    private void advance(long millis) {
        world.advance(millis);
    }

    private static int pings(EmbeddedChannel ch) {
        int n = 0;
        for (Object m; (m = ch.readOutbound()) != null; ) {
            assertEquals("PING", m);
            n++;
        }
        return n;
    }

    @Test
    void pingsWhileWeAreSilentAndStaysOpenWhileThePeerTalks() {
        Recorder r = new Recorder();
        EmbeddedChannel ch = client(r);
        int pings = 0;
        for (int i = 1; i <= 200; i++) { // 20 s: the peer sends every 500 ms, we never write
            advance(100);
            if (i % 5 == 0) {
                ch.writeInbound("data");
            }
            pings += pings(ch);
        }
        assertTrue(ch.isOpen());
        assertTrue(pings >= 15 && pings <= 20, "a keep-alive ping for about every second without writes: " + pings);
        assertTrue(r.events.isEmpty(), "no close event: " + r.events);
    }

    @Test
    void closesForReaderIdlenessAtItsTimeoutNeverEarlyWhilePingsGoOut() {
        Recorder r = new Recorder();
        EmbeddedChannel ch = client(r);
        advance(1_000);
        ch.writeInbound("last words"); // the peer falls silent here; its answers stop too
        advance(2_999);
        assertTrue(ch.isOpen(), "not before 3 s without a read");
        assertTrue(pings(ch) >= 1, "the keep-alive pings went out meanwhile");
        advance(4);
        assertFalse(ch.isOpen(), "3 s without a read closes, long before the unanswered pings would");
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.READER_IDLE)), r.events);
        assertEquals(1, monitor.stats().closed(CloseReason.READER_IDLE));
        assertEquals(0, monitor.stats().closedPingTimeout());
    }

    @Test
    void aReadAtTheLastMomentPutsTheCloseOff() {
        Recorder r = new Recorder();
        EmbeddedChannel ch = client(r);
        for (int i = 0; i < 5; i++) {
            advance(2_990);
            ch.writeInbound("just in time");
        }
        assertTrue(ch.isOpen());
        advance(3_003);
        assertFalse(ch.isOpen());
    }

    @Test
    void theDefaultPingIsDrivenByReadSilenceEvenWhileWeWrite() {
        // gRPC's client keep-alive: a client that keeps writing to a dead peer must still find out.
        HeartbeatConfig cfg = HeartbeatConfig.ping(ch -> "PING").interval(INTERVAL).timeout(INTERVAL)
                .maxMissedPings(1).build();
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), new Recorder());
        for (int i = 0; i < 12 && ch.isOpen(); i++) {
            ch.writeOutbound("request " + i); // we write every 250 ms; the peer never answers
            ch.readOutbound();
            advance(250);
        }
        assertFalse(ch.isOpen(), "pinged after 1 s without reads, closed 1 s later");
        assertEquals(1, monitor.stats().closedPingTimeout());
        assertNull(ch.readInbound());
    }

    @Test
    void refusesALivenessCloseThatComesBeforeTheFirstReadDrivenPing() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> HeartbeatConfig.ping(ch -> "PING")
                .interval(Duration.ofSeconds(3)).closeWhenReaderIdle(Duration.ofSeconds(3)).build());
        assertEquals("closeWhenReaderIdle (PT3S) needs to be longer than the interval (PT3S) when pings are driven "
                + "by read silence, or the channel closes before its first ping: use whenWriterIdle() or a longer "
                + "closeWhenReaderIdle", e.getMessage());
        HeartbeatConfig ok = HeartbeatConfig.ping(ch -> "PING").interval(Duration.ofSeconds(3)).whenWriterIdle()
                .closeWhenReaderIdle(Duration.ofSeconds(3)).build();
        assertEquals(Duration.ofSeconds(3), ok.closeWhenReaderIdle());
        assertTrue(ok.toString().contains("closeWhenReaderIdle=PT3S"), ok.toString());
    }
}
