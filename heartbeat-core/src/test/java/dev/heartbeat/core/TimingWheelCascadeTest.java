/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.IdentityHashMap;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * A cascade spread over calls ({@link TimingWheel#advance(long, int, int, ExpiryHandler)} with a place
 * limit): a higher-level slot of 10,000 entries is placed again at most the limit per call, the wheel
 * says it has work until all are placed, and every entry still expires once, never early, at clocks
 * near the wrap of {@code nanoTime} too.
 */
class TimingWheelCascadeTest {

    private static final long TICK = TimingWheel.DEFAULT_TICK_NANOS;
    private static final int ENTRIES = 10_000;
    private static final int PLACE_LIMIT = 100;

    @Test
    void aLargeSlotIsPlacedAtMostTheLimitPerCallAndEachEntryExpiresOnce() {
        for (long start : new long[] {0, Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(3), Long.MIN_VALUE, -12345}) {
            cascadeFrom(start);
        }
    }

    private void cascadeFrom(long start) {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(start);
        IdentityHashMap<TimerEntry, Integer> expired = new IdentityHashMap<>();
        // 5 s ahead: beyond level 1's reach (64 x 64 ticks = 4.3 s), so all wait in one level-2 slot.
        long deadline = start + TimeUnit.SECONDS.toNanos(5);
        for (int i = 0; i < ENTRIES; i++) {
            wheel.schedule(new TimerEntry(), deadline + i % 1000); // within one tick: one level-0 slot at the end
        }
        long now = start;
        int calls = 0;
        int cascadingCalls = 0;
        while (expired.size() < ENTRIES) {
            assertTrue(++calls < 100_000, "no progress");
            boolean busy = wheel.hasDue();
            long at = busy ? now : now + Math.max(1, wheel.nanosToNextWork());
            if (!busy) {
                now = at;
            }
            int sizeBefore = wheel.size();
            long clock = now;
            int n = wheel.advance(now, ENTRIES, PLACE_LIMIT, (e, t) -> {
                assertTrue(e.deadline() - clock <= 0, "early");
                expired.merge(e, 1, Integer::sum);
            });
            assertEquals(sizeBefore - n, wheel.size());
            wheel.checkInvariants();
            if (n == 0 && wheel.hasDue()) {
                cascadingCalls++;
            }
        }
        assertTrue(cascadingCalls >= 2 * (ENTRIES / PLACE_LIMIT) - 2,
                "two cascades (level 2, then level 1) of 10,000 at 100 a call: " + cascadingCalls);
        assertTrue(now - deadline >= 0 && now - deadline <= TICK + 1000, "expired in time: " + (now - deadline));
        assertEquals(ENTRIES, expired.size());
        assertTrue(expired.values().stream().allMatch(c -> c == 1), "each once");
        assertFalse(wheel.hasDue());
        assertTrue(wheel.isEmpty());
    }

    @Test
    void aPendingCascadeEntryCanBeCancelledMovedAndCleared() {
        TimingWheel<TimerEntry> wheel = new TimingWheel<>(0);
        TimerEntry[] entries = new TimerEntry[3];
        for (int i = 0; i < entries.length; i++) {
            entries[i] = new TimerEntry();
            wheel.schedule(entries[i], TimeUnit.SECONDS.toNanos(5));
        }
        long now = 0;
        // Move the clock up to where the level-2 slot is reached, placing one entry a call.
        while (!wheel.hasDue()) {
            now += wheel.nanosToNextWork();
            wheel.advance(now, 10, 1, (e, t) -> { throw new AssertionError("nothing is due yet"); });
        }
        assertTrue(wheel.hasDue(), "two entries still wait to be placed");
        assertTrue(wheel.cancel(entries[2]) || wheel.cancel(entries[1]));
        wheel.schedule(entries[0], now + TimeUnit.HOURS.toNanos(1));
        wheel.checkInvariants();
        int[] seen = new int[1];
        wheel.forEach(e -> seen[0]++);
        assertEquals(2, seen[0]);
        assertEquals(2, wheel.size());
        wheel.clear();
        assertTrue(wheel.isEmpty());
        assertFalse(wheel.hasDue());
        assertEquals("placeLimit must be positive: 0", assertThrows(IllegalArgumentException.class,
                () -> wheel.advance(0, 1, 0, (e, t) -> { })).getMessage());
    }
}
