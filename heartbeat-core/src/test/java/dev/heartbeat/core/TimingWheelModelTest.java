/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * Random schedule / move / cancel / advance sequences against a plain map of deadlines. After every
 * step: nothing fired early, nothing was lost or fired twice, nothing was more than one tick late,
 * and (regularly) the wheel's structure is well formed. Handlers re-enter the wheel.
 *
 * <p>Run a single seed: {@code ./mvnw -pl heartbeat-core test -Dtest=TimingWheelModelTest -Dheartbeat.seed=N}.
 */
class TimingWheelModelTest {

    private static final int OPERATIONS = Integer.getInteger("heartbeat.modelOperations", 1_200_000);

    @Test
    void randomOperationsAgreeWithTheModel() {
        long seed = Long.getLong("heartbeat.seed", System.nanoTime());
        SplittableRandom seeds = new SplittableRandom(seed);
        // Start clocks: the edges of the long range (crossing the wrap) and a random one.
        long[] starts = {Long.MAX_VALUE - 3_000_000_000L, Long.MIN_VALUE, -5_000_000_000L, 0, seeds.nextLong()};
        int perRun = OPERATIONS / starts.length;
        for (long start : starts) {
            long runSeed = seeds.nextLong();
            try {
                new Run(runSeed, start).execute(perRun);
            } catch (AssertionError e) {
                fail("model test failed: seed " + seed + " (run seed " + runSeed + ", start " + start + "): "
                        + e.getMessage(), e);
            }
        }
    }

    static final class Entry extends TimerEntry {
        final int id;

        Entry(int id) {
            this.id = id;
        }

        @Override
        public String toString() {
            return "entry " + id;
        }
    }

    private static final class Run {
        final SplittableRandom random;
        final TimingWheel<Entry> wheel;
        final long tick;
        final Entry[] entries;
        /** The model: scheduled entries and their deadlines. */
        final Map<Entry, Long> scheduled = new HashMap<>();
        long now;
        int step;

        Run(long seed, long start) {
            this.random = new SplittableRandom(seed);
            int levels = 1 + random.nextInt(5);
            long tickNanos = 1L << (10 + random.nextInt(14));
            this.wheel = new TimingWheel<>(tickNanos, levels, start);
            this.tick = wheel.tickNanos();
            this.entries = new Entry[64 + random.nextInt(256)];
            for (int i = 0; i < entries.length; i++) {
                entries[i] = new Entry(i);
            }
            this.now = start;
        }

        void execute(int operations) {
            for (step = 0; step < operations; step++) {
                int op = random.nextInt(100);
                if (op < 40) {
                    schedule(entries[random.nextInt(entries.length)]);
                } else if (op < 55) {
                    Entry e = entries[random.nextInt(entries.length)];
                    boolean expected = scheduled.remove(e) != null;
                    if (wheel.cancel(e) != expected) {
                        throw new AssertionError("cancel of " + e + " returned " + !expected + " at step " + step);
                    }
                } else {
                    advance();
                }
                if (wheel.size() != scheduled.size()) {
                    throw new AssertionError("size " + wheel.size() + " but model has " + scheduled.size()
                            + " at step " + step);
                }
                if (step % 512 == 0) {
                    wheel.checkInvariants();
                }
            }
            // Drain: everything left must fire, each within a tick of its deadline.
            while (!scheduled.isEmpty()) {
                now += Math.max(1, Math.min(wheel.nanosToNextWork(), 1L << 40));
                advanceTo(now, Integer.MAX_VALUE, false);
            }
            wheel.checkInvariants();
        }

        private long randomDelay() {
            switch (random.nextInt(6)) {
                case 0: return -random.nextLong(3 * tick);               // already due
                case 1: return random.nextLong(4 * tick);                // within a few ticks
                case 2: return random.nextLong(64 * tick);               // level 0
                case 3: return random.nextLong(4096 * tick);             // level 1
                case 4: return random.nextLong(1L << 36);                // up to ~70 s
                default: return random.nextLong(262_144 * tick * 4);     // higher levels, beyond the top
            }
        }

        private void schedule(Entry e) {
            long deadline = now + randomDelay();
            wheel.schedule(e, deadline);
            scheduled.put(e, deadline);
        }

        private void advance() {
            long jump;
            switch (random.nextInt(5)) {
                case 0: jump = 0; break;
                case 1: jump = random.nextLong(tick); break;
                case 2: jump = random.nextLong(8 * tick); break;
                case 3: jump = random.nextLong(200 * tick); break;
                default: jump = random.nextLong(20_000 * tick); break;
            }
            now += jump;
            boolean smallLimit = random.nextInt(8) == 0;
            advanceTo(now, smallLimit ? 1 + random.nextInt(4) : Integer.MAX_VALUE, true);
        }

        private void advanceTo(long time, int limit, boolean reenter) {
            int[] count = {0};
            int handedOut = wheel.advance(time, limit, (e, t) -> {
                count[0]++;
                Long deadline = scheduled.remove(e);
                if (deadline == null) {
                    throw new AssertionError(e + " fired but was not scheduled, at step " + step);
                }
                if (deadline != e.deadline()) {
                    throw new AssertionError(e + " fired with deadline " + e.deadline() + ", model says " + deadline);
                }
                if (deadline - t > 0) {
                    throw new AssertionError(e + " fired " + (deadline - t) + " ns early at step " + step);
                }
                if (e.isScheduled()) {
                    throw new AssertionError(e + " handed out while linked");
                }
                if (reenter) {
                    int r = random.nextInt(10);
                    if (r == 0) {
                        schedule(e); // re-arm itself, possibly into the past
                    } else if (r == 1) {
                        Entry other = entries[random.nextInt(entries.length)];
                        scheduled.remove(other);
                        wheel.cancel(other);
                    }
                }
            });
            if (handedOut != count[0]) {
                throw new AssertionError("advance returned " + handedOut + " but handed out " + count[0]);
            }
            if (handedOut > limit) {
                throw new AssertionError("advance handed out " + handedOut + " over the limit " + limit);
            }
            if (limit == Integer.MAX_VALUE) {
                // Nothing lost and at most one tick late: every entry a full tick past its deadline has
                // fired, unless a handler put it back just now (it is then due and waits for the next call).
                for (Map.Entry<Entry, Long> m : scheduled.entrySet()) {
                    long late = time - m.getValue();
                    if (late >= tick && !wheel.hasDue()) {
                        throw new AssertionError(m.getKey() + " is " + late + " ns past its deadline at step "
                                + step + " (tick " + tick + ")");
                    }
                }
            }
        }
    }
}
