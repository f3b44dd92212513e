/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.EventLoopBatch;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Lazy hand-offs ({@link HeartbeatMonitor.Builder#lazyHandOffs}), in virtual time: the Heartbeat
 * handler runs on a {@link ManualLoop}, an event loop that tells a task handed with
 * {@code execute} (which wakes a real loop) from one handed with {@code lazyExecute} (which does
 * not), and runs them only when the test says so: a loop asleep until then.
 */
class LazyHandOffTest {

    private static final Duration INTERVAL = Duration.ofSeconds(1);
    private static final Duration TIMEOUT = Duration.ofSeconds(1);
    /** The ping configuration's coalescing window: 2^23 ns, the largest power of two <= 1 s / 64. */
    private static final long WINDOW = 1L << 23;
    /** How long a lazy hand-off may wait: to the next point of the window's grid. */
    private static final long GRACE = WINDOW;

    private final ManualTicker ticker = new ManualTicker(0);
    private final ManualLoop loop = new ManualLoop();
    private HeartbeatMonitor monitor;
    private EmbeddedChannel channel;

    @AfterEach
    void tearDown() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        if (monitor != null) {
            monitor.close();
        }
    }

    // addLast with an executor group is deprecated in Netty 4.2; it is still how a handler gets an executor
    // of its own, which is what this test needs.
    @SuppressWarnings("deprecation")
    private EmbeddedChannel pingChannel(HeartbeatMonitor.Builder builder) {
        monitor = builder.manual().ticker(ticker).build();
        HeartbeatConfig config = HeartbeatConfig.ping(c -> "PING").interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(1).build();
        channel = new EmbeddedChannel();
        channel.pipeline().addLast(loop, "heartbeat", monitor.newHandler(config));
        loop.runAll(); // nothing yet; the registration is the handler's request to the worker
        monitor.runOnce();
        return channel;
    }

    /** Runs a worker cycle every millisecond until {@code until} (ticker time), leaving the loop asleep. */
    private void cyclesUntil(long until) {
        while (ticker.nanoTime() - until < 0) {
            ticker.advance(Math.min(TimeUnit.MILLISECONDS.toNanos(1), until - ticker.nanoTime()));
            monitor.runOnce();
        }
    }

    /** Runs cycles a millisecond apart until the first that hands the loop anything; returns its time. */
    private long cyclesUntilAHandOff(long limit) {
        while (loop.tasks.isEmpty()) {
            assertTrue(ticker.nanoTime() - limit < 0, "no hand-off by " + limit);
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
        return ticker.nanoTime();
    }

    @Test
    void aPingIsHandedWithoutWakingTheLoopAndGoesOutWithItsNextRun() {
        pingChannel(HeartbeatMonitor.builder().lazyHandOffs(true));
        cyclesUntilAHandOff(INTERVAL.toNanos() + 2 * WINDOW);
        assertEquals(1, loop.lazy, "the ping's batch, lazily");
        assertEquals(0, loop.wakeUps);
        assertNull(channel.readOutbound(), "not before the loop runs");

        loop.runAll(); // the loop woke for something else (I/O) and ran its queue
        assertEquals("PING", channel.readOutbound());
        cyclesUntil(ticker.nanoTime() + 2 * WINDOW + TimeUnit.MILLISECONDS.toNanos(2));
        assertEquals(0, loop.wakeUps, "the follow-up cycle found the batch run: no wake-up");
        assertTrue(loop.tasks.isEmpty());
    }

    @Test
    void aLoopThatStaysAsleepIsWokenWithinTheWindow() {
        aLoopThatStaysAsleepIsWokenWithinTheWindow(0);
    }

    /** As above, on a monitor whose grid points are not multiples of the window (see {@code CoalescingTest}). */
    @Test
    void aLoopThatStaysAsleepIsWokenWithinTheWindowOfAShiftedGrid() {
        aLoopThatStaysAsleepIsWokenWithinTheWindow(GRACE / 2 + 12_345);
    }

    private void aLoopThatStaysAsleepIsWokenWithinTheWindow(long phase) {
        pingChannel(HeartbeatMonitor.builder().lazyHandOffs(true).gridPhase(phase));
        long handedAt = cyclesUntilAHandOff(INTERVAL.toNanos() + 2 * WINDOW);
        assertEquals(1, loop.lazy);
        long wokenAt = -1;
        long limit = handedAt + GRACE + TimeUnit.MILLISECONDS.toNanos(2);
        while (loop.wakeUps == 0 && ticker.nanoTime() - limit < 0) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
            wokenAt = ticker.nanoTime();
        }
        assertEquals(1, loop.wakeUps, "woken by the follow-up cycle, at the window's next grid point");
        long gridPoint = ((handedAt - phase + GRACE) & -GRACE) + phase;
        assertTrue(wokenAt - handedAt > 0 && wokenAt - gridPoint >= 0 && wokenAt - gridPoint < GRACE,
                "at the grid point after the hand-off, not sooner: " + (wokenAt - handedAt));
        assertEquals(2, loop.tasks.size(), "the lazy batch and the wake-up");
        loop.runAll();
        assertEquals("PING", channel.readOutbound());
        assertNull(channel.readOutbound(), "one ping");
        cyclesUntil(ticker.nanoTime() + 2 * WINDOW);
        assertEquals(1, loop.wakeUps, "one wake-up");
    }

    @Test
    void aCloseWakesTheLoopAtOnce() {
        pingChannel(HeartbeatMonitor.builder().lazyHandOffs(true));
        cyclesUntilAHandOff(INTERVAL.toNanos() + 2 * WINDOW);
        loop.runAll();
        assertEquals("PING", channel.readOutbound());
        // Unanswered: one missed ping closes.
        cyclesUntilAHandOff(ticker.nanoTime() + TIMEOUT.toNanos() + 2 * WINDOW);
        assertEquals(1, loop.wakeUps, "the close wakes its loop in the cycle that decides it");
        assertEquals(1, loop.lazy, "only the ping went lazily");
        assertTrue(channel.isOpen());
        loop.runAll();
        assertFalse(channel.isOpen(), "closed for the unanswered ping");
    }

    @Test
    void aCloseForALoopHoldingALazyBatchWakesIt() {
        pingChannel(HeartbeatMonitor.builder().lazyHandOffs(true));
        cyclesUntilAHandOff(INTERVAL.toNanos() + 2 * WINDOW);
        assertEquals(1, loop.lazy);
        EventLoopBatch batch = monitor.engine.batchFor(loop);
        batch.mustNotWait(); // as an urgent action for another channel of this loop would
        assertEquals(EventLoopBatch.HANDED, batch.submitIfNeeded(true, 0, 0));
        assertEquals(1, loop.wakeUps, "woken for the urgent action: the lazy batch runs with it");
        assertEquals(EventLoopBatch.HANDED, batch.submitIfNeeded(true, 0, 0));
        assertEquals(1, loop.wakeUps, "woken once");
        loop.runAll();
        assertEquals("PING", channel.readOutbound());
        assertTrue(batch.isIdle());
    }

    @Test
    void aCycleBeforeItsTimeLeavesALazyBatchWaiting() {
        pingChannel(HeartbeatMonitor.builder().lazyHandOffs(true));
        long handedAt = cyclesUntilAHandOff(INTERVAL.toNanos() + 2 * WINDOW);
        EventLoopBatch batch = monitor.engine.batchFor(loop);
        long until = batch.lazyUntil();
        assertTrue(until - handedAt > 0 && until - handedAt <= GRACE, "waits at most a window: "
                + (until - handedAt));
        assertEquals(EventLoopBatch.WAITING, batch.submitIfNeeded(true, until - 1, until + GRACE),
                "a cycle before its time: the loop may still run it on its own");
        assertEquals(0, loop.wakeUps);
        assertEquals(until, batch.lazyUntil(), "its time stays");
        assertEquals(EventLoopBatch.HANDED, batch.submitIfNeeded(true, until, until + GRACE));
        assertEquals(1, loop.wakeUps, "at its time: woken");
        loop.runAll();
        assertEquals("PING", channel.readOutbound());
    }

    @Test
    void withoutLazyHandOffsEveryHandOffWakes() {
        pingChannel(HeartbeatMonitor.builder()); // off by default
        cyclesUntilAHandOff(INTERVAL.toNanos() + 2 * WINDOW);
        assertEquals(0, loop.lazy);
        assertEquals(1, loop.wakeUps);
        loop.runAll();
        assertEquals("PING", channel.readOutbound());
    }

    @Test
    void theLoopThatHostsTheCyclesGetsItsBatchesEagerly() {
        pingChannel(HeartbeatMonitor.builder().hostedBy(loop).lazyHandOffs(true));
        cyclesUntilAHandOff(INTERVAL.toNanos() + 2 * WINDOW);
        assertEquals(0, loop.lazy, "it runs the batch right after the cycle: nothing to save, no follow-up");
        assertEquals(1, loop.wakeUps);
    }

    @Test
    void withoutACoalescingWindowLazyHandOffsAreRefused() {
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> HeartbeatMonitor.builder().lazyHandOffs(true).maxCoalescing(Duration.ZERO).build());
        assertEquals("lazyHandOffs needs a coalescing window to wait in: maxCoalescing is PT0S, so every hand-off "
                + "would wake its loop", e.getMessage());
    }

    /**
     * An event loop driven by the test: always "in" its loop (so the pipeline calls the handler
     * directly), it queues what it is handed and counts how: {@code execute} would wake a sleeping
     * Netty loop, {@code lazyExecute} would not. Its thread never starts (both hand-offs are
     * overridden).
     */
    static final class ManualLoop extends SingleThreadEventExecutor {
        final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
        int wakeUps;
        int lazy;

        ManualLoop() {
            super(null, (Executor) command -> {
                throw new IllegalStateException("never started: both hand-offs are overridden");
            }, false);
        }

        @Override
        protected void run() {
            // never started
        }

        @Override
        public void execute(Runnable task) {
            wakeUps++;
            tasks.add(task);
        }

        @Override
        public void lazyExecute(Runnable task) {
            lazy++;
            tasks.add(task);
        }

        /** The loop wakes (for whatever reason) and runs its queue. */
        void runAll() {
            for (Runnable r; (r = tasks.poll()) != null; ) {
                r.run();
            }
        }

        @Override
        public boolean inEventLoop(Thread thread) {
            return true;
        }
    }
}
