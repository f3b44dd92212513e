/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Producers race a real {@link TimerWorker} on the system ticker: they register, move and cancel
 * their own entries while the worker expires them and its handler re-arms some of them. Every
 * arming is checked against the contract of {@link TimerWorker}.
 *
 * <h2>How a firing is attributed to an arming</h2>
 * Each entry counts its producer's armings (generations, 1, 2, ...). A producer deadline carries
 * its generation in bits 1..9 and has bit 0 clear; a re-arm deadline has bit 0 set. The wheel keeps
 * the deadline it was given, so the handler reads from {@link TimerEntry#deadline()} which request
 * it fires for. A generation's <em>chain</em> is its own firing plus the firings of the re-arms made
 * in its handlers; how many re-arms a chain makes is a pure function of (seed, entry, generation),
 * so producer and handler agree on the chain's full length {@code L} without talking.
 *
 * <h2>What the contract guarantees, and is asserted</h2>
 * The handler counts each chain's firings ({@code fires[g]}, written by the worker only). When a
 * producer ends a chain (a cancel, or a new schedule that supersedes it) it reads {@code c = fires[g]}
 * right after its request returned; every firing that had finished before its state CAS is visible
 * then. From the state-word table:
 * <ul>
 * <li>cancel returned {@code true}: the entry was ARMED, no handler was running, and no firing of
 *     the chain can start afterwards: finally {@code fires[g] == c}, and {@code c < L};</li>
 * <li>cancel returned {@code false}: the entry was IDLE (the chain is complete) or FIRING (that one
 *     handler finishes, its re-arm does not stand): finally {@code max(c, 1) <= fires[g] <= min(c + 1, L)};</li>
 * <li>superseded by a new schedule: a pending arming is replaced before it fires (QUEUED blocks the
 *     ARMED -> FIRING CAS) while a handler already running still counts, and its re-arm is replaced:
 *     finally {@code c <= fires[g] <= min(c + 1, L)}; a superseded arming is not guaranteed to fire,
 *     nor not to;</li>
 * <li>never ended by the producer (left to fire at the end): finally {@code fires[g] == L}.</li>
 * </ul>
 * The handler also checks, as it runs: {@code now >= deadline()} and {@code now >=} the deadline the
 * producer requested for that generation (and that they are equal); generations fire in increasing
 * order and each at most once; a re-arm firing matches the re-arm the handler made; a chain never
 * fires after its producer saw a cancel return {@code true}; it runs on the worker thread.
 * At the end the worker must drain (queue depth 0, no entries, every state IDLE or CANCELLED without
 * QUEUED), count no callback failure, agree with the handler's call and re-arm counts, and its
 * thread must end on close.
 *
 * <p>Real time is only used to wait, in bounded polling loops; no assertion depends on timing.
 * The random choices come from a seed printed in every failure; rerun one with
 * {@code -Dheartbeat.stress.seed=<seed>} (the interleavings will still differ).
 */
class TimerWorkerStressTest {

    private static final String SEED_PROPERTY = "heartbeat.stress.seed";

    private static final int PRODUCERS = 8;
    private static final int ENTRIES_PER_PRODUCER = 2_000;
    /** Rounds over all of a producer's entries; one random operation per entry per round. */
    private static final int ROUNDS = 60;
    /** A round arms an entry at most twice (a burst or a chase), so generations stay below 2 * ROUNDS + 1. */
    private static final int MAX_GEN = 2 * ROUNDS;

    private static final long MAX_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final long BURST_DELAY_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    private static final long MAX_REARM_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(3);
    /** After each chunk of entries a producer pauses, so that the worker gets a core and entries fire. */
    private static final int CHUNK = 32;
    private static final long MAX_PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(400);
    private static final long SLOW_HANDLER_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    /** How long a chasing producer waits for its handler to start, and a held handler waits for the producer. */
    private static final long CHASE_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(2);
    private static final long HOLD_NANOS = TimeUnit.MICROSECONDS.toNanos(300);

    /**
     * How long the producers may go without any of them finishing a round before the test calls them
     * stuck: a bound on progress, not on the total, so a machine busy with other work only slows the
     * test (the whole run took 10.9 s on a quiet CI machine and over 15 s on a busy one).
     */
    private static final long PRODUCERS_STUCK_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final long DRAIN_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(5);

    /** Low deadline bits that identify the arming: bit 0 = re-arm, bits 1..9 = producer generation. */
    private static final long ID_MASK = 0x3FF;

    // Ways a producer ended a chain, for messages.
    private static final byte SUPERSEDED = 1;
    private static final byte CANCEL_TRUE = 2;
    private static final byte CANCEL_FALSE = 3;
    private static final byte LEFT_TO_FIRE = 4;

    static {
        if (MAX_GEN > (ID_MASK >>> 1)) {
            throw new AssertionError("generations do not fit the deadline's low bits");
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void producersRacingTheWorkerKeepTheArmingContract() throws InterruptedException {
        long seed = Long.getLong(SEED_PROPERTY, System.nanoTime() * 0x9E3779B97F4A7C15L);
        String where = "[seed=" + seed + ", rerun with -D" + SEED_PROPERTY + "=" + seed + "] ";
        long started = System.nanoTime();

        StressErrors errors = new StressErrors();
        StressHandler handler = new StressHandler(seed, errors);
        TimerWorker<StressEntry> worker = TimerWorker.<StressEntry>builder(handler)
                .ticker(Ticker.system())
                .tick(Duration.ofMillis(1))
                .threadName("stress-timer")
                .build();
        handler.worker = worker; // published to the worker thread by start()

        StressEntry[][] entries = new StressEntry[PRODUCERS][ENTRIES_PER_PRODUCER];
        for (int p = 0; p < PRODUCERS; p++) {
            for (int i = 0; i < ENTRIES_PER_PRODUCER; i++) {
                entries[p][i] = new StressEntry(p * ENTRIES_PER_PRODUCER + i);
            }
        }

        boolean closed = false;
        try {
            worker.start();

            // ---- Producers race the worker. ----
            CountDownLatch go = new CountDownLatch(1);
            StressProducer[] producers = new StressProducer[PRODUCERS];
            Thread[] threads = new Thread[PRODUCERS];
            for (int p = 0; p < PRODUCERS; p++) {
                producers[p] = new StressProducer(worker, entries[p], seed, p, errors, go);
                threads[p] = new Thread(producers[p], "stress-producer-" + p);
                threads[p].setDaemon(true);
                threads[p].start();
            }
            go.countDown();
            long progress = -1;
            long progressAt = System.nanoTime();
            for (Thread thread : threads) {
                while (thread.isAlive()) {
                    thread.join(100);
                    long now = System.nanoTime();
                    long done = roundsDone(producers);
                    if (done != progress) {
                        progress = done;
                        progressAt = now;
                    } else if (thread.isAlive() && now - progressAt > PRODUCERS_STUCK_NANOS) {
                        fail(where + thread.getName() + " is stuck: no producer finished a round in "
                                + TimeUnit.NANOSECONDS.toSeconds(PRODUCERS_STUCK_NANOS) + " s (" + done + " of "
                                + PRODUCERS * ROUNDS + " rounds done); " + worker.stats()
                                + "; violations so far: " + errors.describe());
                    }
                }
            }

            // ---- Let every chain left open fire, and the worker drain; bounded polling. ----
            long drainDeadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
            String pending;
            while ((pending = notQuiescent(worker, entries, seed)) != null) {
                if (System.nanoTime() - drainDeadline > 0) {
                    fail(where + "worker did not drain: " + pending + "; " + worker.stats()
                            + "; violations so far: " + errors.describe());
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            TimerStats drained = worker.stats();
            assertEquals(0, drained.queueDepth(), () -> where + "queue depth after draining: " + drained);
            assertEquals(0, drained.entries(), () -> where + "entries after draining: " + drained);

            // ---- Close: the thread must end. ----
            assertTrue(worker.close(Duration.ofSeconds(5)), () -> where + "close(5s) did not see the thread end");
            closed = true;
            assertFalse(worker.thread().isAlive(), () -> where + "worker thread alive after close");

            // ---- Every chain's final firing count lies in the bounds its producer recorded. ----
            long totalFires = 0;
            for (StressEntry[] own : entries) {
                for (StressEntry e : own) {
                    for (int g = 1; g <= e.gen; g++) {
                        int fired = e.fires.get(g);
                        totalFires += fired;
                        if (e.how[g] == 0) {
                            errors.add("entry " + e.id + " gen " + g + ": no outcome recorded by its producer");
                        } else if (fired < e.lo[g] || fired > e.hi[g]) {
                            errors.add("entry " + e.id + " gen " + g + " (" + howName(e.how[g]) + ", chain length "
                                    + chainLength(seed, e.id, g) + "): fired " + fired + " times, allowed ["
                                    + e.lo[g] + ", " + e.hi[g] + "]");
                        }
                    }
                }
            }
            if (errors.count() != 0) {
                fail(where + errors.describe());
            }

            // The worker thread has ended (joined), so the handler's plain fields are visible from here.
            TimerStats stats = worker.stats();
            long fires = totalFires;
            assertEquals(handler.calls, fires, () -> where + "handler calls vs per-chain firing counts");
            assertEquals(0, stats.callbackFailures(), () -> where + "callback failures: " + stats);
            assertEquals(0, stats.rejected(), () -> where + "rejected requests: " + stats);
            assertEquals(handler.calls, stats.expired(), () -> where + "expired counter vs handler calls: " + stats);
            assertEquals(handler.rearms, stats.rearmed(), () -> where + "rearmed counter vs handler re-arms: " + stats);

            long[] sum = new long[StressProducer.N_COUNTERS];
            for (StressProducer producer : producers) {
                for (int i = 0; i < sum.length; i++) {
                    sum[i] += producer.counts[i];
                }
            }
            System.out.printf("TimerWorkerStressTest %s %d ms: %d schedules (%d moves), cancels %d true / %d false"
                            + " (%d while firing), %d superseded after a partial chain, %d left to fire,"
                            + " %d of %d chases met a running handler;"
                            + " %d firings, %d re-arms; %s%n",
                    where, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
                    sum[StressProducer.N_SCHEDULES], sum[StressProducer.N_MOVES],
                    sum[StressProducer.N_CANCEL_TRUE], sum[StressProducer.N_CANCEL_FALSE],
                    sum[StressProducer.N_CANCEL_WHILE_FIRING], sum[StressProducer.N_SUPERSEDED_PARTIAL],
                    sum[StressProducer.N_LEFT_TO_FIRE], sum[StressProducer.N_CHASE_HITS], sum[StressProducer.N_CHASES],
                    handler.calls, handler.rearms, stats);
        } finally {
            if (!closed) {
                worker.close(Duration.ofSeconds(5));
            }
        }
    }

    /** Null if the worker has drained; otherwise what is still pending. */
    private static String notQuiescent(TimerWorker<StressEntry> worker, StressEntry[][] entries, long seed) {
        TimerStats stats = worker.stats();
        if (stats.queueDepth() != 0 || stats.entries() != 0) {
            return "queue depth " + stats.queueDepth() + ", entries " + stats.entries();
        }
        for (StressEntry[] own : entries) {
            for (StressEntry e : own) {
                int state = e.state();
                int lifecycle = state & TimerEntry.LIFECYCLE;
                if ((state & TimerEntry.QUEUED) != 0
                        || (lifecycle != TimerEntry.IDLE && lifecycle != TimerEntry.CANCELLED)) {
                    return "entry " + e.id + " in state " + state;
                }
                // The producers have been joined: their fields are visible here.
                if (e.open && e.fires.get(e.gen) < chainLength(seed, e.id, e.gen)) {
                    return "entry " + e.id + " gen " + e.gen + " fired " + e.fires.get(e.gen) + " of "
                            + chainLength(seed, e.id, e.gen) + " times";
                }
            }
        }
        return null;
    }

    /** How many re-arms the chain of generation {@code gen} makes: 0 (half), 1 or 2 (a quarter each). */
    static int rearms(long seed, int id, int gen) {
        long h = seed ^ (id * 0x9E3779B97F4A7C15L) ^ (gen * 0xC2B2AE3D27D4EB4FL);
        h = (h ^ (h >>> 30)) * 0xBF58476D1CE4E5B9L;
        h = (h ^ (h >>> 27)) * 0x94D049BB133111EBL;
        h ^= h >>> 31;
        int r = (int) (h >>> 62);
        return r < 2 ? 0 : r - 1;
    }

    /** How many times the chain of generation {@code gen} fires when nobody interferes. */
    static int chainLength(long seed, int id, int gen) {
        return 1 + rearms(seed, id, gen);
    }

    static long producerDeadline(long time, int gen) {
        return (time & ~ID_MASK) | ((long) gen << 1);
    }

    static long rearmDeadline(long time) {
        return time | 1;
    }

    private static String howName(byte how) {
        switch (how) {
            case SUPERSEDED: return "superseded";
            case CANCEL_TRUE: return "cancel returned true";
            case CANCEL_FALSE: return "cancel returned false";
            case LEFT_TO_FIRE: return "left to fire";
            default: return "unknown";
        }
    }

    /** An entry with its bookkeeping; each field says which thread writes it. */
    static final class StressEntry extends TimerEntry {
        final int id;

        // ---- Shared. ----
        /** Firings per generation's chain: incremented by the handler, read by the producer and the test. */
        final AtomicIntegerArray fires = new AtomicIntegerArray(MAX_GEN + 1);
        /** The deadline requested per generation: written by the producer before schedule, read by the handler. */
        final AtomicLongArray requested = new AtomicLongArray(MAX_GEN + 1);
        /** The latest generation whose cancel returned true: written by the producer after that cancel. */
        volatile int cancelledTrueGen;
        /** Set by a chasing producer: the handler lingers (bounded) so the producer's request meets it FIRING. */
        volatile boolean hold;

        // ---- Producer only (read by the test after joining the producer). ----
        int gen;
        /** Whether chain {@link #gen} is still running as far as the producer knows (not cancelled). */
        boolean open;
        final byte[] lo = new byte[MAX_GEN + 1];
        final byte[] hi = new byte[MAX_GEN + 1];
        final byte[] how = new byte[MAX_GEN + 1];

        // ---- Worker (handler) only. ----
        int firingGen;
        int hop;
        boolean rearmPending;
        long rearmDeadline;

        StressEntry(int id) {
            this.id = id;
        }

        @Override
        public String toString() {
            return "StressEntry#" + id;
        }
    }

    /** Violations found on any thread; lock-free, keeps the first few messages. */
    static final class StressErrors {
        private static final int KEPT = 20;
        private final AtomicInteger count = new AtomicInteger();
        private final ConcurrentLinkedQueue<String> messages = new ConcurrentLinkedQueue<>();

        void add(String message) {
            if (count.incrementAndGet() <= KEPT) {
                messages.add(message);
            }
        }

        int count() {
            return count.get();
        }

        String describe() {
            StringBuilder sb = new StringBuilder().append(count.get()).append(" violation(s)");
            for (String message : messages) {
                sb.append("\n  ").append(message);
            }
            return sb.toString();
        }
    }

    /** Runs on the worker thread only: checks each firing, counts it, and re-arms per the chain's plan. */
    static final class StressHandler implements ExpiryHandler<StressEntry> {
        private final long seed;
        private final StressErrors errors;
        private final SplittableRandom random;
        /** Set before the worker starts. */
        TimerWorker<StressEntry> worker;
        // Worker only; read by the test after the worker thread ended.
        long calls;
        long rearms;

        StressHandler(long seed, StressErrors errors) {
            this.seed = seed;
            this.errors = errors;
            this.random = new SplittableRandom(seed ^ 0x5DEECE66DL);
        }

        @Override
        public void onExpired(StressEntry e, long now) {
            calls++;
            if (Thread.currentThread() != worker.thread()) {
                errors.add("handler for entry " + e.id + " ran on " + Thread.currentThread().getName());
            }
            long deadline = e.deadline();
            if (now - deadline < 0) {
                errors.add("entry " + e.id + " fired " + (deadline - now) + " ns before its deadline()");
            }
            if ((deadline & 1) == 0) {
                int g = (int) ((deadline & ID_MASK) >>> 1);
                if (g < 1 || g > MAX_GEN) {
                    errors.add("entry " + e.id + " fired with deadline " + deadline + " that no request made");
                    return;
                }
                if (g <= e.firingGen) {
                    errors.add("entry " + e.id + " gen " + g + " fired after gen " + e.firingGen
                            + " had fired: an arming fired twice or out of order");
                }
                long requested = e.requested.get(g);
                if (requested != deadline) {
                    errors.add("entry " + e.id + " gen " + g + " fired with deadline " + deadline
                            + " but its producer requested " + requested);
                } else if (now - requested < 0) {
                    errors.add("entry " + e.id + " gen " + g + " fired " + (requested - now)
                            + " ns before the requested deadline");
                }
                e.firingGen = g;
                e.hop = 0;
                e.rearmPending = false;
            } else {
                if (!e.rearmPending || deadline != e.rearmDeadline) {
                    errors.add("entry " + e.id + " fired with re-arm deadline " + deadline
                            + " but the pending re-arm is " + (e.rearmPending ? e.rearmDeadline : "none"));
                    return;
                }
                e.rearmPending = false;
                e.hop++;
            }
            int g = e.firingGen;
            if (e.cancelledTrueGen == g) {
                errors.add("entry " + e.id + " gen " + g + " hop " + e.hop + " fired after a cancel returned true");
            }
            int fired = e.fires.incrementAndGet(g);
            if (fired != e.hop + 1) {
                errors.add("entry " + e.id + " gen " + g + " counted " + fired + " firings at hop " + e.hop);
            }
            boolean lingerFirst = random.nextBoolean();
            if (lingerFirst) {
                linger(e);
            }
            if (e.hop < TimerWorkerStressTest.rearms(seed, e.id, g)) {
                long next = rearmDeadline(now + random.nextLong(MAX_REARM_DELAY_NANOS + 1));
                e.rearmDeadline = next;
                e.rearmPending = true;
                rearms++;
                worker.rearm(e, next);
            }
            if (!lingerFirst) {
                linger(e);
            }
        }

        /** Now and then, or while a chasing producer holds the entry, the handler takes a while (bounded). */
        private void linger(StressEntry e) {
            if (e.hold) {
                long until = System.nanoTime() + HOLD_NANOS;
                while (e.hold && System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
            } else if ((random.nextInt() & 127) == 0) {
                long until = System.nanoTime() + SLOW_HANDLER_NANOS;
                while (System.nanoTime() - until < 0) {
                    Thread.onSpinWait();
                }
            }
        }
    }

    private static long roundsDone(StressProducer[] producers) {
        long n = 0;
        for (StressProducer p : producers) {
            n += p.rounds;
        }
        return n;
    }

    /** One producer thread: a fixed number of random operations on its own entries, then a final cancel or let-fire. */
    static final class StressProducer implements Runnable {
        static final int N_SCHEDULES = 0;
        static final int N_MOVES = 1;
        static final int N_CANCEL_TRUE = 2;
        static final int N_CANCEL_FALSE = 3;
        static final int N_CANCEL_WHILE_FIRING = 4;
        static final int N_SUPERSEDED_PARTIAL = 5;
        static final int N_LEFT_TO_FIRE = 6;
        static final int N_CHASES = 7;
        static final int N_CHASE_HITS = 8;
        static final int N_COUNTERS = 9;

        private final TimerWorker<StressEntry> worker;
        private final Ticker ticker;
        private final StressEntry[] entries;
        private final long seed;
        private final int index;
        private final StressErrors errors;
        private final CountDownLatch go;
        private final SplittableRandom random;
        /** Read by the test after joining this producer. */
        final long[] counts = new long[N_COUNTERS];
        /** Rounds finished, read by the test while waiting (written by this producer only). */
        volatile int rounds;

        StressProducer(TimerWorker<StressEntry> worker, StressEntry[] entries, long seed, int index,
                StressErrors errors, CountDownLatch go) {
            this.worker = worker;
            this.ticker = worker.ticker();
            this.entries = entries;
            this.seed = seed;
            this.index = index;
            this.errors = errors;
            this.go = go;
            this.random = new SplittableRandom(seed + 0x9E3779B97F4A7C15L * (index + 1));
        }

        @Override
        public void run() {
            try {
                go.await();
                int[] order = new int[entries.length];
                for (int i = 0; i < order.length; i++) {
                    order[i] = i;
                }
                for (int round = 0; round < ROUNDS; round++) {
                    shuffle(order);
                    for (int i = 0; i < order.length; i++) {
                        operate(entries[order[i]]);
                        if (i % CHUNK == CHUNK - 1) {
                            LockSupport.parkNanos(random.nextLong(MAX_PAUSE_NANOS + 1));
                        }
                    }
                    rounds = round + 1;
                }
                for (StressEntry e : entries) {
                    if (e.open && random.nextBoolean()) {
                        cancel(e);
                    } else if (e.open) {
                        record(e, e.gen, LEFT_TO_FIRE, chainLength(seed, e.id, e.gen), chainLength(seed, e.id, e.gen));
                        counts[N_LEFT_TO_FIRE]++;
                    }
                }
            } catch (Throwable t) {
                errors.add("producer " + index + " failed: " + t);
            }
        }

        private void operate(StressEntry e) {
            int dice = random.nextInt(100);
            if (dice < 30) {
                schedule(e, random.nextLong(MAX_DELAY_NANOS + 1));
            } else if (dice < 45) {
                cancel(e);
            } else if (dice < 46) {
                chase(e);
            } else if (dice < 54) {
                // A burst: two requests back to back, racing the worker's apply and expiry of the first.
                int kind = random.nextInt(3);
                if (kind == 0) {
                    schedule(e, random.nextLong(BURST_DELAY_NANOS + 1));
                    schedule(e, random.nextLong(MAX_DELAY_NANOS + 1));
                } else if (kind == 1) {
                    schedule(e, random.nextLong(BURST_DELAY_NANOS + 1));
                    cancel(e);
                } else {
                    schedule(e, random.nextLong(MAX_DELAY_NANOS + 1));
                    for (int spins = random.nextInt(64); spins > 0; spins--) {
                        Thread.onSpinWait();
                    }
                    schedule(e, 0); // moved to now: due at once
                }
            }
            // else: leave it alone, to fire
        }

        /**
         * Arms the entry due now, waits (bounded) until its handler has started, then cancels or moves
         * it while the handler lingers: a request that meets the entry FIRING.
         */
        private void chase(StressEntry e) {
            e.hold = true;
            try {
                schedule(e, 0);
                int g = e.gen;
                long until = System.nanoTime() + CHASE_WAIT_NANOS;
                while (e.fires.get(g) == 0 && System.nanoTime() - until < 0) {
                    Thread.onSpinWait(); // bounded: at most CHASE_WAIT_NANOS
                }
                counts[N_CHASES]++;
                if (e.fires.get(g) != 0) {
                    counts[N_CHASE_HITS]++;
                }
                if (random.nextBoolean()) {
                    cancel(e);
                } else {
                    schedule(e, random.nextLong(MAX_DELAY_NANOS + 1));
                }
            } finally {
                e.hold = false;
            }
        }

        /** Registers the entry, or moves it if its chain is still open (superseding that chain). */
        private void schedule(StressEntry e, long delay) {
            int previous = e.gen;
            boolean supersedes = e.open;
            int g = previous + 1;
            if (g > MAX_GEN) {
                throw new IllegalStateException("entry " + e.id + " ran out of generations");
            }
            long deadline = producerDeadline(ticker.nanoTime() + delay, g);
            e.requested.set(g, deadline);
            e.gen = g;
            if (!worker.schedule(e, deadline)) {
                errors.add("entry " + e.id + " gen " + g + ": schedule rejected by a running worker");
            }
            counts[N_SCHEDULES]++;
            if (supersedes) {
                counts[N_MOVES]++;
                int c = e.fires.get(previous);
                int length = chainLength(seed, e.id, previous);
                if (c > 0 && c < length) {
                    counts[N_SUPERSEDED_PARTIAL]++;
                }
                record(e, previous, SUPERSEDED, c, Math.min(c + 1, length));
            }
            e.open = true;
        }

        private void cancel(StressEntry e) {
            boolean cancelled = worker.cancel(e);
            if (!e.open) {
                if (cancelled) {
                    errors.add("entry " + e.id + " gen " + e.gen + ": cancel returned true with nothing armed");
                }
                return;
            }
            int g = e.gen;
            int c = e.fires.get(g);
            int length = chainLength(seed, e.id, g);
            if (cancelled) {
                e.cancelledTrueGen = g;
                counts[N_CANCEL_TRUE]++;
                if (c >= length) {
                    errors.add("entry " + e.id + " gen " + g + ": cancel returned true after the whole chain ("
                            + c + " of " + length + ") had fired");
                }
                record(e, g, CANCEL_TRUE, c, c);
            } else {
                counts[N_CANCEL_FALSE]++;
                if (c < length) {
                    counts[N_CANCEL_WHILE_FIRING]++;
                }
                record(e, g, CANCEL_FALSE, Math.max(c, 1), Math.min(c + 1, length));
            }
            e.open = false;
        }

        private void record(StressEntry e, int g, byte how, int lo, int hi) {
            int length = chainLength(seed, e.id, g);
            int fired = e.fires.get(g);
            if (fired > length) {
                errors.add("entry " + e.id + " gen " + g + " fired " + fired + " times, more than its chain's "
                        + length + " armings");
            }
            e.how[g] = how;
            e.lo[g] = (byte) lo;
            e.hi[g] = (byte) hi;
        }

        private void shuffle(int[] order) {
            for (int i = order.length - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
        }
    }
}
