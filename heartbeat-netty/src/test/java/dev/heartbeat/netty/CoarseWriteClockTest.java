/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link HeartbeatMonitor.Builder#coarseWriteClock}: writes stamped with the time the worker publishes, a writer-idle
 * check up to the resolution later than with ticker readings and never sooner, whether the worker keeps up or
 * publishes late. Writer idleness 1 s, resolution 16 ms, in virtual time.
 */
class CoarseWriteClockTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long RESOLUTION_MS = 16;
    /** The lateness of a check beyond its deadline while the worker keeps up: a tick, the 1 ms step, rounded up. */
    private static final long LATE = 3;

    /** Two seconds before nanoTime wraps: the longer tests cross it. */
    private final VirtualTime.World world =
            new VirtualTime.World(2, b -> b.coarseWriteClock(Duration.ofMillis(RESOLUTION_MS)));
    private final ManualTicker ticker = world.ticker;
    private final HeartbeatMonitor monitor = world.monitor;

    @AfterEach
    void tearDown() {
        world.close();
    }

    /** A worker and event loops that keep up: 1 ms steps, a cycle and then the channels' actions after each. */
    private void step(long millis) {
        world.step(millis);
    }

    /** Records writer-idle events and when they came (ms since the test's start). */
    private final List<Long> idleAt = new ArrayList<>();

    private EmbeddedChannel writerIdleChannel(HeartbeatHandler handler) {
        EmbeddedChannel ch = new EmbeddedChannel(handler, new io.netty.channel.ChannelInboundHandlerAdapter() {
            @Override
            public void userEventTriggered(io.netty.channel.ChannelHandlerContext ctx, Object evt) {
                if (evt == FIRST_WRITER_IDLE_STATE_EVENT) {
                    idleAt.add(world.elapsedMillis());
                }
            }
        });
        world.channels.add(ch);
        monitor.runOnce();
        return ch;
    }

    private HeartbeatHandler writerIdle() {
        return (HeartbeatHandler) monitor.newHandler(HeartbeatConfig.events(false, 0, 1, 0, TimeUnit.SECONDS));
    }

    /** Steps until {@code from} ms (asserting no event before it), then until an event or {@code by} ms. */
    private void idleBetween(long from, long by, String why) {
        step(from - 1 - world.elapsedMillis());
        assertEquals(List.of(), idleAt, "never early: " + why);
        while (idleAt.isEmpty() && world.elapsedMillis() < by) {
            step(1);
        }
        assertEquals(1, idleAt.size(), "by " + by + " ms: " + why);
        assertTrue(idleAt.get(0) >= from, "never early: " + why + ": " + idleAt);
    }

    @Test
    void aWriteStampedWithTheLeaseIsCheckedUpToAResolutionLaterNeverSooner() {
        EmbeddedChannel ch = writerIdleChannel(writerIdle());
        step(100);
        ch.writeAndFlush("a line"); // completes within the flush: stamped with the lease, no ticker reading
        idleBetween(1_100, 1_100 + RESOLUTION_MS + LATE, "a write at 100 ms");
        assertEquals(0, monitor.stats().coarseClockLateSpells(), "a worker that keeps up is never late");
    }

    @Test
    void aWorkerThatPublishesLateMakesNoCheckEarly() {
        EmbeddedChannel ch = writerIdleChannel(writerIdle());
        step(50);
        ticker.advance(60 * MS); // the worker is late (less than a stall): its lease (at most 66 ms) runs out
        ch.writeAndFlush("a line"); // at 110 ms, stamped with the outlived lease: earlier than the write
        // Judged as when the worker published again (111 ms, plus the clock's guard of 2 ms): a check on the stamp
        // alone would come at 1,066 ms or before, 44 ms early.
        idleBetween(1_110, 1_111 + 2 + RESOLUTION_MS + LATE, "a write at 110 ms, while the worker was late");
        assertEquals(1, monitor.stats().coarseClockLateSpells(), "the one late publication, counted");
    }

    @Test
    void aWorkerThatStalledMakesNoCheckEarly() {
        EmbeddedChannel ch = writerIdleChannel(writerIdle());
        step(50);
        ticker.advance(200 * MS); // a stall (over the 100 ms threshold): the checks due meanwhile are deferred too
        ch.writeAndFlush("a line"); // at 250 ms, stamped with the outlived lease
        idleBetween(1_250, 1_251 + 2 + RESOLUTION_MS + LATE, "a write at 250 ms, while the worker stalled");
    }

    @Test
    void aWriteWhileBothTheWorkerAndTheLoopAreLateStillSavesTheChannel() {
        EmbeddedChannel ch = writerIdleChannel((HeartbeatHandler) monitor.newHandler(
                HeartbeatConfig.events(false, 0, 40, 0, TimeUnit.MILLISECONDS)));
        step(39);
        ticker.advance(2 * MS);
        monitor.runOnce(); // at 41 ms (a tick after the deadline): idle; the verdict waits for the loop, behind
        ticker.advance(59 * MS); // the worker is late too (not a stall): its lease (at most 56 ms) runs out
        ch.writeAndFlush("a line"); // at 100 ms, stamped with that lease, 44 ms or more before the write
        ch.runPendingTasks(); // the loop checks the verdict again (if the flush did not): the write saves the channel
        assertEquals(List.of(), idleAt, "a write after the verdict, before its action");
        idleBetween(140, 140 + RESOLUTION_MS + 2 + LATE, "the write at 100 ms");
    }

    @Test
    void aLateIntervalStaysKnownWhileTheWorkerPublishesOnTimeAgain() {
        EmbeddedChannel ch = writerIdleChannel(writerIdle());
        step(20);
        ticker.advance(120 * MS);
        ch.writeAndFlush("a line"); // at 140 ms, under the lease the pause outlived
        step(500); // many leases published on time since
        ch.writeAndFlush("a line"); // at 641 ms: a fresh lease, judged as itself (not as the late interval's end)
        idleBetween(1_641, 1_641 + RESOLUTION_MS + LATE, "the latest write, at 641 ms");
    }

    @Test
    void lateIntervalsBeyondTheMostKeptAreMergedNotLost() {
        EmbeddedChannel ch = writerIdleChannel((HeartbeatHandler) monitor.newHandler(
                HeartbeatConfig.events(false, 0, 2, 0, TimeUnit.SECONDS)));
        step(20);
        ticker.advance(30 * MS); // late: the lease (at most 36 ms) runs out
        ch.writeAndFlush("a line"); // at 50 ms, stamped with it
        long written = world.elapsedMillis();
        step(1); // the first late interval: [the lease, 51 ms + 2)
        for (int i = 0; i < 40; i++) { // 40 more, beyond the 32 kept: the oldest two are merged, again and again
            ticker.advance(30 * MS);
            step(1);
        }
        // The write's interval was merged with the next ones, so its end moved later: a later event, never sooner.
        idleBetween(written + 2_000, written + 2_000 + 35 * 31 + RESOLUTION_MS + LATE, "the write at 50 ms");
        assertEquals(41, monitor.stats().coarseClockLateSpells(), "every late publication counted, merged or not");
    }

    @Test
    void theClockWakesNobodyWithNothingToJudgeAndComesBackForTheNextChannel() {
        EmbeddedChannel first = writerIdleChannel(writerIdle());
        step(50);
        first.close();
        step(RESOLUTION_MS); // the clock's entry comes due once more and finds nothing else in the wheel
        assertEquals(0, monitor.stats().timer().entries(), "no entry kept for the clock alone");
        ticker.advance(5_000 * MS); // quiet: nothing publishes
        long opened = world.elapsedMillis();
        EmbeddedChannel ch = writerIdleChannel(writerIdle()); // its request arms the clock again
        ch.writeAndFlush("a line");
        idleBetween(opened + 1_000, opened + 1_000 + RESOLUTION_MS + LATE, "a write as the channel opened");
        assertEquals(0, monitor.stats().coarseClockLateSpells(), "a clock let go while idle is not a late worker");
    }

    @Test
    void everyWriteMovesTheStampAsATickerReadingWould() {
        HeartbeatHandler handler = writerIdle();
        EmbeddedChannel ch = writerIdleChannel(handler);
        step(5);
        long before = handler.lastWriteOpaque();
        for (int i = 0; i < 3; i++) { // in one lease: the lease, then one more each
            ch.writeAndFlush("a line");
            long stamp = handler.lastWriteOpaque();
            assertTrue(stamp - before > 0, "write " + i + " moved the stamp: " + before + " -> " + stamp);
            assertTrue(stamp - ticker.nanoTime() >= 0, "no earlier than the write: " + stamp);
            assertTrue(stamp - ticker.nanoTime() <= RESOLUTION_MS * MS, "at most a resolution later: " + stamp);
            before = stamp;
        }
    }

    @Test
    void theBuilderRefusesResolutionsItCannotKeep() {
        HeartbeatMonitor.Builder b = HeartbeatMonitor.builder().manual();
        assertThrows(NullPointerException.class, () -> b.coarseWriteClock(null));
        assertThrows(IllegalArgumentException.class, () -> b.coarseWriteClock(Duration.ofNanos(999_999)));
        assertThrows(IllegalArgumentException.class, () -> b.coarseWriteClock(Duration.ofMillis(-1)));
        assertThrows(IllegalArgumentException.class, () -> b.coarseWriteClock(Duration.ofMillis(1_001)));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> HeartbeatMonitor.builder().manual().tick(Duration.ofMillis(1))
                        .coarseWriteClock(Duration.ofMillis(4)).build());
        assertTrue(e.getMessage().contains("four ticks"), e.getMessage());
        HeartbeatMonitor.builder().manual().tick(Duration.ofMillis(1)).coarseWriteClock(Duration.ofNanos(4 << 20))
                .build().close();
        HeartbeatMonitor.builder().manual().coarseWriteClock(Duration.ZERO).build().close(); // off
    }
}
