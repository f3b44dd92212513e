/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.AllIdleCheck;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.List;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The handler's two policy slots hold the idle policies' check times (the third, when all three
 * kinds are on, in a side object) and the ping policy's state (when a ping was decided and written;
 * the pings missed in a row are in the judgement word). A channel reconfigured from one policy to the
 * other and back must find nothing of the other policy's values in its slots: these walk the switches
 * in virtual time, with a check of the interlude's policy in between so that it really wrote its
 * values.
 */
class PolicySlotsTest {

    private static final Duration INTERVAL = Duration.ofSeconds(10);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** A verdict comes up to a wheel tick after its time, and is delivered by the next cycle. */
    private static final long LATE = 3;

    private final VirtualTime.World world = new VirtualTime.World(30);

    @AfterEach
    void tearDown() {
        world.close();
    }

    private static HeartbeatConfig probing() {
        return HeartbeatConfig.ping(new ProbeHandlerTest.TokenLineProbe()).interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(2).ackMode(AckMode.MATCHED_ONLY).build();
    }

    /**
     * The answer to a ping written before an idle-policy interlude comes after the switch back. The
     * ping's write time was overwritten by the interlude's writer check (a time 60 s ahead), so the
     * answer makes no round-trip sample at all (it would be 1 ns, the floor, from the check time).
     * While the ping state was a side object kept across the interlude, this answer made a 60 s sample
     * of the old ping; the write time is not kept across a change of policy any more.
     */
    @Test
    void anAnswerAcrossAnIdleInterludeMakesNoSampleOfTheInterludesCheckTime() {
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(probing()));
        world.advance(INTERVAL.toMillis() + LATE);
        String ping = ch.readOutbound();
        assertTrue(ping != null && ping.startsWith("PING "), "a ping was written: " + ping);
        assertTrue(world.monitor.reconfigure(ch, HeartbeatConfig.events().writerIdle(Duration.ofSeconds(60))
                .build()));
        world.advance(60_000 + LATE); // the writer check runs: its next time (60 s on) is in the shared slot
        assertTrue(world.monitor.reconfigure(ch, probing()));
        ch.writeInbound("PONG " + ping.substring(5));
        assertEquals(1, world.monitor.answersConsumed(), "the answer was recognised");
        assertTrue(world.monitor.rttOf(ch).isEmpty(),
                "no round-trip sample across the interlude: " + world.monitor.rttOf(ch));
    }

    /** Missed pings count from zero after an all-idle interlude, whose check time sat in the miss counter's slot. */
    @Test
    void missedPingsCountFromZeroAfterAnIdleInterlude() {
        HeartbeatConfig pings = HeartbeatConfig.ping(c -> "PING").interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(2).build();
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(pings));
        assertTrue(world.monitor.reconfigure(ch, HeartbeatConfig.events().allIdle(Duration.ofSeconds(1)).build()));
        world.advance(1_000 + LATE); // the all-idle check runs: its next time is in the shared slot
        assertTrue(world.monitor.reconfigure(ch, pings));
        // The event loop runs its tasks (writes the pings) at the end of each advance.
        world.advance(INTERVAL.toMillis() + LATE);
        assertEquals("PING", ch.readOutbound(), "the first ping");
        world.advance(TIMEOUT.toMillis() + LATE);
        assertEquals("PING", ch.readOutbound(), "the first was missed: a second ping");
        assertTrue(ch.isOpen(), "one missed ping of two allowed: still open");
        world.advance(TIMEOUT.toMillis() - LATE);
        assertTrue(ch.isOpen(), "the second ping's timeout has not passed");
        world.advance(2 * LATE);
        assertFalse(ch.isOpen(), "closed at the second missed ping");
    }

    /**
     * Interaction model seed 209 (an action budget held the ping; here the event loop lags): an idle
     * interlude left its next writer check time, ahead of now, in the slot that stamps a ping's write
     * attempt. The first ping decided after the switch back, not yet written, then read as a ping
     * whose write was attempted and failed (fail closed), and the channel was closed for
     * PING_TIMEOUT without a ping ever written. A ping not written is waited for instead.
     */
    @Test
    void aPingNotWrittenYetIsNoFailedAttemptAfterAnIdleInterlude() {
        HeartbeatConfig pings = HeartbeatConfig.ping(c -> "PING").interval(Duration.ofSeconds(1))
                .timeout(Duration.ofSeconds(1)).maxMissedPings(1).build();
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(HeartbeatConfig.events()
                .writerIdle(Duration.ofSeconds(4)).build()));
        world.advance(4_000 + LATE); // the writer check ran: its next time (8 s) is in the ping's write slot
        assertTrue(world.monitor.reconfigure(ch, pings));
        world.advance(1); // the worker starts the ping policy
        // The worker decides a ping 1 s after the switch; the event loop lags and runs only after 8 s.
        VirtualTime.advance(world.ticker, world.monitor, 8_000, List.of());
        ch.runPendingTasks();
        assertEquals("PING", ch.readOutbound(), "the ping is written when the event loop runs");
        assertTrue(ch.isOpen(), "a peer never pinged is not closed for PING_TIMEOUT");
    }

    /**
     * A ping-to-idle switch: the writer-idle check starts from the switch, though the shared slot
     * held the ping's write time, and fires exactly one writer-idle timeout later.
     */
    @Test
    void aWriterCheckAfterPingsStartsFromTheSwitch() {
        HeartbeatConfig pings = HeartbeatConfig.ping(c -> "PING").interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(2).build();
        HeartbeatHandlerTest.Recorder r = new HeartbeatHandlerTest.Recorder();
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(pings), r);
        world.advance(INTERVAL.toMillis() + LATE);
        assertEquals("PING", ch.readOutbound(), "a ping was written");
        assertTrue(world.monitor.reconfigure(ch, HeartbeatConfig.events().writerIdle(Duration.ofSeconds(2)).build()));
        world.advance(2_000 - 1);
        assertEquals(List.of(), r.events, "not before the writer-idle timeout since the switch");
        world.advance(1 + LATE);
        assertEquals(List.of(IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT), r.events, "a tick late at most");
        world.advance(2_000);
        assertEquals(List.of(IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT, IdleStateEvent.WRITER_IDLE_STATE_EVENT),
                r.events, "and every timeout after it");
    }

    /**
     * A worker still judging a configuration with all three kinds after the event loop replaced its
     * side object (a switch under way) finds no all-idle check time: it must leave the channel to the
     * switch's request, not fail. The switch is made by hand as the event loop makes it: the side
     * object goes first, the new configuration (reader idle only, which keeps no side object) later.
     */
    @Test
    void aJudgeOfAllThreeKindsWithoutItsSideObjectLeavesTheChannelToTheSwitch()
            throws ReflectiveOperationException {
        HeartbeatHandlerTest.Recorder r = new HeartbeatHandlerTest.Recorder();
        Duration second = Duration.ofSeconds(1);
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(HeartbeatConfig.events().readerIdle(second)
                .writerIdle(second).allIdle(second).build()), r);
        HeartbeatHandler handler = (HeartbeatHandler) ch.pipeline().first();
        VarHandle side = MethodHandles.privateLookupIn(HeartbeatHandler.class, MethodHandles.lookup())
                .findVarHandle(HeartbeatHandler.class, "side", Object.class);
        assertTrue(side.getVolatile(handler) instanceof AllIdleCheck, "all three kinds keep the third check aside");
        side.setVolatile(handler, null); // the switch has begun
        world.advance(1_000 + LATE);
        assertEquals(List.of(), r.events, "nothing is judged without the third check time");
        assertEquals(0, world.monitor.stats().timer().callbackFailures(), "and nothing failed");
        assertTrue(world.monitor.reconfigure(ch, HeartbeatConfig.events().readerIdle(second).build()));
        world.advance(1_000 - 1);
        assertEquals(List.of(), r.events, "the new configuration starts from the switch");
        world.advance(1 + LATE);
        assertEquals(List.of(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT), r.events);
        assertEquals(0, world.monitor.stats().timer().callbackFailures());
    }
}
