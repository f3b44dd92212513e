/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every operation, at start clocks near the edges of the long range (nanoTime may wrap). */
class TimingWheelTest {

    private static final long TICK = TimingWheel.DEFAULT_TICK_NANOS;

    /** Start clocks: each test also crosses a wrap when it starts near the top of the range. */
    static LongStream clocks() {
        return LongStream.of(Long.MIN_VALUE, Long.MIN_VALUE + 1, -1, 0, Long.MAX_VALUE - TICK / 2,
                Long.MAX_VALUE, 0x5DEECE66DL * 1_000_003L);
    }

    private final List<TimerEntry> fired = new ArrayList<>();
    private final ExpiryHandler<TimerEntry> record = (entry, now) -> {
        assertTrue(entry.deadline() - now <= 0, "fired before its deadline");
        assertFalse(entry.isScheduled(), "handed out while still linked");
        fired.add(entry);
    };

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldFireOnTheTickOfItsDeadline(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, start + 10 * TICK);

        assertEquals(0, wheel.advance(start + 10 * TICK - 1, 100, record));
        assertEquals(1, wheel.size());
        assertEquals(1, wheel.advance(start + 10 * TICK, 100, record));
        assertEquals(List.of(entry), fired);
        assertEquals(0, wheel.size());
        wheel.checkInvariants();
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldFireAtMostOneTickLateForADeadlineInsideATick(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry entry = new TimerEntry();
        long deadline = start + 10 * TICK + TICK / 3;
        wheel.schedule(entry, deadline);

        wheel.advance(deadline - 1, 100, record);
        assertTrue(fired.isEmpty());
        wheel.advance(deadline + TICK - 1, 100, record);
        assertEquals(List.of(entry), fired);
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldScheduleDeadlineInThePast(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        wheel.advance(start + 5 * TICK, 100, record);
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, start);

        assertEquals(0, wheel.nanosToNextWork());
        assertTrue(wheel.hasDue());
        assertEquals(1, wheel.advance(start + 5 * TICK, 100, record), "fires without time moving");
        assertEquals(List.of(entry), fired);
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldMoveAnEntryLaterWithoutFiringAtTheOldDeadline(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, start + 3 * TICK);
        wheel.schedule(entry, start + 500 * TICK);
        assertEquals(1, wheel.size());

        wheel.advance(start + 499 * TICK, 100, record);
        assertTrue(fired.isEmpty());
        wheel.advance(start + 500 * TICK, 100, record);
        assertEquals(List.of(entry), fired);
        wheel.checkInvariants();
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldMoveAnEntryEarlier(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, start + TimeUnit.HOURS.toNanos(1));
        wheel.schedule(entry, start + 7 * TICK);

        wheel.advance(start + 7 * TICK, 100, record);
        assertEquals(List.of(entry), fired);
        assertTrue(wheel.isEmpty());
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldCancel(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry entry = new TimerEntry();
        assertFalse(wheel.cancel(entry), "nothing to cancel yet");
        wheel.schedule(entry, start + 100 * TICK);

        assertTrue(wheel.cancel(entry));
        assertFalse(wheel.cancel(entry));
        assertEquals(0, wheel.size());
        assertEquals(Long.MAX_VALUE, wheel.nanosToNextWork());
        wheel.advance(start + 1000 * TICK, 100, record);
        assertTrue(fired.isEmpty());
        wheel.checkInvariants();
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldCancelADueEntry(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, start - 1);
        assertTrue(wheel.cancel(entry));
        assertFalse(wheel.hasDue());
        assertEquals(0, wheel.advance(start, 100, record));
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldCascadeFromEveryLevelToTheExactTick(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        long[] delays = {63 * TICK, 64 * TICK, 65 * TICK, 4095 * TICK, 4096 * TICK + 1,
            TimeUnit.MINUTES.toNanos(7) + 3, TimeUnit.HOURS.toNanos(5), TimeUnit.DAYS.toNanos(12)};
        for (long delay : delays) {
            fired.clear();
            TimingWheel<TimerEntry> w = new TimingWheel<>(start);
            TimerEntry entry = new TimerEntry();
            w.schedule(entry, start + delay);
            long expiryTick = (delay + TICK - 1) / TICK;
            // Walk the clock in irregular steps up to one nanosecond before the deadline.
            long t = start;
            long step = TICK / 3 + 1;
            while ((t + step) - (start + delay) < 0) {
                t += step;
                w.advance(t, 100, record);
                step = Math.min(step * 2, TimeUnit.MINUTES.toNanos(3));
            }
            w.advance(start + delay - 1, 100, record);
            assertTrue(fired.isEmpty(), "fired early for delay " + delay);
            w.checkInvariants();
            w.advance(start + expiryTick * TICK, 100, record);
            assertEquals(List.of(entry), fired, "late for delay " + delay);
        }
        assertTrue(wheel.isEmpty());
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldFireEntriesFromAllLevelsInOneLongAdvance(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        List<TimerEntry> entries = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            TimerEntry e = new TimerEntry();
            wheel.schedule(e, start + (1L << i));
            entries.add(e);
        }
        wheel.advance(start + (1L << 39), 1000, record);
        assertEquals(40, fired.size());
        assertTrue(fired.containsAll(entries));
        wheel.checkInvariants();
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldReachBeyondTheTopLevel(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(TICK, 1, start); // reaches 64 ticks
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, start + 1000 * TICK);
        for (long t = 1; t < 1000; t += 7) {
            wheel.advance(start + t * TICK, 100, record);
            wheel.checkInvariants();
        }
        wheel.advance(start + 999 * TICK, 100, record);
        assertTrue(fired.isEmpty());
        assertTrue(wheel.nanosToNextWork() <= TICK, "must wake up for it");
        wheel.advance(start + 1000 * TICK, 100, record);
        assertEquals(List.of(entry), fired);
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldHandOutAtMostTheLimitAndKeepTheRest(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        for (int i = 0; i < 10; i++) {
            wheel.schedule(new TimerEntry(), start + TICK);
        }
        assertEquals(3, wheel.advance(start + TICK, 3, record));
        assertEquals(7, wheel.size());
        assertEquals(0, wheel.nanosToNextWork());
        assertEquals(3, wheel.advance(start + TICK, 3, record));
        assertEquals(3, wheel.advance(start + 2 * TICK, 3, record));
        assertEquals(1, wheel.advance(start + 2 * TICK, 3, record));
        assertEquals(10, fired.size());
        assertTrue(wheel.isEmpty());
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldCopeWithExceptionFromHandler(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry bad = new TimerEntry();
        TimerEntry good = new TimerEntry();
        wheel.schedule(bad, start + TICK);
        wheel.schedule(good, start + TICK);
        ExpiryHandler<TimerEntry> throwing = (e, now) -> {
            if (e == bad) {
                throw new IllegalStateException("boom");
            }
            record.onExpired(e, now);
        };
        IllegalStateException thrown = assertThrows(IllegalStateException.class,
                () -> wheel.advance(start + TICK, 100, throwing));
        assertEquals("boom", thrown.getMessage());
        assertFalse(bad.isScheduled());
        wheel.checkInvariants();
        assertEquals(1, wheel.size(), "the other due entry waits");
        assertEquals(1, wheel.advance(start + TICK, 100, throwing));
        assertEquals(List.of(good), fired);
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldLetAHandlerRearmItsEntryAndFireItOnALaterAdvance(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, start + TICK);
        ExpiryHandler<TimerEntry> rearmInThePast = (e, now) -> {
            fired.add(e);
            wheel.schedule(e, now - 1);
        };
        assertEquals(1, wheel.advance(start + TICK, 100, rearmInThePast), "no endless loop in one call");
        assertTrue(entry.isScheduled());
        assertEquals(1, wheel.advance(start + TICK, 100, rearmInThePast));
        assertEquals(2, fired.size());

        ExpiryHandler<TimerEntry> rearmLater = (e, now) -> {
            fired.add(e);
            wheel.schedule(e, now + 100 * TICK);
        };
        wheel.advance(start + TICK, 100, rearmLater);
        wheel.advance(start + 100 * TICK, 100, rearmLater);
        assertEquals(3, fired.size());
        wheel.advance(start + 101 * TICK, 100, rearmLater);
        assertEquals(4, fired.size());
        wheel.checkInvariants();
    }

    /** Found by {@link TinyTickFuzzTest}: a cancelled due entry left room in the call's budget. */
    @ParameterizedTest
    @MethodSource("clocks")
    void shouldNotHandOutAnEntryRearmedIntoThePastAgainInTheSameAdvanceWhenAHandlerCancelsAnotherDueEntry(
            long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry first = new TimerEntry();
        TimerEntry second = new TimerEntry();
        wheel.schedule(first, start + TICK);
        wheel.schedule(second, start + TICK);
        ExpiryHandler<TimerEntry> cancelOtherAndRearmInThePast = (e, now) -> {
            fired.add(e);
            if (fired.size() == 1) {
                wheel.cancel(e == first ? second : first);
                wheel.schedule(e, now - 1);
            }
        };
        assertEquals(1, wheel.advance(start + TICK, 100, cancelOtherAndRearmInThePast),
                "the re-armed entry waits for the next call");
        assertEquals(1, fired.size());
        assertTrue(wheel.hasDue());
        wheel.checkInvariants();
        assertEquals(1, wheel.advance(start + TICK, 100, cancelOtherAndRearmInThePast));
        assertEquals(2, fired.size());
        assertTrue(wheel.isEmpty());
        wheel.checkInvariants();
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldLetAHandlerCancelAnotherDueEntry(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry first = new TimerEntry();
        TimerEntry second = new TimerEntry();
        wheel.schedule(first, start + TICK);
        wheel.schedule(second, start + TICK);
        ExpiryHandler<TimerEntry> cancelOther = (e, now) -> {
            fired.add(e);
            wheel.cancel(e == first ? second : first);
        };
        assertEquals(1, wheel.advance(start + TICK, 100, cancelOther));
        assertEquals(1, fired.size());
        assertTrue(wheel.isEmpty());
        wheel.checkInvariants();
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldSayWhenTheNextWorkIs(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        assertEquals(Long.MAX_VALUE, wheel.nanosToNextWork());
        TimerEntry near = new TimerEntry();
        wheel.schedule(near, start + 10 * TICK);
        assertEquals(10 * TICK, wheel.nanosToNextWork());
        wheel.advance(start + 4 * TICK + 5, 100, record);
        assertEquals(6 * TICK - 5, wheel.nanosToNextWork());

        TimerEntry far = new TimerEntry();
        wheel.cancel(near);
        wheel.schedule(far, start + TimeUnit.HOURS.toNanos(2));
        long untilCascade = wheel.nanosToNextWork();
        assertTrue(untilCascade > 0 && untilCascade <= TimeUnit.HOURS.toNanos(2) - 4 * TICK,
                "must wake no later than the deadline: " + untilCascade);
        // Sleeping exactly as told, again and again, reaches the deadline within a tick.
        long now = wheel.time();
        int wakeups = 0;
        while (fired.isEmpty()) {
            now += Math.max(1, wheel.nanosToNextWork());
            wheel.advance(now, 100, record);
            assertTrue(++wakeups < 20, "too many wake-ups for one entry: " + wakeups);
        }
        assertTrue(now - far.deadline() >= 0 && now - far.deadline() <= TICK);
    }

    @ParameterizedTest
    @MethodSource("clocks")
    void shouldClearEverything(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        TimerEntry a = new TimerEntry();
        TimerEntry b = new TimerEntry();
        wheel.schedule(a, start + TimeUnit.DAYS.toNanos(1));
        wheel.schedule(b, start - 1);
        wheel.clear();
        assertEquals(0, wheel.size());
        assertFalse(a.isScheduled());
        assertFalse(b.isScheduled());
        wheel.checkInvariants();
        wheel.schedule(a, start + TICK);
        wheel.advance(start + TICK, 100, record);
        assertEquals(List.of(a), fired);
    }

    @Test
    void shouldIgnoreAClockThatGoesBackwards() {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(1000 * TICK);
        TimerEntry entry = new TimerEntry();
        wheel.schedule(entry, 1010 * TICK);
        wheel.advance(1005 * TICK, 100, record);
        wheel.advance(900 * TICK, 100, record);
        assertEquals(1005 * TICK, wheel.time());
        wheel.advance(1010 * TICK, 100, record);
        assertEquals(List.of(entry), fired);
    }

    @Test
    void shouldRoundTheTickUpToAPowerOfTwo() {
        assertEquals(1L << 20, new TimingWheel<>(1_000_000, 3, 0).tickNanos());
        assertEquals(1L << 20, new TimingWheel<>(1L << 20, 3, 0).tickNanos());
        assertEquals(1, new TimingWheel<>(1, 3, 0).tickNanos());
        assertEquals(1L << 20, TimingWheel.DEFAULT_TICK_NANOS);
    }

    @Test
    void shouldRejectBadConfigurationNamingTheValue() {
        IllegalArgumentException tick = assertThrows(IllegalArgumentException.class,
                () -> new TimingWheel<>(0, 3, 0));
        assertTrue(tick.getMessage().contains("tickNanos") && tick.getMessage().endsWith(": 0"), tick.getMessage());
        IllegalArgumentException levels = assertThrows(IllegalArgumentException.class,
                () -> new TimingWheel<>(TICK, 8, 0));
        assertTrue(levels.getMessage().contains("levels must be in [1, 7]") && levels.getMessage().endsWith(": 8"),
                levels.getMessage());
        IllegalArgumentException limit = assertThrows(IllegalArgumentException.class,
                () -> new TimingWheel<>(0L).advance(1, 0, record));
        assertEquals("limit must be positive: 0", limit.getMessage());
    }

    @Test
    void shouldScheduleAndMoveWithoutAllocating() {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(0L);
        TimerEntry[] entries = new TimerEntry[1024];
        for (int i = 0; i < entries.length; i++) {
            entries[i] = new TimerEntry();
            wheel.schedule(entries[i], (i + 1) * 1_000_000L);
        }
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        // Warm up so the measured loop runs compiled code.
        ExpiryHandler<TimerEntry> rearm = (e, t) -> wheel.schedule(e, t + 5_000_000L);
        long now = 0;
        for (int round = 0; round < 200; round++) {
            now = churn(wheel, entries, now, rearm);
        }
        long before = threads.getThreadAllocatedBytes(tid);
        for (int round = 0; round < 200; round++) {
            now = churn(wheel, entries, now, rearm);
        }
        long allocated = threads.getThreadAllocatedBytes(tid) - before;
        // The measurement itself may allocate a few bytes; 200 rounds of 1024 moves must not.
        assertTrue(allocated < 1024, "allocated " + allocated + " bytes");
        assertEquals(entries.length, wheel.size());
    }

    private static long churn(TimingWheel<TimerEntry> wheel, TimerEntry[] entries, long now,
            ExpiryHandler<TimerEntry> rearm) {
        now += 1_000_000L;
        for (int i = 0; i < entries.length; i++) {
            wheel.schedule(entries[i], now + (i % 97 + 1) * 3_000_000L);
            if ((i & 7) == 0) {
                wheel.cancel(entries[i]);
                wheel.schedule(entries[i], now + 1_000_000_000L);
            }
        }
        wheel.advance(now, 1 << 20, rearm);
        return now;
    }
}
