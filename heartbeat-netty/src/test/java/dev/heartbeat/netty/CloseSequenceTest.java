/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.CloseSequence;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The close sequence where policies meet (issue 26, items 1, 2, 3, 8, 10, 12), in virtual time: a
 * veto's hold asked again at each extension's end, a drain that outlives a reconfiguration and the
 * stale-verdict filter, a goodbye said once, an overload close held by a veto, a guard that is due
 * the moment it is configured.
 */
class CloseSequenceTest {

    /** The default wheel tick, 2^20 ns. */
    private static final long TICK_NANOS = 1L << 20;

    private final VirtualTime.World world = new VirtualTime.World(7); // the clock wraps during each test
    private final HeartbeatMonitor monitor = world.monitor;

    @AfterEach
    void tearDown() {
        world.close();
    }


    /** The events as their strings (the events have no equals: a user compares reasons). */
    private static List<String> strings(List<Object> events) {
        return events.stream().map(String::valueOf).toList();
    }

    /**
     * A goodbye whose write is still pending bounds the close with a timer on the event loop (a Netty
     * scheduled task per such close: the one per-channel timer object in Heartbeat's close path). Once
     * the write completes and the channel closes, the timer is cancelled, not left in the loop's
     * scheduled-task queue for the rest of its second (a close wave at 1M channels would hold one each).
     */
    @Test
    void aGoodbyeWrittenInTimeLeavesNoTimerBehind() {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        ChannelHandlerContext ctx = ch.pipeline().firstContext();
        ChannelPromise written = ch.newPromise();
        CloseSequence.closeWhenWritten(ctx, written);
        assertTrue(ch.isOpen(), "waits for the goodbye's write");
        long bound = ch.runScheduledPendingTasks();
        assertTrue(bound > 0 && bound <= CloseSequence.GOODBYE_WRITE_WAIT_NANOS, "the bound is scheduled: " + bound);
        written.setSuccess();
        assertFalse(ch.isOpen(), "closed once the goodbye is written");
        assertEquals(-1, ch.runScheduledPendingTasks(), "and the bound's timer is gone from the loop");
    }

    /** A goodbye written at once (the usual case): closed now, and no timer made at all. */
    @Test
    void aGoodbyeWrittenAlreadyNeedsNoTimer() {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        CloseSequence.closeWhenWritten(ch.pipeline().firstContext(), ch.newSucceededFuture());
        assertFalse(ch.isOpen());
        assertEquals(-1, ch.runScheduledPendingTasks(), "no timer on the loop");
    }

    /** A goodbye whose write hangs: the channel is closed by the bound all the same. */
    @Test
    void aGoodbyeThatHangsIsClosedByTheBound() throws InterruptedException {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        ChannelPromise written = ch.newPromise();
        CloseSequence.closeWhenWritten(ch.pipeline().firstContext(), written);
        long bound = ch.runScheduledPendingTasks();
        assertTrue(ch.isOpen());
        ch.advanceTimeBy(bound, TimeUnit.NANOSECONDS);
        ch.runScheduledPendingTasks();
        assertFalse(ch.isOpen(), "closed at the bound though the goodbye never completed");
        written.setSuccess(); // late: closing again is harmless
        assertFalse(ch.isOpen());
    }

    /** Item 1: the veto is asked again when its extension ends, not at the next idle check. */
    @Test
    void aVetoExtensionIsAskedAgainWhenItEndsAndTheHoldIsBounded() {
        List<Long> askedAt = new ArrayList<>();
        long start = world.ticker.nanoTime();
        HeartbeatConfig cfg = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10))
                .maxCloseHold(Duration.ofSeconds(3)).beforeClose((c, reason) -> {
                    askedAt.add(TimeUnit.NANOSECONDS.toMillis(world.ticker.nanoTime() - start));
                    return CloseDecision.extend(Duration.ofSeconds(1));
                }).build();
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), r);
        world.step(12_990);
        assertTrue(ch.isOpen(), "held: asked at " + askedAt);
        assertEquals(3, askedAt.size(), "asked at 10, 11 and 12 s: " + askedAt);
        assertTrue(askedAt.get(1) >= 11_000 && askedAt.get(1) < 11_050, "asked again when the 1 s ran out: " + askedAt);
        world.step(60);
        assertFalse(ch.isOpen(), "closed at 13 s: held 3 s, its bound");
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.READER_IDLE)), r.events);
        assertEquals(1, monitor.closeHoldsExpired());
    }

    /** Item 2: a reconfiguration after a drain began does not take the channel out of the drain. */
    @Test
    void aDrainClosesAChannelReconfiguredDuringIt() throws Exception {
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        EmbeddedChannel ch = world.channel(monitor.newHandler(loginDeadline()), r);
        var spread = monitor.drain(Duration.ofSeconds(10));
        world.step(1_000);
        assertEquals(1, spread.get());
        assertTrue(monitor.reconfigure(ch, session()));
        world.step(9_100);
        assertFalse(ch.isOpen(), "a drain closes every channel within its window");
        assertEquals(strings(List.of(new HeartbeatGoodbyeEvent(CloseReason.DRAIN, Duration.ZERO),
                HeartbeatCloseEvent.of(CloseReason.DRAIN))), strings(r.events));
    }

    /** Item 3: a drain waiting for the action budget survives a reconfiguration (no stale verdict). */
    @Test
    void aDrainWaitingForTheBudgetSurvivesAReconfiguration() throws Exception {
        ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(3));
        HeartbeatMonitor budgeted = HeartbeatMonitor.builder().ticker(ticker).maxCoalescing(Duration.ZERO)
                .actionBudget(1).build();
        List<EmbeddedChannel> channels = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                channels.add(new EmbeddedChannel(budgeted.newHandler(loginDeadline())));
            }
            budgeted.runOnce();
            var spread = budgeted.drain(Duration.ZERO); // all three due at once: two wait for the budget
            VirtualTime.advance(ticker, budgeted, 10, channels);
            assertEquals(3, spread.get());
            for (EmbeddedChannel ch : channels) {
                if (ch.isOpen()) {
                    assertTrue(budgeted.reconfigure(ch, session()));
                }
            }
            VirtualTime.advance(ticker, budgeted, 5_000, channels);
            for (EmbeddedChannel ch : channels) {
                assertFalse(ch.isOpen(), "drained though reconfigured while its DRAIN waited for the budget");
            }
            assertEquals(0, budgeted.stats().staleVerdicts(), "a DRAIN is no stale verdict");
        } finally {
            channels.forEach(EmbeddedChannel::finishAndReleaseAll);
            budgeted.close();
        }
    }

    /** Item 10: a drain during a max-age grace says no second goodbye, and closes within its window. */
    @Test
    void aDrainDuringAMaxAgeGraceSaysNoSecondGoodbye() throws Exception {
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        HeartbeatConfig cfg = HeartbeatConfig.events().readerIdle(Duration.ofMinutes(10)).maxAge(Duration.ofSeconds(1))
                .maxAgeGrace(Duration.ofSeconds(30)).goodbye(Probes.webSocket()).build();
        EmbeddedChannel ch = world.channel(monitor.newHandler(cfg), r);
        world.step(1_100);
        assertEquals(List.of(new HeartbeatGoodbyeEvent(CloseReason.MAX_AGE, Duration.ofSeconds(30)).toString()),
                strings(r.events));
        monitor.drain(Duration.ofSeconds(2));
        world.step(2_100);
        assertFalse(ch.isOpen(), "the drain's window ends before the grace: closed by the drain");
        assertEquals(1, r.events.stream().filter(e -> e instanceof HeartbeatGoodbyeEvent).count(),
                "one goodbye event: " + r.events);
        int closeFrames = 0;
        for (Object o; (o = ch.readOutbound()) != null; ) {
            closeFrames += o instanceof CloseWebSocketFrame ? 1 : 0;
            ReferenceCountUtil.release(o);
        }
        assertEquals(1, closeFrames, "one Close frame");
        assertEquals(HeartbeatCloseEvent.of(CloseReason.DRAIN), r.events.get(r.events.size() - 1));
    }

    /**
     * Item 8: an overload close held by the veto is looked at again when the hold ends, not at every
     * cycle, and counted once, when it happens.
     */
    @Test
    void anOverloadCloseHeldByTheVetoIsNotJudgedAgainEveryCycle() {
        AtomicBoolean busy = new AtomicBoolean(true);
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofSeconds(4)).holdWhile(c -> busy.get()).build()),
                new KeepAliveTest.Recorder());
        world.step(2_500);
        long checksBefore = monitor.stats().timer().expired();
        monitor.reduceIdleTimeouts(0.5);
        world.step(500);
        long checks = monitor.stats().timer().expired() - checksBefore;
        assertTrue(ch.isOpen(), "held: work in flight");
        assertTrue(checks <= 5, "a held close is looked at when its hold ends, not every cycle: " + checks);
        assertEquals(0, monitor.overloadCloses(), "nothing closed yet");
        assertEquals(0, monitor.stats().stallRechecks(), "no stall: the worker kept up");
        busy.set(false);
        world.step(1_200);
        assertFalse(ch.isOpen());
        assertEquals(1, monitor.overloadCloses());
    }

    /**
     * Model family 8 (seed 438): an overload close whose hold ended, and is not re-checked yet, is not
     * re-armed at the hold's end, in the past, where it would expire at every cycle.
     */
    @Test
    void anOverloadCloseWhoseHoldEndedIsNotArmedInThePast() {
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.closeWhenIdle()
                .allIdle(Duration.ofMillis(400)).maxCloseHold(Duration.ofSeconds(1))
                .beforeClose((c, reason) -> CloseDecision.extend(Duration.ofMillis(20))).build()));
        HeartbeatHandler handler = ch.pipeline().get(HeartbeatHandler.class);
        monitor.reduceIdleTimeouts(0.5);
        for (int i = 0; i < 1_500 && ch.isOpen(); i++) {
            world.ticker.advance(TimeUnit.MILLISECONDS.toNanos(1));
            monitor.runOnce(); // the worker looks; the event loop runs only every 5 ms, so holds end unseen
            // A deadline within the wheel's tick (1.05 ms) of now may wait for the next tick; more is the past.
            assertTrue(!handler.isScheduled() || world.ticker.nanoTime() - handler.deadline() < TICK_NANOS,
                    "armed " + TimeUnit.NANOSECONDS.toMillis(world.ticker.nanoTime() - handler.deadline())
                            + " ms in the past at step " + i);
            if (i % 5 == 0) {
                ch.runPendingTasks();
            }
        }
        assertFalse(ch.isOpen(), "closed at the hold's bound");
    }

    /** Item 12: a guard already due when it is configured acts at once, and that is no worker stall. */
    @Test
    void aMaxAgeAlreadyReachedWhenConfiguredActsAtOnce() {
        KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
        EmbeddedChannel ch = world.channel(monitor.newHandler(HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofSeconds(60)).maxAge(Duration.ofHours(1)).build()), r);
        world.step(50_000);
        ch.writeInbound("keep it alive");
        assertTrue(monitor.reconfigure(ch, HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5))
                .maxAge(Duration.ofSeconds(20)).build()));
        world.step(100);
        assertFalse(ch.isOpen(), "50 s old, max age 20 s: closed at once");
        assertEquals(strings(List.of(new HeartbeatGoodbyeEvent(CloseReason.MAX_AGE, Duration.ZERO),
                HeartbeatCloseEvent.of(CloseReason.MAX_AGE))), strings(r.events));
        assertEquals(0, monitor.stats().stallRechecks(), "no stall: the worker kept up");
    }

    /**
     * Item 20: every close Heartbeat makes says its reason with the protocol's goodbye, where there is
     * one, not only max age and drain: a silent peer closed for PING_TIMEOUT, an idle one for
     * READER_IDLE.
     */
    @Test
    void aPolicyCloseSaysItsReasonWithTheProtocolGoodbye() {
        EmbeddedChannel pinged = world.channel(monitor.newHandler(HeartbeatConfig.ping(Probes.webSocket())
                .interval(Duration.ofSeconds(1)).timeout(Duration.ofSeconds(1)).maxMissedPings(1).build()));
        EmbeddedChannel idle = world.channel(monitor.newHandler(HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofSeconds(1)).goodbye(Probes.webSocket()).build()));
        world.step(2_100);
        assertFalse(pinged.isOpen());
        assertFalse(idle.isOpen());
        assertEquals(List.of("1001 PING_TIMEOUT"), closeFrames(pinged));
        assertEquals(List.of("1001 READER_IDLE"), closeFrames(idle));
    }

    /**
     * Model families 102 and 104: the grace a max-age goodbye announced is kept across a reconfiguration,
     * to one with another grace or with no max age at all: never closed before it ends, never left open
     * after it (a terminal decision).
     */
    @Test
    void theGraceAGoodbyeAnnouncedOutlivesAReconfiguration() {
        HeartbeatConfig aged = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(10))
                .maxAge(Duration.ofSeconds(1)).maxAgeGrace(Duration.ofSeconds(5)).goodbye(Probes.webSocket()).build();
        HeartbeatConfig noGrace = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(10))
                .maxAge(Duration.ofSeconds(1)).goodbye(Probes.webSocket()).build();
        HeartbeatConfig noAge = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(10))
                .writeStall(Duration.ofSeconds(30)).goodbye(Probes.webSocket()).build();
        for (HeartbeatConfig then : List.of(noGrace, noAge)) {
            KeepAliveTest.Recorder r = new KeepAliveTest.Recorder();
            EmbeddedChannel ch = world.channel(monitor.newHandler(aged), r);
            world.step(1_100); // the goodbye at 1 s: a grace of 5 s announced
            assertTrue(monitor.reconfigure(ch, then));
            world.step(4_850);
            assertTrue(ch.isOpen(), "not before the announced grace ends at 6 s: " + then + " " + r.events);
            world.step(100);
            assertFalse(ch.isOpen(), "closed when the announced grace ends: " + then);
            assertEquals(List.of(CloseReason.MAX_AGE), r.events.stream().filter(e -> e instanceof HeartbeatCloseEvent)
                    .map(e -> ((HeartbeatCloseEvent) e).reason()).toList());
            assertEquals(List.of("1001 MAX_AGE"), closeFrames(ch), "one goodbye");
        }
    }

    /** The status and reason of each WebSocket Close frame the channel wrote (other frames released). */
    private static List<String> closeFrames(EmbeddedChannel ch) {
        List<String> frames = new ArrayList<>();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            if (o instanceof CloseWebSocketFrame close) {
                frames.add(close.statusCode() + " " + close.reasonText());
            }
            ReferenceCountUtil.release(o);
        }
        return frames;
    }

    private static HeartbeatConfig loginDeadline() {
        return HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60)).build();
    }

    private static HeartbeatConfig session() {
        return HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5)).build();
    }
}
