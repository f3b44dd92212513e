/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * A randomized fuzz of the wheel and the worker with tiny ticks (1, 2, 4 or 8 ns) and 1 to 3 levels,
 * so that a short run passes over thousands of slots, cascades, top-level rotations and the wrap of
 * the clock. Each run starts near {@link Long#MIN_VALUE}, just below zero, just below
 * {@link Long#MAX_VALUE} (the run crosses the wrap) or at a random clock.
 *
 * <p>{@link #wheelKeepsItsPromisesWhenSleptExactlyAsTold}: random schedule / move / cancel against a
 * plain model of deadlines, deadlines in the past and far beyond the top level's span; time advances
 * by exactly {@link TimingWheel#nanosToNextWork()} most of the time (the sleep a worker takes), by
 * less, or by random jumps of up to thousands of wheel spans; handlers re-enter the wheel. After every
 * step: the wheel's invariants, its size against the model, and every entry whose expiry tick (its
 * deadline rounded up to a tick boundary) has passed sits in the due list. After every advance:
 * nothing fired early, twice or unscheduled, and with no limit only entries a handler put back are
 * left due (so nothing is more than one tick late). At each exact sleep: the sleep ends no later than
 * the earliest expiry tick, is 0 exactly when something is due, and the wake-up finds work (an
 * expiry, or a slot whose entries the wheel re-places): no wake-up for nothing.
 *
 * <p>{@link #workerFiresEachArmingOnceAndNeverEarly}: a {@link TimerWorker} driven with
 * {@link TimerWorker#doWork()} on a {@link ManualTicker}, with random schedule / cancel from the test
 * thread, handlers that re-arm, cancel or schedule (themselves or others) and sometimes throw. The
 * worker does not expose its wheel's sleep, so time moves to the model's earliest expiry tick (where a
 * timely worker wakes), short of it, or by random jumps; then it cycles until it has no work. Checks:
 * never early, exactly once per arming, never after a successful cancel, {@code cancel} returns
 * whether the entry was armed, nothing left past its expiry tick once the worker has nothing more to
 * do, and the stats (entries, expired, re-armed, failures) agree with the model.
 *
 * <p>The seed is printed; replay one with
 * {@code ./mvnw -B -q -pl heartbeat-core test -Dtest=TinyTickFuzzTest -Dheartbeat.seed=N}. The number
 * of steps per run is {@code -Dheartbeat.fuzzSteps=N}.
 */
class TinyTickFuzzTest {

    private static final int STEPS = Integer.getInteger("heartbeat.fuzzSteps", 100_000);
    private static final int RUNS = 12;

    @Test
    void wheelKeepsItsPromisesWhenSleptExactlyAsTold() {
        long seed = seed("wheelKeepsItsPromisesWhenSleptExactlyAsTold");
        SplittableRandom seeds = new SplittableRandom(seed);
        long[] totals = new long[4];
        int wraps = 0;
        for (int run = 0; run < RUNS; run++) {
            long runSeed = seeds.nextLong();
            WheelRun r = new WheelRun(runSeed, startClock(run, seeds));
            try {
                r.execute(STEPS);
            } catch (AssertionError e) {
                fail("wheel fuzz failed: seed " + seed + ", run " + run + " " + r + ": " + e.getMessage()
                        + "\n" + r.trail, e);
            }
            totals[0] += r.exactSleeps;
            totals[1] += r.wakeupsWithoutExpiry;
            totals[2] += r.handedOutTotal;
            totals[3] += r.reentries;
            wraps += r.origin > 0 && r.now < 0 ? 1 : 0;
        }
        System.out.println("  " + RUNS + " runs of " + STEPS + " steps: " + totals[0] + " exact sleeps ("
                + totals[1] + " of them woke to re-place, not expire), " + totals[2] + " expiries, " + totals[3]
                + " re-entrant calls; " + wraps + " runs crossed Long.MAX_VALUE");
    }

    @Test
    void workerFiresEachArmingOnceAndNeverEarly() {
        long seed = seed("workerFiresEachArmingOnceAndNeverEarly");
        SplittableRandom seeds = new SplittableRandom(seed);
        long[] totals = new long[4];
        int wraps = 0;
        for (int run = 0; run < RUNS; run++) {
            long runSeed = seeds.nextLong();
            WorkerRun r = new WorkerRun(runSeed, startClock(run, seeds));
            try {
                r.execute(STEPS / 2);
            } catch (AssertionError e) {
                fail("worker fuzz failed: seed " + seed + ", run " + run + " " + r + ": " + e.getMessage()
                        + "\n" + r.trail, e);
            }
            TimerStats stats = r.worker.stats();
            totals[0] += stats.cycles();
            totals[1] += stats.expired();
            totals[2] += stats.rearmed();
            totals[3] += r.successfulCancels;
            wraps += r.origin > 0 && r.now() < 0 ? 1 : 0;
        }
        System.out.println("  " + RUNS + " runs of " + STEPS / 2 + " steps: " + totals[0] + " cycles, " + totals[1]
                + " expiries, " + totals[2] + " re-arms, " + totals[3] + " successful cancels; " + wraps
                + " runs crossed Long.MAX_VALUE");
    }

    private static long seed(String test) {
        long seed = Long.getLong("heartbeat.seed", System.nanoTime());
        System.out.println("TinyTickFuzzTest." + test + ": seed " + seed + " (replay with -Dheartbeat.seed="
                + seed + ")");
        return seed;
    }

    /** Near Long.MIN_VALUE, just below 0, just below Long.MAX_VALUE (crossing the wrap), or random. */
    private static long startClock(int run, SplittableRandom random) {
        switch (run % 4) {
            case 0: return Long.MIN_VALUE + random.nextLong(1 << 12);
            case 1: return -1 - random.nextLong(1 << 16);
            case 2: return Long.MAX_VALUE - random.nextLong(1 << 16);
            default: return random.nextLong();
        }
    }

    /** The first tick boundary at or after {@code deadline}: when an entry must have expired. */
    static long expiryTime(long origin, long tick, long deadline) {
        long fromOrigin = deadline - origin;
        return origin + Math.floorDiv(fromOrigin + tick - 1, tick) * tick;
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

    /** The last operations of a run, for the failure message. */
    static final class Trail {
        private final String[] lines = new String[48];
        private int next;

        void add(String line) {
            lines[next++ % lines.length] = line;
        }

        @Override
        public String toString() {
            StringBuilder sb = new StringBuilder("last operations (oldest first):\n");
            for (int i = Math.max(0, next - lines.length); i < next; i++) {
                sb.append("  ").append(lines[i % lines.length]).append('\n');
            }
            return sb.toString();
        }
    }

    /** Random deadlines relative to {@code now}: past, near, inside each level, beyond the top level. */
    static long randomDeadline(SplittableRandom random, long now, long origin, long tick, long span) {
        switch (random.nextInt(16)) {
            case 0: return now - random.nextLong(4 * tick);                       // due now or just past
            case 1: return now - 1 - random.nextLong(span * 4);                   // far in the past
            case 2: case 3: case 4: return now + random.nextLong(1, 8 * tick);    // a few ticks
            case 5: case 6: return now + random.nextLong(1, 64 * tick);           // level 0
            case 7: case 8: case 9: return now + random.nextLong(1, span + 1);    // inside the wheel
            case 10: case 11: return now + span + random.nextLong(span * 8);      // beyond the top level
            case 12: return now + span * (1 + random.nextLong(1000));             // many spans ahead
            case 13: return now + (1L << 32) + random.nextLong(1L << 40);         // far future
            default: { // exactly on a tick boundary, or one either side of it
                long boundary = expiryTime(origin, tick, now + random.nextLong(1, 4 * span));
                return boundary + random.nextInt(3) - 1;
            }
        }
    }

    /** Part (a): the bare wheel against a model. */
    private static final class WheelRun {
        final SplittableRandom random;
        final long origin;
        final long tick;
        final int levels;
        final long span;
        final TimingWheel<Entry> wheel;
        final Entry[] entries;
        /** The model: which entries are scheduled, and at which deadline. */
        final boolean[] scheduled;
        final long[] deadlines;
        int count;
        /** Per entry, the serial of the advance that last handed it out or that a handler scheduled it in. */
        final long[] firedIn;
        final long[] putBackIn;
        final int[] locations;
        long advanceSerial;
        int handedOut;
        long exactSleeps;
        long wakeupsWithoutExpiry;
        long handedOutTotal;
        long reentries;
        final Trail trail = new Trail();
        long now;
        int step;

        WheelRun(long seed, long start) {
            this.random = new SplittableRandom(seed);
            this.origin = start;
            this.tick = 1L << random.nextInt(4);
            this.levels = 1 + random.nextInt(3);
            this.span = tick << (TimingWheel.SLOT_BITS * levels);
            this.wheel = new TimingWheel<>(tick, levels, start);
            this.entries = new Entry[8 + random.nextInt(250)];
            for (int i = 0; i < entries.length; i++) {
                entries[i] = new Entry(i);
            }
            this.scheduled = new boolean[entries.length];
            this.deadlines = new long[entries.length];
            this.firedIn = new long[entries.length];
            this.putBackIn = new long[entries.length];
            this.locations = new int[entries.length];
            this.now = start;
            if (wheel.tickNanos() != tick || wheel.levels() != levels) {
                throw new AssertionError("wheel built with tick " + wheel.tickNanos() + ", levels " + wheel.levels());
            }
        }

        void execute(int steps) {
            for (step = 0; step < steps; step++) {
                int op = random.nextInt(100);
                if (op < 25) {
                    schedule(entries[random.nextInt(entries.length)], "schedule");
                } else if (op < 33) {
                    Entry e = someScheduled();
                    if (e != null) {
                        schedule(e, "move");
                    }
                } else if (op < 43) {
                    cancel(entries[random.nextInt(entries.length)]);
                } else {
                    moveTime();
                }
                checkAfterStep();
            }
            drain();
        }

        private Entry someScheduled() {
            if (count == 0) {
                return null;
            }
            for (int i = random.nextInt(entries.length); ; i = (i + 1) % entries.length) {
                if (scheduled[i]) {
                    return entries[i];
                }
            }
        }

        private void schedule(Entry e, String why) {
            long deadline = randomDeadline(random, now, origin, tick, span);
            trail.add("step " + step + ": " + why + " " + e + " at now" + signed(deadline - now));
            wheel.schedule(e, deadline);
            if (!scheduled[e.id]) {
                scheduled[e.id] = true;
                count++;
            }
            deadlines[e.id] = deadline;
        }

        private void cancel(Entry e) {
            trail.add("step " + step + ": cancel " + e + (scheduled[e.id] ? "" : " (not scheduled)"));
            boolean cancelled = wheel.cancel(e);
            if (cancelled != scheduled[e.id]) {
                throw new AssertionError("cancel of " + e + " returned " + cancelled + ", model says "
                        + scheduled[e.id]);
            }
            if (scheduled[e.id]) {
                scheduled[e.id] = false;
                count--;
            }
        }

        private void moveTime() {
            long toNext = wheel.nanosToNextWork();
            int how = random.nextInt(100);
            int limit = random.nextInt(8) == 0 ? 1 + random.nextInt(4) : Integer.MAX_VALUE;
            if (how < 65 && toNext != Long.MAX_VALUE) {
                sleepExactly(toNext, limit);
            } else if (how < 80 && toNext != Long.MAX_VALUE && toNext > 0) {
                long less = random.nextLong(toNext);
                trail.add("step " + step + ": advance by " + less + " of " + toNext + ", limit " + limit);
                advance(now + less, limit);
            } else {
                long jump = randomJump();
                trail.add("step " + step + ": jump by " + jump + ", limit " + limit);
                advance(now + jump, limit);
            }
        }

        private long randomJump() {
            switch (random.nextInt(6)) {
                case 0: return 0;
                case 1: return random.nextLong(tick);
                case 2: return random.nextLong(64 * tick);
                case 3: return random.nextLong(span + 1);
                case 4: return span * (1 + random.nextLong(3000)) + random.nextLong(span);
                default: return random.nextLong(1L << (20 + random.nextInt(20)));
            }
        }

        /** Advance by exactly the sleep the wheel asks for, and check what it promised. */
        private void sleepExactly(long toNext, int limit) {
            if (count == 0) {
                throw new AssertionError("nanosToNextWork " + toNext + " with nothing scheduled");
            }
            if ((toNext == 0) != wheel.hasDue()) {
                throw new AssertionError("nanosToNextWork " + toNext + " but hasDue " + wheel.hasDue());
            }
            int earliest = earliest();
            long earliestExpiry = expiryTime(origin, tick, deadlines[earliest]);
            long wake = now + toNext;
            if (toNext > 0 && wake - earliestExpiry > 0) {
                throw new AssertionError("nanosToNextWork " + toNext + " sleeps until now" + signed(toNext)
                        + ", past the earliest expiry at now" + signed(earliestExpiry - now) + " of "
                        + entries[earliest] + " (deadline now" + signed(deadlines[earliest] - now) + ")");
            }
            for (int i = 0; i < entries.length; i++) {
                locations[i] = wheel.locationOf(entries[i]);
            }
            trail.add("step " + step + ": sleep exactly " + toNext + ", limit " + limit);
            advance(wake, limit);
            exactSleeps++;
            if (handedOut == 0) {
                wakeupsWithoutExpiry++;
                boolean moved = false;
                for (int i = 0; i < entries.length && !moved; i++) {
                    moved = locations[i] != wheel.locationOf(entries[i]);
                }
                if (!moved) {
                    throw new AssertionError("woke after exactly nanosToNextWork " + toNext
                            + " and found no work: nothing expired, no entry was re-placed");
                }
            }
        }

        private int earliest() {
            int earliest = -1;
            for (int i = 0; i < entries.length; i++) {
                if (scheduled[i] && (earliest < 0 || deadlines[i] - deadlines[earliest] < 0)) {
                    earliest = i;
                }
            }
            return earliest;
        }

        private void advance(long to, int limit) {
            long serial = ++advanceSerial;
            handedOut = 0;
            if (to - now > 0) {
                now = to; // handlers see the new time
            }
            int returned = wheel.advance(to, limit, (e, t) -> expired(e, t, serial));
            if (returned != handedOut) {
                throw new AssertionError("advance returned " + returned + " but handed out " + handedOut);
            }
            if (handedOut > limit) {
                throw new AssertionError("advance handed out " + handedOut + " over the limit " + limit);
            }
            if (wheel.time() != now) {
                throw new AssertionError("wheel time " + wheel.time() + " after advancing to " + now);
            }
            if (limit == Integer.MAX_VALUE) {
                // Everything due was handed out, except what a handler scheduled into the past meanwhile.
                for (int i = 0; i < entries.length; i++) {
                    if (wheel.locationOf(entries[i]) == TimingWheel.DUE && putBackIn[i] != serial) {
                        throw new AssertionError(entries[i] + " is still due after an advance without limit,"
                                + " deadline now" + signed(deadlines[i] - now));
                    }
                }
            }
        }

        private void expired(Entry e, long t, long serial) {
            handedOut++;
            if (!scheduled[e.id]) {
                throw new AssertionError(e + " handed out but not scheduled (lost cancel or fired twice)");
            }
            if (t != now || t != wheel.time()) {
                throw new AssertionError(e + " handed out with time " + t + ", wheel time " + wheel.time());
            }
            if (e.deadline() != deadlines[e.id]) {
                throw new AssertionError(e + " fired with deadline " + e.deadline() + ", model says "
                        + deadlines[e.id]);
            }
            if (deadlines[e.id] - t > 0) {
                throw new AssertionError(e + " fired " + (deadlines[e.id] - t) + " ns early");
            }
            if (e.isScheduled()) {
                throw new AssertionError(e + " handed out while still linked");
            }
            if (firedIn[e.id] == serial) {
                throw new AssertionError(e + " handed out twice in one advance (a handler put it back into the"
                        + " past; it must wait for the next call)");
            }
            firedIn[e.id] = serial;
            handedOutTotal++;
            scheduled[e.id] = false;
            count--;
            trail.add("  fired " + e + " at deadline" + signed(t - deadlines[e.id]));
            int r = random.nextInt(20);
            if (r < 6) {
                reentries++;
            }
            if (r < 3) {
                schedule(e, "  handler re-arms"); // possibly into the past
                putBackIn[e.id] = serial;
            } else if (r < 5) {
                Entry other = entries[random.nextInt(entries.length)];
                cancel(other);
            } else if (r == 5) {
                Entry other = entries[random.nextInt(entries.length)];
                schedule(other, "  handler moves");
                putBackIn[other.id] = serial;
            }
        }

        private void checkAfterStep() {
            wheel.checkInvariants();
            if (wheel.size() != count) {
                throw new AssertionError("size " + wheel.size() + ", model has " + count);
            }
            if (wheel.time() != now) {
                throw new AssertionError("wheel time " + wheel.time() + ", model " + now);
            }
            // Nothing more than one tick late: every entry past its expiry tick is due.
            for (int i = 0; i < entries.length; i++) {
                if (scheduled[i] && expiryTime(origin, tick, deadlines[i]) - now <= 0
                        && wheel.locationOf(entries[i]) != TimingWheel.DUE) {
                    throw new AssertionError(entries[i] + " with deadline now" + signed(deadlines[i] - now)
                            + " is past its expiry tick but not due (location " + wheel.locationOf(entries[i]) + ")");
                }
            }
        }

        /** Sleeps as told until everything fired, jumping over long stretches with no deadline. */
        private void drain() {
            for (int rounds = 0; count > 0; rounds++) {
                if (rounds > 1_000_000) {
                    throw new AssertionError("drain did not finish: " + count + " entries left");
                }
                step++;
                long toNext = wheel.nanosToNextWork();
                long earliestDeadline = deadlines[earliest()];
                if (earliestDeadline - now > 64 * span) {
                    long jump = earliestDeadline - now - random.nextLong(span);
                    trail.add("drain: jump by " + jump);
                    advance(now + jump, Integer.MAX_VALUE);
                } else {
                    sleepExactly(toNext, Integer.MAX_VALUE);
                }
                checkAfterStep();
            }
            if (wheel.nanosToNextWork() != Long.MAX_VALUE || !wheel.isEmpty()) {
                throw new AssertionError("an empty wheel must say it has no work");
            }
        }

        @Override
        public String toString() {
            return "(start " + origin + ", tick " + tick + ", levels " + levels + ", " + entries.length
                    + " entries, step " + step + ", now origin" + signed(now - origin) + ")";
        }
    }

    /** Part (b): the worker, driven with doWork on a manual ticker, against a model of armings. */
    private static final class WorkerRun {
        final SplittableRandom random;
        final long origin;
        final long tick;
        final int levels;
        final long span;
        final int maxExpirations;
        final ManualTicker ticker;
        final TimerWorker<Entry> worker;
        final Entry[] entries;
        /** The model: which entries are armed (requested or in the wheel), and at which deadline. */
        final boolean[] armed;
        final long[] deadlines;
        int armedCount;
        /** The first check that failed inside a handler: the worker catches what a handler throws. */
        AssertionError handlerFailure;
        long fired;
        long rearms;
        long successfulCancels;
        long failures;
        final Trail trail = new Trail();
        int step;

        WorkerRun(long seed, long start) {
            this.random = new SplittableRandom(seed);
            this.origin = start;
            this.tick = 1L << random.nextInt(4);
            this.levels = 1 + random.nextInt(3);
            this.span = tick << (TimingWheel.SLOT_BITS * levels);
            this.maxExpirations = random.nextInt(4) == 0 ? 1 + random.nextInt(4) : 65_536;
            this.ticker = new ManualTicker(start);
            this.worker = TimerWorker.<Entry>builder(this::checkedExpired)
                    .ticker(ticker)
                    .tick(Duration.ofNanos(tick))
                    .levels(levels)
                    .maxExpirationsPerCycle(maxExpirations)
                    .maxRequestsPerCycle(random.nextInt(4) == 0 ? 1 + random.nextInt(4) : 65_536)
                    .build();
            if (worker.tickNanos() != tick) {
                throw new AssertionError("worker built with tick " + worker.tickNanos());
            }
            this.entries = new Entry[8 + random.nextInt(120)];
            for (int i = 0; i < entries.length; i++) {
                entries[i] = new Entry(i);
            }
            this.armed = new boolean[entries.length];
            this.deadlines = new long[entries.length];
        }

        long now() {
            return ticker.nanoTime();
        }

        void execute(int steps) {
            for (step = 0; step < steps; step++) {
                int op = random.nextInt(100);
                if (op < 30) {
                    schedule(entries[random.nextInt(entries.length)], "schedule");
                } else if (op < 40) {
                    cancel(random.nextBoolean() ? someArmed() : entries[random.nextInt(entries.length)], false);
                } else {
                    moveTime();
                }
            }
            finish();
        }

        /** An armed entry if there is one, else any. */
        private Entry someArmed() {
            int start = random.nextInt(entries.length);
            for (int i = 0; i < entries.length; i++) {
                int candidate = (start + i) % entries.length;
                if (armed[candidate]) {
                    return entries[candidate];
                }
            }
            return entries[start];
        }

        private void arm(Entry e, long deadline) {
            if (!armed[e.id]) {
                armed[e.id] = true;
                armedCount++;
            }
            deadlines[e.id] = deadline;
        }

        private void disarm(Entry e) {
            if (armed[e.id]) {
                armed[e.id] = false;
                armedCount--;
            }
        }

        private void schedule(Entry e, String why) {
            long deadline = randomDeadline(random, now(), origin, tick, span);
            trail.add("step " + step + ": " + why + " " + e + " at now" + signed(deadline - now()));
            if (!worker.schedule(e, deadline)) {
                throw new AssertionError("schedule of " + e + " rejected by an open worker");
            }
            arm(e, deadline);
        }

        private void cancel(Entry e, boolean firing) {
            boolean expected = armed[e.id] && !firing;
            trail.add("step " + step + ": cancel " + e + (firing ? " (its handler is running)" : "")
                    + (armed[e.id] ? "" : " (not armed)"));
            boolean cancelled = worker.cancel(e);
            if (cancelled != expected) {
                throw new AssertionError("cancel of " + e + " returned " + cancelled + ", model says " + expected);
            }
            successfulCancels += cancelled ? 1 : 0;
            disarm(e);
        }

        private void moveTime() {
            long now = now();
            int earliest = earliestArmed();
            int how = random.nextInt(100);
            long to;
            if (how < 55 && earliest >= 0) {
                // Where a timely worker wakes up: the earliest expiry tick (or now, if it has passed).
                long expiry = expiryTime(origin, tick, deadlines[earliest]);
                to = expiry - now > 0 ? expiry : now;
                trail.add("step " + step + ": to the earliest expiry, now" + signed(to - now));
            } else if (how < 70 && earliest >= 0) {
                long expiry = expiryTime(origin, tick, deadlines[earliest]);
                to = expiry - now > 1 ? now + random.nextLong(expiry - now) : now;
                trail.add("step " + step + ": short of the earliest expiry, now" + signed(to - now));
            } else {
                long jump;
                switch (random.nextInt(5)) {
                    case 0: jump = 0; break;
                    case 1: jump = random.nextLong(8 * tick); break;
                    case 2: jump = random.nextLong(span + 1); break;
                    case 3: jump = span * (1 + random.nextLong(3000)); break;
                    default: jump = random.nextLong(1L << (20 + random.nextInt(20))); break;
                }
                to = now + jump;
                trail.add("step " + step + ": jump by " + jump);
            }
            ticker.set(to);
            if (random.nextInt(4) == 0) {
                doWork(); // one cycle only: requests made by handlers stay queued for the test thread to race
            } else {
                runUntilIdle();
            }
        }

        private int earliestArmed() {
            int earliest = -1;
            for (int i = 0; i < entries.length; i++) {
                if (armed[i] && (earliest < 0 || deadlines[i] - deadlines[earliest] < 0)) {
                    earliest = i;
                }
            }
            return earliest;
        }

        private int doWork() {
            int work = worker.doWork();
            if (handlerFailure != null) {
                throw handlerFailure;
            }
            TimerStats stats = worker.stats();
            if (stats.expired() != fired || stats.rearmed() != rearms || stats.callbackFailures() != failures) {
                throw new AssertionError("stats " + stats + " but the model counted " + fired + " expired, "
                        + rearms + " re-armed, " + failures + " failures");
            }
            if (stats.queueDepth() == 0 && stats.entries() != armedCount) {
                throw new AssertionError("stats say " + stats.entries() + " entries with no request queued,"
                        + " model has " + armedCount + " armed");
            }
            return work;
        }

        /** Cycles as the worker's loop does while work is waiting, then checks that nothing was left behind. */
        private void runUntilIdle() {
            int cycles = 0;
            while (doWork() != 0) {
                if (++cycles > 10_000) {
                    throw new AssertionError("the worker never ran out of work at one time");
                }
            }
            long now = now();
            for (int i = 0; i < entries.length; i++) {
                if (armed[i] && expiryTime(origin, tick, deadlines[i]) - now <= 0) {
                    throw new AssertionError(entries[i] + " with deadline now" + signed(deadlines[i] - now)
                            + " is past its expiry tick and still armed after an idle cycle");
                }
            }
        }

        private void checkedExpired(Entry e, long t) {
            try {
                expired(e, t);
            } catch (AssertionError failure) {
                if (handlerFailure == null) {
                    handlerFailure = failure;
                }
                throw failure;
            }
        }

        private void expired(Entry e, long t) {
            if (!armed[e.id]) {
                throw new AssertionError(e + " fired but is not armed (fired twice, or after a cancel)");
            }
            if (t != now()) {
                throw new AssertionError(e + " fired with time " + t + ", ticker says " + now());
            }
            if (e.deadline() != deadlines[e.id]) {
                throw new AssertionError(e + " fired with deadline " + e.deadline() + ", model says "
                        + deadlines[e.id]);
            }
            if (deadlines[e.id] - t > 0) {
                throw new AssertionError(e + " fired " + (deadlines[e.id] - t) + " ns early");
            }
            fired++;
            disarm(e);
            trail.add("  fired " + e + " at deadline" + signed(t - deadlines[e.id]));
            int r = random.nextInt(40);
            if (r < 8) {
                long deadline = randomDeadline(random, t, origin, tick, span);
                trail.add("  handler re-arms " + e + " at now" + signed(deadline - t));
                worker.rearm(e, deadline);
                rearms++;
                arm(e, deadline);
                if (r == 0) {
                    cancel(e, true); // cancelled while its handler runs: the re-arm must not stand
                }
            } else if (r == 8) {
                cancel(e, true);
                long deadline = randomDeadline(random, t, origin, tick, span);
                trail.add("  handler re-arms " + e + " after cancelling it");
                worker.rearm(e, deadline);
                rearms++;
            } else if (r < 11) {
                schedule(e, "  handler schedules itself"); // a queued request instead of a re-arm
            } else if (r < 14) {
                Entry other = entries[random.nextInt(entries.length)];
                if (other != e) {
                    cancel(other, false);
                }
            } else if (r < 16) {
                Entry other = entries[random.nextInt(entries.length)];
                if (other != e) {
                    schedule(other, "  handler schedules");
                }
            }
            if (random.nextInt(50) == 0) {
                failures++;
                trail.add("  handler throws");
                throw new IllegalStateException("thrown by the fuzz test's handler (expected)");
            }
        }

        /** Cancels what is left; afterwards nothing fires and the wheel is empty. */
        private void finish() {
            step++;
            for (Entry e : entries) {
                cancel(e, false);
            }
            ticker.set(now() + span * 5000);
            runUntilIdle();
            TimerStats stats = worker.stats();
            if (stats.entries() != 0 || stats.queueDepth() != 0) {
                throw new AssertionError("entries left after cancelling everything: " + stats);
            }
            worker.close(Duration.ofSeconds(1));
        }

        @Override
        public String toString() {
            return "(start " + origin + ", tick " + tick + ", levels " + levels + ", " + entries.length
                    + " entries, max expirations " + maxExpirations + ", step " + step + ", now origin"
                    + signed(now() - origin) + ")";
        }
    }

    private static String signed(long nanos) {
        return (nanos >= 0 ? " + " : " - ") + Math.abs(nanos);
    }
}
