/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * Policies composed, one combination per test, each the exact reproduction of an item of issue 26
 * (which the interaction model, {@link InteractionModelTest}, finds at random): the regression tests of
 * "policies compose" (DESIGN property 9). Virtual time, stepped 1 ms at a time with the event loop
 * keeping up, so every figure is exact to a tick.
 */
class ComposedPoliciesTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** The application at the end of the pipeline: what Heartbeat told it, and when (ms since the start). */
    static final class App extends ChannelInboundHandlerAdapter {
        final List<Object> events = new ArrayList<>();
        final List<Long> times = new ArrayList<>();
        private final Clock clock;

        App(Clock clock) {
            this.clock = clock;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
            times.add(clock.ms());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            // the application's data: consumed
        }

        long count(Class<?> type) {
            return events.stream().filter(type::isInstance).count();
        }
    }

    /** Virtual time for one test: the monitor (optionally with an action budget) and its channels. */
    static final class Clock implements AutoCloseable {
        final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(3)); // wraps
        final long origin = ticker.nanoTime();
        final HeartbeatMonitor monitor;
        final List<EmbeddedChannel> channels = new ArrayList<>();

        Clock(int actionBudget) {
            monitor = HeartbeatMonitor.builder().ticker(ticker).maxCoalescing(Duration.ZERO)
                    .actionBudget(actionBudget).build();
        }

        long ms() {
            return (ticker.nanoTime() - origin) / MS;
        }

        EmbeddedChannel channel(HeartbeatConfig cfg, App app) {
            EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(cfg), app);
            channels.add(ch);
            monitor.runOnce();
            return ch;
        }

        /** Moves on to {@code ms} since the start, 1 ms at a time: a worker cycle, then the event loops' turn. */
        void until(long ms) {
            while (ms() < ms) {
                ticker.advance(MS);
                monitor.runOnce();
                for (EmbeddedChannel ch : channels) {
                    ch.runPendingTasks();
                }
            }
        }

        @Override
        public void close() {
            for (EmbeddedChannel ch : channels) {
                ch.finishAndReleaseAll();
            }
            monitor.close();
        }
    }

    // ------------------------------------------------------------------ item 2

    /**
     * Item 2. {@code HeartbeatMonitor.drain}: every channel is closed within the window; a reconfigure
     * (a login switching to a 5-minute session) does not undo it. Before the fix the channel
     * reconfigured at 1 s closed at 301 s.
     */
    @Test
    void aDrainClosesAReconfiguredChannelWithinItsWindow() {
        try (Clock clock = new Clock(0)) {
            App app = new App(clock);
            EmbeddedChannel ch = clock.channel(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(30))
                    .build(), app);
            clock.monitor.drain(Duration.ofSeconds(10));
            clock.until(1_000);
            clock.monitor.reconfigure(ch, HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5)).build());
            clock.until(10_010);
            assertFalse(ch.isOpen(), "drained within its 10 s window despite the reconfigure");
            assertEquals(List.of(CloseReason.DRAIN), closeReasons(app));
        }
    }

    // ------------------------------------------------------------------ item 3

    /**
     * Item 3. A drain under an action budget of 1 a second: each DRAIN waits for its token ("a deferral
     * only delays an action"); a reconfigure while one waits must not turn it into a stale verdict.
     * Before the fix the waiting DRAIN was dropped and the channel stayed open for good.
     */
    @Test
    void aDrainWaitingForTheActionBudgetSurvivesAReconfigure() {
        try (Clock clock = new Clock(1)) {
            HeartbeatConfig idle = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60)).build();
            List<EmbeddedChannel> chs = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                chs.add(clock.channel(idle, new App(clock)));
            }
            clock.monitor.drain(Duration.ZERO);
            clock.until(100); // one DRAIN took the token; the others wait for theirs
            long waiting = chs.stream().filter(EmbeddedChannel::isOpen).count();
            assertTrue(waiting >= 1, "some DRAINs wait for the budget: " + waiting);
            for (EmbeddedChannel ch : chs) {
                if (ch.isOpen()) {
                    clock.monitor.reconfigure(ch, HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5))
                            .build());
                }
            }
            clock.until(10_000); // 3 actions at 1 a second, and then some
            for (EmbeddedChannel ch : chs) {
                assertFalse(ch.isOpen(), "every drained channel closes, budget or not");
            }
        }
    }

    // ------------------------------------------------------------------ item 8

    /**
     * Item 8. {@code reduceIdleTimeouts(0.5)} while {@code holdWhile} holds the idle close: the held
     * channel's entry must come due once per look (the hold's re-check a second), not be re-armed in
     * the past and expired at every cycle; no overload close counted for a channel that stays open; no
     * stall re-check while the worker keeps up. Before the fix (issue 26, a real worker): 7,000 to 44,000
     * expirations in 0.5 s, hundreds of overload closes counted, false stall re-checks; here, with a
     * worker cycle a millisecond, 6 expirations in the 0.5 s measured.
     */
    @Test
    void anOverloadCloseHeldByHoldWhileIsLookedAtOncePerRecheck() {
        try (Clock clock = new Clock(0)) {
            EmbeddedChannel ch = clock.channel(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1))
                    .holdWhile(c -> true).build(), new App(clock));
            clock.until(100);
            clock.monitor.reduceIdleTimeouts(0.5); // a silent channel is due at 0.5 s, and held: work in flight
            clock.until(600);
            long before = clock.monitor.stats().timer().expired();
            clock.until(1_100);
            long expired = clock.monitor.stats().timer().expired() - before;
            assertTrue(ch.isOpen(), "held: work in flight");
            assertTrue(expired <= 2, "a held channel is looked at once per re-check (1 s), not at every cycle: "
                    + expired + " expirations in 0.5 s");
            assertEquals(0, clock.monitor.overloadCloses(), "no close happened");
            assertEquals(0, clock.monitor.stats().stallRechecks(), "the worker kept up");
        }
    }

    // ------------------------------------------------------------------ item 10

    /**
     * Item 10. A drain during a max-age grace: a goodbye is said once ({@link HeartbeatGoodbyeEvent},
     * and the probe's goodbye written once), and the channel is closed once. Before the fix: two goodbye
     * events (MAX_AGE, DRAIN) and two goodbyes written.
     */
    @Test
    void aDrainDuringAMaxAgeGraceSaysNoSecondGoodbye() {
        try (Clock clock = new Clock(0)) {
            App app = new App(clock);
            EmbeddedChannel ch = clock.channel(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60))
                    .maxAge(Duration.ofSeconds(1)).maxAgeGrace(Duration.ofSeconds(5)).goodbye(LineProbe.INSTANCE)
                    .build(), app);
            clock.until(1_010);
            assertEquals(1, app.count(HeartbeatGoodbyeEvent.class), "the max-age goodbye, at 1 s");
            clock.monitor.drain(Duration.ZERO);
            clock.until(2_000);
            assertFalse(ch.isOpen(), "the drain closes it");
            assertEquals(1, app.count(HeartbeatGoodbyeEvent.class), "one goodbye event: " + app.events);
            assertEquals(1, app.count(HeartbeatCloseEvent.class), "one close event: " + app.events);
            int byes = 0;
            for (Object msg; (msg = ch.readOutbound()) != null; ) {
                byes += msg instanceof String s && s.startsWith(LineProbe.BYE) ? 1 : 0;
            }
            assertEquals(1, byes, "one goodbye written");
        }
    }

    // ------------------------------------------------------------------ items 7, 14, 15

    /**
     * Item 7. {@code maxUnwritable}: "Measured from the writability change Netty fires". A spell that
     * begins after a detour through a configuration without the guard is a new spell. Before the fix the
     * state of an earlier spell was carried over, and the new one was closed early.
     */
    @Test
    void anUnwritableSpellIsMeasuredFromItsStartAcrossAConfigurationWithoutTheGuard() {
        try (Clock clock = new Clock(0)) {
            HeartbeatConfig watching = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60))
                    .maxUnwritable(Duration.ofSeconds(10)).build();
            HeartbeatConfig notWatching = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60))
                    .maxAge(Duration.ofHours(1)).build();
            EmbeddedChannel ch = clock.channel(watching, new App(clock));
            io.netty.channel.ChannelOutboundBuffer buf = ch.unsafe().outboundBuffer();
            clock.until(1_000);
            buf.setUserDefinedWritability(1, false);
            clock.until(2_000);
            clock.monitor.reconfigure(ch, notWatching);
            clock.until(3_000);
            buf.setUserDefinedWritability(1, true);
            clock.until(4_000);
            clock.monitor.reconfigure(ch, watching);
            clock.until(5_000);
            buf.setUserDefinedWritability(1, false); // a new spell, at 5 s
            clock.until(14_990);
            assertTrue(ch.isOpen(), "unwritable for less than 10 s");
            clock.until(15_010);
            assertFalse(ch.isOpen(), "closed 10 s into the spell");
        }
    }

    /**
     * Item 14. {@code closeWhenReaderIdle}: "longer than the interval unless pings are driven by writer
     * idleness (checked by build(): else the channel would close before its first ping)". With jitter the
     * first ping may come as late as interval x (1 + jitter). Before the fix this built, and 18 of 20
     * silent channels were closed before their first ping.
     */
    @Test
    void buildRefusesAReaderIdleCloseThatTheJitteredFirstPingMayMiss() {
        assertThrows(IllegalStateException.class, () -> HeartbeatConfig.ping(LineProbe.INSTANCE)
                .interval(Duration.ofSeconds(10)).jitter(0.9).closeWhenReaderIdle(Duration.ofSeconds(11)).build());
    }

    /**
     * Item 15. "No setting is silently ignored" (DESIGN property 6), as {@code maxAgeGrace} without
     * {@code maxAge} is refused: {@code maxCloseHold} without a veto, and {@code hostWatchdog} without
     * {@code hostedBy}, are refused too. Before the fix both were accepted and dropped.
     */
    @Test
    void settingsThatWouldBeIgnoredAreRefused() {
        assertThrows(IllegalStateException.class, () -> HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofSeconds(10)).maxCloseHold(Duration.ofSeconds(3)).build());
        assertThrows(IllegalStateException.class, () -> HeartbeatMonitor.builder()
                .hostWatchdog(Duration.ofMillis(100)).build().close());
    }

    // ------------------------------------------------------------------ found by the model: 103

    /**
     * Model item 103. {@code HeartbeatMonitor#reduceIdleTimeouts}: "from now on, every closeWhenIdle
     * channel is closed once idle for factor times its timeout": a channel that starts during the
     * overload too. Before the fix it was first checked at its unscaled timeout (11 s here).
     */
    @Test
    void aChannelThatStartsDuringAnOverloadIsClosedAtItsScaledTimeout() {
        try (Clock clock = new Clock(0)) {
            clock.monitor.reduceIdleTimeouts(0.5);
            clock.until(1_000);
            EmbeddedChannel ch = clock.channel(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10))
                    .build(), new App(clock));
            clock.until(5_990);
            assertTrue(ch.isOpen(), "not before half its timeout");
            clock.until(6_010);
            assertFalse(ch.isOpen(), "closed at half its 10 s timeout after it started, at 6 s");
        }
    }

    /**
     * A drain and a late worker (the interaction model's late spells, seed 150): a check that comes due after a
     * stall is deferred by the stall's length ({@code HeartbeatMonitor.Builder#stallThreshold}), but never past the
     * channel's drain slot, which every placement keeps; a slot that came in the stall is closed at once. Before the
     * fix the deferral was placed at the slot, in the past, so the entry expired again a cycle later, and that
     * cycle closed the channel (a stall re-check counted where none was taken).
     */
    @Test
    void aDrainSlotThatCameWhileTheWorkerWasLateIsClosedAtOnce() {
        try (Clock clock = new Clock(0)) {
            App app = new App(clock);
            EmbeddedChannel ch = clock.channel(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(30))
                    .build(), app);
            clock.monitor.drain(Duration.ofMillis(100));
            clock.until(1); // the drain's slots are handed out
            assertTrue(ch.isOpen(), "its slot is within the drain's 100 ms window, not at once");
            clock.ticker.advance(500 * MS); // the worker is late: no cycle for 500 ms, past the slot
            clock.monitor.runOnce();
            ch.runPendingTasks();
            assertFalse(ch.isOpen(), "its drain slot came in the stall: closed in the first cycle after it");
            assertEquals(List.of(CloseReason.DRAIN), closeReasons(app));
            assertEquals(0, clock.monitor.stats().stallRechecks(), "a drain slot that came is not deferred");
        }
    }

    private static List<CloseReason> closeReasons(App app) {
        List<CloseReason> reasons = new ArrayList<>();
        for (Object e : app.events) {
            if (e instanceof HeartbeatCloseEvent close) {
                reasons.add(close.reason());
            }
        }
        return reasons;
    }
}
