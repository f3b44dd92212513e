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
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The close veto and its in-flight shorthand, in virtual time: held, re-checked, bounded, never early. */
class CloseVetoTest {

    private final VirtualTime.World world = new VirtualTime.World(3);
    private final HeartbeatMonitor monitor = world.monitor;

    @AfterEach
    void tearDown() {
        world.close();
    }


    private static HeartbeatConfig.Builder readerIdle1s() {
        return HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1));
    }

    @Test
    void anIdleCloseWaitsWhileWorkIsInFlightAndGoesAheadAtTheRecheckAfter() {
        AtomicBoolean busy = new AtomicBoolean(true);
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        EmbeddedChannel ch = world.channel(monitor.newHandler(readerIdle1s().holdWhile(c -> busy.get()).build()), r);
        world.step(1_500);
        assertTrue(ch.isOpen(), "held at 1 s: a request is in flight");
        assertEquals(1, monitor.closesHeld());
        busy.set(false);
        world.step(400);
        assertTrue(ch.isOpen(), "not before the re-check, a second after the hold");
        world.step(110);
        assertFalse(ch.isOpen(), "closed at the re-check: still idle, nothing in flight");
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.READER_IDLE)), r.events);
    }

    @Test
    void trafficDuringAHoldEndsTheEpisodeAndIdlenessCountsFromIt() {
        AtomicBoolean busy = new AtomicBoolean(true);
        EmbeddedChannel ch = world.channel(monitor.newHandler(readerIdle1s().holdWhile(c -> busy.get()).build()),
                new KeepAliveTest.Recorder());
        world.step(1_500);
        ch.writeInbound("response data");
        busy.set(false);
        world.step(900);
        assertTrue(ch.isOpen(), "the re-check at 2 s finds a read at 1.5 s: not idle");
        world.step(150);
        assertFalse(ch.isOpen(), "idle a second after the read");
    }

    @Test
    void holdsAreBoundedSoADeadPeerIsNotKeptForever() {
        AtomicInteger asked = new AtomicInteger();
        EmbeddedChannel ch = world.channel(monitor.newHandler(readerIdle1s().maxCloseHold(Duration.ofSeconds(3))
                .beforeClose((c, reason) -> {
                    asked.incrementAndGet();
                    return CloseDecision.extend(Duration.ofSeconds(1));
                }).build()), new KeepAliveTest.Recorder());
        world.step(3_990);
        assertTrue(ch.isOpen());
        world.step(20);
        assertFalse(ch.isOpen(), "closed 3 s after the first hold at 1 s");
        assertEquals(3, asked.get(), "asked at 1, 2 and 3 s; the bound closes without asking");
        assertEquals(1, monitor.closeHoldsExpired());
    }

    @Test
    void aThrowingVetoLetsTheCloseGoAhead() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(readerIdle1s().beforeClose((c, reason) -> {
            throw new IllegalStateException("veto bug (expected by the test)");
        }).build()), new KeepAliveTest.Recorder());
        world.step(1_010);
        assertFalse(ch.isOpen());
        assertEquals(1, monitor.stats().actionFailures());
    }

    @Test
    void atMaxAgeCloseNowSkipsTheGoodbyeAndTheGrace() {
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.events().maxAge(Duration.ofSeconds(1))
                .maxAgeGrace(Duration.ofSeconds(30)).goodbye(Probes.webSocket())
                .beforeClose((c, reason) -> CloseDecision.CLOSE_NOW).build()), r);
        world.step(1_010);
        assertFalse(ch.isOpen());
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.MAX_AGE)), r.events, "no goodbye event");
        assertNull(ch.readOutbound(), "no goodbye frame");
    }

    @Test
    void atMaxAgeExtendPutsTheGoodbyeOff() {
        AtomicInteger asked = new AtomicInteger();
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.events().maxAge(Duration.ofSeconds(1))
                .beforeClose((c, reason) -> asked.getAndIncrement() == 0
                        ? CloseDecision.extend(Duration.ofSeconds(2)) : CloseDecision.PROCEED).build()), r);
        world.step(2_990);
        assertTrue(ch.isOpen());
        assertTrue(r.events.isEmpty());
        world.step(20);
        assertFalse(ch.isOpen(), "closed at 3 s: the age plus the extension");
        assertInstanceOf(HeartbeatGoodbyeEvent.class, r.events.get(0));
    }

    @Test
    void aDrainIsNotVetoed() throws Exception {
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofSeconds(60)).beforeClose((c, r) -> CloseDecision.extend(Duration.ofHours(1)))
                .build()), new KeepAliveTest.Recorder());
        monitor.drain(Duration.ZERO);
        world.advance(2);
        assertFalse(ch.isOpen());
        assertEquals(0, monitor.closesHeld());
    }

    @Test
    void aPingTimeoutCanBeHeldToo() {
        AtomicBoolean hold = new AtomicBoolean(true);
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.ping(c -> "PING")
                .interval(Duration.ofSeconds(1)).timeout(Duration.ofSeconds(1)).maxMissedPings(1)
                .beforeClose((c, reason) -> hold.get() ? CloseDecision.extend(Duration.ofSeconds(1))
                        : CloseDecision.PROCEED).build()), new KeepAliveTest.Recorder());
        world.step(2_100);
        assertTrue(ch.isOpen(), "the ping timeout at 2 s is held");
        hold.set(false);
        world.step(1_000);
        assertFalse(ch.isOpen(), "and goes ahead at its re-check");
        assertEquals(1, monitor.stats().closed(CloseReason.PING_TIMEOUT));
    }

    @Test
    void badDecisionsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> CloseDecision.extend(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> CloseDecision.extend(Duration.ofNanos(-1)));
        assertThrows(NullPointerException.class, () -> readerIdle1s().beforeClose(null));
        assertThrows(IllegalArgumentException.class, () -> readerIdle1s().maxCloseHold(Duration.ZERO));
        assertEquals("extend(PT2S)", CloseDecision.extend(Duration.ofSeconds(2)).toString());
    }
}
