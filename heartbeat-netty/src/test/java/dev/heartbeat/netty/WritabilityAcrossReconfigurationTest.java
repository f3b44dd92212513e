/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code maxUnwritable} across reconfigurations to a configuration that does not watch writability
 * (but keeps guard state: a write stall) and back: an unwritable spell counts from its true start,
 * or from the reconfiguration that starts watching it, never from a spell that ended unwatched. In
 * virtual time.
 */
class WritabilityAcrossReconfigurationTest {

    /** An action may come one tick (1.05 ms) after its deadline; virtual time moves in 1 ms steps. */
    private static final long LATE = 3;

    private static final HeartbeatConfig WATCHING = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60))
            .maxUnwritable(Duration.ofSeconds(10)).build();
    private static final HeartbeatConfig NOT_WATCHING = HeartbeatConfig.closeWhenIdle()
            .readerIdle(Duration.ofSeconds(60)).writeStall(Duration.ofSeconds(30)).build();

    private final VirtualTime.World world = new VirtualTime.World(3);

    @AfterEach
    void tearDown() {
        world.close();
    }

    private static void writable(EmbeddedChannel ch, boolean writable) {
        ch.unsafe().outboundBuffer().setUserDefinedWritability(1, writable);
        ch.runPendingTasks(); // the writability event comes in a task of the event loop's
    }

    @Test
    void aSpellThatEndedUnwatchedIsNotCountedIntoTheNextOne() {
        VirtualTime.Recorder r = world.recorder();
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(WATCHING), r);
        writable(ch, false); // a spell from 0 s
        world.advance(1_000);
        world.monitor.reconfigure(ch, NOT_WATCHING);
        world.advance(1_000);
        writable(ch, true); // the spell ends at 2 s, unwatched
        world.advance(6_000);
        world.monitor.reconfigure(ch, WATCHING);
        world.advance(400);
        writable(ch, false); // a new spell from 8.4 s
        world.step(9_999);
        assertTrue(ch.isOpen(), "open 9.999 s into the new spell: " + r.events + " at " + r.times + " ms");
        world.step(1 + LATE);
        assertFalse(ch.isOpen(), "closed 10 s into the new spell");
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.UNWRITABLE)), r.events);
    }

    @Test
    void aSpellThatBeganUnwatchedCountsFromTheReconfigurationThatWatchesIt() {
        VirtualTime.Recorder r = world.recorder();
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(WATCHING), r);
        world.advance(1_000);
        world.monitor.reconfigure(ch, NOT_WATCHING);
        world.advance(1_000);
        writable(ch, false); // a spell from 2 s, unwatched
        world.advance(3_000);
        world.monitor.reconfigure(ch, WATCHING); // watched from 5 s
        world.step(9_999);
        assertTrue(ch.isOpen(), "never earlier than 10 s after the reconfiguration: " + r.events);
        world.step(1 + LATE);
        assertFalse(ch.isOpen(), "closed 10 s after the reconfiguration, the spell still on");
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.UNWRITABLE)), r.events);
    }

    @Test
    void aSpellWatchedThroughoutKeepsItsStartAcrossReconfigurations() {
        VirtualTime.Recorder r = world.recorder();
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(WATCHING), r);
        world.advance(1_000);
        writable(ch, false); // a spell from 1 s
        world.advance(4_000);
        world.monitor.reconfigure(ch, HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(90))
                .maxUnwritable(Duration.ofSeconds(10)).build());
        world.step(5_999);
        assertTrue(ch.isOpen(), "open 9.999 s into the spell");
        world.step(1 + LATE);
        assertFalse(ch.isOpen(), "closed 10 s into the spell, which began under the first configuration");
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.UNWRITABLE)), r.events);
    }
}
