/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Plan;
import dev.heartbeat.netty.engine.CheckGrid;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.testing.LeakDetection;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Timer slack in virtual time: with the default coalescing, checks of channels that became idle at
 * scattered moments are handed out together at the points of a shared grid, so the worker has work
 * at far fewer moments; every event still comes after its deadline (never early) and at most one
 * tick plus the window later.
 */
@ExtendWith(LeakDetection.class)
class CoalescingTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(20)); // wraps
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
    }

    /** Per channel: when it was last read, and when its first reader idle event arrived. */
    private record Outcome(long lastReadMs, long eventMs) {
    }

    /**
     * 500 channels, reader idle 10 s, last read at random ms within 2 s; the worker runs every ms.
     *
     * @return each channel's outcome; {@code busyMs} gets the number of ms at which the worker had work, and
     *     {@code busyAt} (if not null) the ticker's time at each of them
     */
    private List<Outcome> run(HeartbeatMonitor monitor, long[] busyMs, List<Long> busyAt) {
        SplittableRandom random = new SplittableRandom(42);
        HeartbeatConfig cfg = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(10)).build();
        List<HeartbeatHandlerTest.Recorder> recorders = new ArrayList<>();
        long[] lastRead = new long[500];
        long[] eventAt = new long[500];
        for (int i = 0; i < 500; i++) {
            HeartbeatHandlerTest.Recorder r = new HeartbeatHandlerTest.Recorder();
            recorders.add(r);
            channels.add(new EmbeddedChannel(monitor.newHandler(cfg), r));
            lastRead[i] = random.nextInt(2_000);
            eventAt[i] = -1;
        }
        for (long ms = 0; ms < 14_000; ms++) {
            ticker.advance(MS);
            int work = monitor.runOnce();
            for (int i = 0; i < channels.size(); i++) {
                EmbeddedChannel ch = channels.get(i);
                if (ms == lastRead[i]) {
                    ch.writeInbound("last words");
                    ch.readInbound();
                }
                ch.runPendingTasks();
                if (eventAt[i] < 0 && !recorders.get(i).events.isEmpty()) {
                    assertEquals(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT, recorders.get(i).events.get(0));
                    eventAt[i] = ms;
                }
            }
            if (work > 0 && ms > 2_000) {
                busyMs[0]++;
                if (busyAt != null) {
                    busyAt.add(ticker.nanoTime());
                }
            }
        }
        List<Outcome> outcomes = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            outcomes.add(new Outcome(lastRead[i], eventAt[i]));
        }
        return outcomes;
    }

    @Test
    void checksShareWakeUpsAndStayWithinTheWindow() {
        checksShareWakeUpsAndStayWithinTheWindow(HeartbeatMonitor.builder().manual().ticker(ticker).build());
    }

    /** As above, on a grid whose points are not multiples of the window (another monitor's, another process's). */
    @Test
    void checksShareWakeUpsAndStayWithinTheWindowOnAShiftedGrid() {
        checksShareWakeUpsAndStayWithinTheWindow(HeartbeatMonitor.builder().manual().ticker(ticker)
                .gridPhase(0x2A5_5A5A_1234L).build());
    }

    private void checksShareWakeUpsAndStayWithinTheWindow(HeartbeatMonitor monitor) {
        long window = Long.highestOneBit(TimeUnit.SECONDS.toNanos(10) >>> Plan.COALESCING_SHIFT);
        assertEquals(1L << 27, window, "10 s / 64, rounded down to a power of two: 134 ms, then capped");
        long capped = Math.min(window, HeartbeatMonitor.DEFAULT_MAX_COALESCING_NANOS);
        long bound = (capped + monitor.engine.worker.tickNanos() + MS - 1) / MS + 1; // + the 1 ms step
        long[] busy = {0};
        List<Outcome> outcomes = run(monitor, busy, null);
        long worst = 0;
        for (Outcome o : outcomes) {
            long late = o.eventMs - (o.lastReadMs + 10_000);
            assertTrue(late >= 0, "early by " + -late + " ms");
            worst = Math.max(worst, late);
        }
        assertTrue(worst <= bound, "late by " + worst + " ms, bound " + bound);
        monitor.close();

        ticker.advance(TimeUnit.HOURS.toNanos(1));
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
        channels.clear();
        HeartbeatMonitor exact = HeartbeatMonitor.builder().manual().ticker(ticker)
                .maxCoalescing(Duration.ZERO).build();
        long[] busyExact = {0};
        run(exact, busyExact, null);
        exact.close();
        // 500 deadlines scattered over 2 s: several hundred distinct ms without slack; with the default
        // 16.8 ms grid at most 2 s / 16.8 ms + 1 = 120 moments.
        assertTrue(busy[0] <= 2_000 / (capped / MS) + 2, "moments with work, coalesced: " + busy[0]);
        assertTrue(busyExact[0] > 3 * busy[0], "without slack: " + busyExact[0] + ", with: " + busy[0]);
    }

    /**
     * Each monitor has a grid of its own: two monitors (two processes on one host, say) whose channels fell
     * silent at the same moments run their checks at points half a window apart, not at the same instants;
     * a monitor's grid points are its phase plus multiples of the window, not multiples of the window (which
     * a clock shared by all processes, as {@code System.nanoTime} is on Linux, would make everyone's).
     */
    @Test
    void eachMonitorWorksAtThePointsOfItsOwnGrid() {
        long window = HeartbeatMonitor.DEFAULT_MAX_COALESCING_NANOS;
        long tick = 0;
        List<List<Long>> busyAt = new ArrayList<>();
        for (long phase : new long[] {0, window / 2}) {
            HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).gridPhase(phase).build();
            tick = monitor.engine.worker.tickNanos();
            List<Long> at = new ArrayList<>();
            run(monitor, new long[1], at);
            monitor.close();
            channels.forEach(EmbeddedChannel::finishAndReleaseAll);
            channels.clear();
            for (long t : at) {
                long sincePoint = (t - phase) & (window - 1);
                assertTrue(sincePoint <= tick + MS, "work " + sincePoint / 1_000 + " us after a point of phase "
                        + phase + "'s grid, more than a tick and the 1 ms step");
            }
            busyAt.add(at);
            ticker.advance(TimeUnit.HOURS.toNanos(1) + window / 4); // the next run's reads fall elsewhere on the grid
        }
        assertTrue(!busyAt.get(0).isEmpty() && !busyAt.get(1).isEmpty(), "both monitors had work");
    }

    /**
     * Where checks are dense a point takes at most a burst ({@link CheckGrid#BURST}), and later checks go to the
     * points of a finer grid: 2,000 channels opened over 200 ms (about 170 first checks a point of 16.8 ms) get
     * their reader idle events in bursts of at most a point's share and a tick's worth of deadlines, never early
     * and within the coarse grid's bound; the worker still works only where a burst's worth of checks is due.
     */
    @Test
    void aFullPointSendsLaterChecksToAFinerGrid() {
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        HeartbeatConfig cfg = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(10)).build();
        long capped = HeartbeatMonitor.DEFAULT_MAX_COALESCING_NANOS;
        long tick = monitor.engine.worker.tickNanos();
        int perMs = 10;
        int n = 200 * perMs;
        List<HeartbeatHandlerTest.Recorder> recorders = new ArrayList<>();
        long[] openedMs = new long[n];
        long[] eventMs = new long[n];
        int maxPerMoment = 0;
        int momentsWithEvents = 0;
        for (long ms = 0; ms < 10_300; ms++) {
            if (ms < 200) {
                for (int k = 0; k < perMs; k++) {
                    HeartbeatHandlerTest.Recorder r = new HeartbeatHandlerTest.Recorder();
                    openedMs[recorders.size()] = ms;
                    eventMs[recorders.size()] = -1;
                    recorders.add(r);
                    channels.add(new EmbeddedChannel(monitor.newHandler(cfg), r));
                }
            }
            ticker.advance(MS);
            if (monitor.runOnce() == 0 || ms < 9_000) {
                continue;
            }
            int events = 0;
            for (int i = 0; i < n; i++) {
                channels.get(i).runPendingTasks();
                if (eventMs[i] < 0 && !recorders.get(i).events.isEmpty()) {
                    eventMs[i] = ms;
                    events++;
                }
            }
            maxPerMoment = Math.max(maxPerMoment, events);
            momentsWithEvents += events > 0 ? 1 : 0;
        }
        monitor.close();
        long bound = (capped + tick + MS - 1) / MS + 1; // + the 1 ms step
        for (int i = 0; i < n; i++) {
            long late = eventMs[i] - (openedMs[i] + 10_000);
            assertTrue(eventMs[i] >= 0, "channel " + i + " got its event");
            assertTrue(late >= 0, "channel " + i + " early by " + -late + " ms");
            assertTrue(late <= bound, "channel " + i + " late by " + late + " ms, bound " + bound);
        }
        long perTick = perMs * (tick / MS + 1); // deadlines fall on whole ms: a tick spans two of them at most
        assertTrue(maxPerMoment <= CheckGrid.BURST + perTick, "a burst of " + maxPerMoment + " events, more than "
                + CheckGrid.BURST + " and a tick's worth of deadlines (" + perTick + ")");
        assertTrue(momentsWithEvents <= 2 * n / CheckGrid.BURST + 200 / (capped / MS) + 4 * 2,
                "work at " + momentsWithEvents + " moments for " + n + " checks: not only where a burst is due");
    }

    /** A monitor that is not manual draws its grid's phase: two of them share a grid once in 2^24. */
    @Test
    void monitorsDrawTheirGridsPhase() {
        long window = HeartbeatMonitor.DEFAULT_MAX_COALESCING_NANOS;
        HeartbeatMonitor a = HeartbeatMonitor.builder().build();
        HeartbeatMonitor b = HeartbeatMonitor.builder().build();
        try {
            assertTrue(((a.engine.gridPhase() - b.engine.gridPhase()) & (window - 1)) != 0,
                    "two monitors on one grid: " + a.engine.gridPhase() + ", " + b.engine.gridPhase());
        } finally {
            a.close();
            b.close();
        }
        try (HeartbeatMonitor manual = HeartbeatMonitor.builder().manual().build()) {
            assertEquals(0, manual.engine.gridPhase(),
                    "a manual monitor's grid: multiples of the window on its ticker, unless a test sets it");
        }
    }

    /**
     * A ping-policy close passes three checks (ping, re-ping after a miss, close): only the first
     * pays the full window, the answer deadlines a quarter of it, so the close comes at most one
     * window, two quarter windows and three ticks (plus the 1 ms steps) after the earliest correct
     * moment, never before it.
     */
    @Test
    void aPingChainPaysTheFullWindowOnce() {
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        HeartbeatConfig cfg = HeartbeatConfig.ping(c -> "PING").interval(Duration.ofSeconds(40))
                .timeout(Duration.ofSeconds(5)).maxMissedPings(2).build();
        long window = monitor.engine.coalescingWindow(cfg.plan);
        assertEquals(HeartbeatMonitor.DEFAULT_MAX_COALESCING_NANOS, window, "40 s / 64 capped");
        SplittableRandom random = new SplittableRandom(7);
        List<EmbeddedChannel> silent = new ArrayList<>();
        long[] lastReadMs = new long[100];
        for (int i = 0; i < 100; i++) {
            EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(cfg));
            channels.add(ch);
            silent.add(ch);
            lastReadMs[i] = random.nextInt(1_000);
        }
        long[] closedAtMs = new long[100];
        for (long ms = 0; ms < 52_000; ms++) {
            ticker.advance(MS);
            monitor.runOnce();
            for (int i = 0; i < silent.size(); i++) {
                EmbeddedChannel ch = silent.get(i);
                if (ms == lastReadMs[i]) {
                    ch.writeInbound("last words");
                    ch.readInbound();
                }
                ch.runPendingTasks();
                while (ch.readOutbound() != null) {
                    // pings, unanswered
                }
                if (closedAtMs[i] == 0 && !ch.isOpen()) {
                    closedAtMs[i] = ms;
                }
            }
        }
        long tickMs = (monitor.engine.worker.tickNanos() + MS - 1) / MS;
        long quarter = window >>> HeartbeatHandler.ANSWER_WINDOW_SHIFT;
        long bound = (window + 2 * quarter) / MS + 3 * (tickMs + 1) + 1;
        long worst = 0;
        for (int i = 0; i < 100; i++) {
            long late = closedAtMs[i] - (lastReadMs[i] + 40_000 + 2 * 5_000);
            assertTrue(closedAtMs[i] > 0, "channel " + i + " closed");
            assertTrue(late >= 0, "closed " + -late + " ms early");
            worst = Math.max(worst, late);
        }
        assertTrue(worst <= bound, "a ping-chain close came " + worst + " ms late; bound " + bound + " ms");
        monitor.close();
    }
}
