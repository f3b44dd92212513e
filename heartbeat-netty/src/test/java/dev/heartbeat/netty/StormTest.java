/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Storm control in virtual time: 1,000 channels opened together and silent, all due to close at once;
 * with the action budget their closes come at its rate, oldest first, none early; without it, in one
 * burst.
 */
class StormTest {

    private static final int CHANNELS = 1_000;

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(2));
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private HeartbeatMonitor monitor;

    @AfterEach
    void tearDown() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
        monitor.close();
    }

    /** Closes per 1 s window, from 0 to {@code seconds}, for channels opened at 0 and idle after 1 s. */
    private int[] closesPerSecond(int budget, int seconds) {
        return closesPerSecond(budget, seconds, Duration.ZERO);
    }

    /** The same with the monitor's {@code maxCoalescing}. */
    private int[] closesPerSecond(int budget, int seconds, Duration maxCoalescing) {
        monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
                .maxCoalescing(maxCoalescing).actionBudget(budget).build();
        HeartbeatConfig cfg = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1)).build();
        for (int i = 0; i < CHANNELS; i++) {
            channels.add(new EmbeddedChannel(monitor.newHandler(cfg)));
        }
        monitor.runOnce();
        int[] perSecond = new int[seconds];
        int closed = 0;
        for (int ms = 10; ms <= seconds * 1000; ms += 10) {
            VirtualTime.advance(ticker, monitor, 10, channels);
            int now = 0;
            for (EmbeddedChannel ch : channels) {
                now += ch.isOpen() ? 0 : 1;
            }
            if (ms < 1000) {
                assertEquals(0, now, "none before its timeout");
            }
            perSecond[(ms - 1) / 1000] += now - closed;
            closed = now;
        }
        assertEquals(CHANNELS, closed, "every channel closed: " + Arrays.toString(perSecond));
        System.out.println("StormTest: budget " + budget + "/s: closes per second " + Arrays.toString(perSecond)
                + ", deferred " + monitor.deferredActions() + ", worst deferral " + monitor.worstDeferral());
        return perSecond;
    }

    @Test
    void withABudgetTheClosesComeAtItsRateOldestFirst() {
        int[] perSecond = closesPerSecond(200, 7);
        for (int s = 1; s < perSecond.length; s++) {
            assertTrue(perSecond[s] <= 202, "at most the budget (and its 2-action bucket) a second: "
                    + Arrays.toString(perSecond));
        }
        assertEquals(CHANNELS, monitor.stats().closed(CloseReason.READER_IDLE));
        assertEquals(CHANNELS - 2, monitor.deferredActions(), "all but the bucket's 2 waited");
        long worst = monitor.worstDeferral().toMillis();
        assertTrue(worst >= 4_900 && worst <= 5_100, "the last waited 998 / 200 s: " + worst + " ms");
        long busiest = monitor.busiestBudgetSecond(); // whole seconds of the ticker, which wraps in this test
        assertTrue(busiest >= 195 && busiest <= 202, "the busiest second, as the server counts: " + busiest);
    }

    /**
     * The pacer's wake-ups must not be coalesced: its bucket holds a hundredth of a second's rate, so a
     * pacer woken on the default 16.8 ms grid (the largest window) lost the tokens earned beyond 10 ms and
     * handed over about 0.6 x the budget (found by the load test's storm: 3,000 closes a second at 5,000/s).
     */
    @Test
    void withTheDefaultCoalescingTheClosesStillComeAtTheBudgetsRate() {
        int[] perSecond = closesPerSecond(200, 7, Duration.ofNanos(1L << 24));
        for (int s = 2; s <= 4; s++) {
            assertTrue(perSecond[s] >= 190 && perSecond[s] <= 202, "the budget's rate: " + Arrays.toString(perSecond));
        }
    }

    @Test
    void withoutABudgetTheyComeInOneBurst() {
        int[] perSecond = closesPerSecond(0, 3);
        assertEquals(CHANNELS, perSecond[1], Arrays.toString(perSecond));
        assertEquals(0, monitor.deferredActions());
        assertEquals(0, monitor.busiestBudgetSecond(), "no budget: nothing counted");
    }

    @Test
    void badBudgetsAreRefused() {
        monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        assertThrows(IllegalArgumentException.class, () -> HeartbeatMonitor.builder().actionBudget(-1));
        assertThrows(IllegalArgumentException.class, () -> HeartbeatMonitor.builder().actionBudget(100_000_001));
    }
}
