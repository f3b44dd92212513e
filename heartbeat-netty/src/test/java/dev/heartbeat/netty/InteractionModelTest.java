/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Randomness;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import dev.heartbeat.netty.engine.CheckGrid;
import dev.heartbeat.netty.engine.CloseSequence;
import dev.heartbeat.netty.engine.Guards;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import org.junit.jupiter.api.Test;

/**
 * The interaction model: seeded random sequences of everything that can change a channel's situation
 * (reads, reads the application answers within their batch, racing the event loop's actions or not,
 * writes with ordinary and void promises, flushes, writability changes, answers and
 * non-answers to pings, reconfigures to any other generated configuration, drains, veto answers, an
 * action budget, coalescing, overload on and off, user closes, handler removal, handlers on an executor of their own
 * ({@link ManualExecutor}: every call from the channel's loop waits there, and the loop completes their writes outside
 * it), virtual time), on several
 * {@code EmbeddedChannel}s of one monitor driven in virtual time, checked after every step against a
 * small reference model of Heartbeat's documented promises (see the {@code check...} methods, each
 * citing the Javadoc it encodes).
 *
 * <p>Run it alone:
 * {@code ./mvnw -B -o -q test -pl heartbeat-core,heartbeat-netty -Dtest=InteractionModelTest
 * -Dsurefire.failIfNoSpecifiedTests=false}. System properties:
 * <ul>
 * <li>{@code heartbeat.model.steps}: steps in all (default 1,000,000), in episodes of
 *     {@code heartbeat.model.episode} steps (default 2,000), each a fresh monitor and channels;</li>
 * <li>{@code heartbeat.model.seed}: run only the episode of this seed (printed on failure);</li>
 * <li>{@code heartbeat.model.base}: the seed of the first episode (default 1);</li>
 * <li>{@code heartbeat.model.tolerate}: issue 26 item numbers (and the model's own, from 101: see
 *     {@link #NEW_STALL_GRID} and after) whose failures are counted instead of failing the test, the
 *     channel closed and left alone after one (for landing the model while the fixes arrive), or
 *     {@code all}; by default {@link #OPEN_ITEMS}, the families still open; empty enforces every check.
 *     Which item a failure is, is the model's best guess from its context; a failure it cannot place
 *     (item 0) is never tolerated but by {@code all};</li>
 * <li>{@code heartbeat.model.openChecks}: checks whose every violation is tolerated; by default
 *     {@link #OPEN_CHECKS}; empty enforces them;</li>
 * <li>{@code heartbeat.model.survey}: true to run every episode to its first violation and print, per
 *     item, the episodes that failed and the one that failed soonest, instead of failing at the first.</li>
 * <li>{@code heartbeat.model.noCoalescing}: true to run every episode without coalescing (the rest drawn as
 *     ever), to tell whether a failure needs it.</li>
 * </ul>
 *
 * <p>Reruns of one seed are exact: the randomness Heartbeat draws itself (a channel's max-age jitter and
 * first ping token, {@code ThreadLocalRandom} in production, and its share of the ping jitter, its
 * handler's identity hash) comes from a {@link SeededRandomness} of the episode's seed, through the
 * package-private {@code HeartbeatMonitor.Builder#manual(Randomness)}
 * ({@link #oneSeedRunsTheSameTwice}). The model's bounds hold for any draw.
 */
class InteractionModelTest {

    static final long MS = ModelSpec.MS;
    /**
     * The lateness the model allows any one action beyond its rule's deadline while the worker keeps
     * up: one wheel tick (2^20 ns, {@code HeartbeatMonitor.Builder#tick}: "the most an idle channel is
     * acted on after its timeout") and the model's own 1 ms step between worker cycles and event loop turns,
     * rounded up; an episode that coalesces adds its widest window ({@link Episode#slack}).
     */
    static final long SLACK = 3 * MS;
    /** {@code HeartbeatConfig.Builder#maxAge}: "as soon as the goodbye is written (at most 1 s later)". */
    static final long GOODBYE_WAIT = TimeUnit.SECONDS.toNanos(1);
    static final long NONE = Long.MIN_VALUE;
    /**
     * Failures found by the model that issue 26 does not list get numbers from 101 (tolerable as the
     * items are). 101: a write stall closed after more than 1.25 x its timeout, another rule's check
     * (an idle event moved by a read) having shifted the stall's look grid. Later (seeds 608, 1103, 1883,
     * 2728): under an action budget of 5/s a write stall was never closed, every look the budget held back
     * taken for a pause of the event loop. Fixed: the budget's wait is not counted in the gap
     * ({@code GuardState#deferredBy}; {@code InteractionModelRegressionTest}).
     */
    static final int NEW_STALL_GRID = 101;
    /**
     * 102: a reconfigure during a max-age grace closes before the grace its goodbye event announced. Fixed
     * with 104 (seed 773 was its switch back: the age counted afresh, and closed at once as told already).
     */
    static final int NEW_GRACE_CUT = 102;
    /**
     * 103: under {@code reduceIdleTimeouts}, a channel that starts or is reconfigured is first checked at
     * its unscaled timeout, so it is closed up to (1 - factor) x its timeout late.
     */
    static final int NEW_OVERLOAD_START = 103;
    /**
     * 104: a reconfigure during a max-age grace to a configuration without that grace loses the close
     * (the channel stays open), and a later switch back says the goodbye again. Fixed: the guard state of
     * a goodbye said is carried into a configuration without guards ({@code Guards.CARRIED}), whose handler
     * still closes at the grace's end ({@code InteractionModelRegressionTest}).
     */
    static final int NEW_GRACE_LOST = 104;
    /**
     * 105: the re-check of a held ping-timeout close performs it against the channel's current ping: a
     * peer that answered meanwhile, and was pinged again since, is asked about (and closed at the hold's
     * bound) before the new ping had its timeout. Fixed: a held PING_TIMEOUT is dropped at its re-check
     * when a ping was written since the hold began ({@code InteractionModelRegressionTest}); seeds 419 and
     * 1089 (survey of 1-1500) were the same with a re-ping for the new ping decided and not yet written: the
     * fix looked at a ping on the wire only. Fixed too: written or attempted since the hold began.
     */
    static final int NEW_STALE_RECHECK = 105;
    /**
     * 106: under an action budget, a ping re-sent for a missed answer and waiting for its token is
     * written after the answer came (219 ms after it, with an interval of 483 ms: seed 466).
     */
    static final int NEW_BUDGET_RESEND = 106;
    /**
     * 107: a write-stall close (its veto asked) while the bytes the model counts as waiting (flushed and
     * not yet taken by the peer) have waited less than the timeout: the guard's picture counts bytes written
     * but not flushed too (seed 457). Seed 86 (survey of 1-500; not alone): closed 50-59 ms into 534 ms:
     * writes queued before a switch to a write stall complete unseen, and a same-message same-size write
     * after them left the stall's picture unmoved. Fixed: a tracked write that finds fewer bytes pending
     * than the picture drops it ({@code GuardState.beforeWrite}; {@code InteractionModelRegressionTest}).
     */
    static final int NEW_UNFLUSHED_STALL = 107;
    /**
     * 108: an idle close under {@code reduceIdleTimeouts} later than its scaled timeout for a channel that
     * was open when the factor was lowered (seed 220), beyond the start case of 103.
     */
    static final int NEW_OVERLOAD_LATE = 108;
    /**
     * 109: an idle event, or a ping timeout, later than the model expects during a max-age grace, after
     * the goodbye was written (seeds 52, 207, 156). Decided (lifecycle-guards.md): the goodbye is no write
     * activity, the application writes its flush completes are; the model missed the second half. Closed.
     */
    static final int NEW_EVENT_IN_GRACE = 109;
    /**
     * The families that still fail on this commit, tolerated by default so that the model lands and
     * guards every other promise; each is listed in issue 26's note with its soonest seed. None since the
     * fixes of 101 and of 1 seed 28 (see {@link #OPEN_CHECKS} for the survey).
     * {@code -Dheartbeat.model.tolerate=} (empty) enforces every check.
     */
    static final String OPEN_ITEMS = "";
    /**
     * The checks whose every violation is still tolerated by default, whatever item it is: none. The
     * survey of seeds 1-1500 with reruns exact ({@link SeededRandomness}) and only 107 tolerated found item 1
     * seeds 28, 577, 649; 101 seeds 608, 1103; 105 seeds 419, 1089. After the fixes of 105 (both seeds), of 1
     * seed 649 (merged check orders) and seed 577 (an age due during a hold), the same survey finds item 1 seed
     * 28 (a re-check under an action budget of 50/s not performed by 41,995 ms, open) and 101 seeds 608 and
     * 1103 (under a budget of 5/s a write stall of 62 ms is never closed: each deferred look comes more than
     * the stall's timeout after the last, which {@code GuardState#stalled} took for a paused event loop and
     * so took a new picture). After the fix of 101 (the budget's wait is no pause), the survey of seeds
     * 1-1500 with nothing tolerated found item 1 seed 28 only; seeds 1-3000 besides: 101 went from 4 episodes
     * (608, 1103, 1883, 2728) to none, the rest as before. Seed 28 was a hold the veto asked for after a 19 ms
     * wait for the budget, missed by the worker's one look for it 10 ms after the judgement (fixed: it looks
     * again while the hand-off waits). After both fixes the survey of seeds 1-1500 with nothing tolerated finds
     * no failure, and {@link #OPEN_ITEMS} is empty; seeds 1-3000 find three, none of 1 or 101 (item 1 seed 2943
     * went with seed 28's fix): 14 seed 1703 (checkNeverEarly), 103 seed 1678, and seed 1675 (checkNeverEarly,
     * a PING_TIMEOUT close after 1 unanswered ping of 3: not placed). Seed 1675 is fixed (under
     * {@code ANY_INBOUND} a read after the latest ping ends the streak; {@link #PINNED_SEEDS}): the survey of
     * seeds 1501-3000 with nothing tolerated finds 14 seed 1703 (a READER_IDLE close before the first ping
     * since the last read) and 103 seed 1678 (an overload close later than its bound), both fixed since
     * ({@link #PINNED_SEEDS}). Seeds 3001-13000 then found 19 failing episodes, all late closes (items 1, 12,
     * 104, 108, 109), none early; each cause fixed and a seed of each pinned. After those fixes, the survey of
     * seeds 1-13000 (26,000,000 steps) with nothing tolerated finds no failure. With coalescing drawn too, the survey
     * of seeds 1-50000 found 5450 (checkNeverEarly) and 19976 (a late close; it fails without coalescing too), both
     * fixed ({@link #PINNED_DRAWN_SEEDS}), three closes a window late that the model's bound had missed (a veto hold's
     * look and a write stall's looks are coalesced checks too: 27181, 27475, 20641), and 20331 (item 1; it fails
     * without coalescing too), fixed and pinned as well. After those fixes the same survey finds no failure. With
     * handlers on executors of their own drawn too, the survey of seeds 1-50000 found 103 failing episodes, all of them
     * the model's own ordering, none Heartbeat's: a completion made by the goodbye's flush, which such a handler learns
     * after the rest of its batch (seed 431); actions the opening's cycle queued on such an executor, run behind a
     * later step's call (seeds 35905, 43413, 38980); a raced read, which reaches such an executor behind the actions
     * (seeds 9913, 6657). After the model's fixes the survey of seeds 1-30000 finds no failure.
     * {@code -Dheartbeat.model.openChecks=checkNeverEarly,...} tolerates a check again.
     */
    static final String OPEN_CHECKS = "";

    private static final long STEPS = Long.getLong("heartbeat.model.steps", 1_000_000L);
    private static final int EPISODE_STEPS = Integer.getInteger("heartbeat.model.episode", 2_000);
    private static final Long ONE_SEED = Long.getLong("heartbeat.model.seed");
    private static final long BASE_SEED = Long.getLong("heartbeat.model.base", 1L);
    private static final boolean SURVEY = Boolean.getBoolean("heartbeat.model.survey");
    /** {@code -Dheartbeat.model.noCoalescing=true}: every episode without coalescing, the rest drawn as ever. */
    private static final boolean NO_COALESCING = Boolean.getBoolean("heartbeat.model.noCoalescing");
    private static final String TOLERATE = System.getProperty("heartbeat.model.tolerate", OPEN_ITEMS);
    /** {@code -Dheartbeat.model.tolerate=all}: count every violation, fail none (to measure the rate, say). */
    private static final boolean TOLERATE_ALL = TOLERATE.equals("all");
    private static final Set<String> OPEN = Set.of(System.getProperty("heartbeat.model.openChecks", OPEN_CHECKS)
            .split(",", -1));
    private static final Set<Integer> TOLERATED = TOLERATE_ALL ? Set.of() : parseItems(TOLERATE);

    private static Set<Integer> parseItems(String list) {
        Set<Integer> items = new java.util.TreeSet<>();
        for (String s : list.split(",", -1)) {
            if (!s.isBlank()) {
                items.add(Integer.parseInt(s.trim()));
            }
        }
        return items;
    }

    /** A broken promise: which check, what it saw, and the issue 26 item it is (0: not one of them). */
    static final class Violation extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String check;
        final int item;

        Violation(String check, int item, String message) {
            super(check + (item > 0 ? " [issue 26 item " + item + "]" : " [not a listed item]") + ": " + message,
                    null, false, false);
            this.check = check;
            this.item = item;
        }
    }

    @Test
    void randomSequencesKeepEveryDocumentedPromise() {
        long episodes = ONE_SEED != null ? 1 : Math.max(1, STEPS / EPISODE_STEPS);
        long started = System.nanoTime();
        long steps = 0;
        Map<String, Integer> covered = new TreeMap<>();
        Set<String> combinations = new HashSet<>();
        Map<String, List<long[]>> failures = new TreeMap<>(); // item and check -> (seed, step)
        Map<String, String> soonestMessage = new TreeMap<>();
        long tolerated = 0;
        for (long e = 0; e < episodes; e++) {
            long seed = ONE_SEED != null ? ONE_SEED : BASE_SEED + e;
            Episode episode = new Episode(seed);
            try {
                episode.run(EPISODE_STEPS);
            } catch (Violation v) {
                if (SURVEY) {
                    String key = String.format("item %3s %s", v.item == 0 ? "new" : v.item, v.check);
                    List<long[]> seen = failures.computeIfAbsent(key, k -> new ArrayList<>());
                    if (seen.isEmpty() || episode.step < seen.stream().mapToLong(x -> x[1]).min().getAsLong()) {
                        soonestMessage.put(key, v.getMessage());
                    }
                    seen.add(new long[] {seed, episode.step});
                } else {
                    fail("interaction model: seed " + seed + " (rerun with -Dheartbeat.model.seed=" + seed + "), step "
                            + episode.step + ", t=" + episode.now() / MS + " ms: " + v.getMessage() + "\n"
                            + episode.describe(), v);
                }
            } finally {
                episode.close();
            }
            steps += episode.step;
            tolerated += episode.tolerated;
            for (ModelSpec s : episode.specs) {
                for (String f : s.features) {
                    covered.merge(f, 1, Integer::sum);
                }
                combinations.add(String.join("+", s.features));
            }
            for (String f : episode.monitorFeatures) {
                covered.merge(f, 1, Integer::sum);
            }
        }
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        System.out.printf("interaction model: %,d steps in %,d episodes (seeds %d..), %,d ms (%,.0f steps/s); "
                + "%,d distinct configurations; %,d tolerated violations (items %s)%n", steps, episodes,
                ONE_SEED != null ? ONE_SEED : BASE_SEED, tookMs, steps * 1000.0 / Math.max(1, tookMs),
                combinations.size(), tolerated, TOLERATED);
        System.out.println("interaction model: configurations covered (feature: configurations): " + covered);
        if (SURVEY) {
            for (Map.Entry<String, List<long[]>> f : failures.entrySet()) {
                long[] soonest = f.getValue().get(0);
                for (long[] s : f.getValue()) {
                    soonest = s[1] < soonest[1] ? s : soonest;
                }
                StringBuilder seeds = new StringBuilder();
                for (int i = 0; i < Math.min(8, f.getValue().size()); i++) {
                    seeds.append(' ').append(f.getValue().get(i)[0]);
                }
                System.out.printf("survey: %s: %d episodes (seeds%s); soonest: seed %d at step %d: %s%n", f.getKey(),
                        f.getValue().size(), seeds, soonest[0], soonest[1], soonestMessage.get(f.getKey()));
            }
            if (!failures.isEmpty()) {
                fail("interaction model survey: failures " + failures.keySet());
            }
        }
    }

    /**
     * Model seeds whose runs Heartbeat's draws shape (a max-age jitter, a ping jitter): the episode of each
     * differs when only the draws' seed does, so that {@link #oneSeedRunsTheSameTwice} would see draws
     * that escape the seed.
     */
    private static final long[] DRAW_SENSITIVE_SEEDS = {1, 2};

    /**
     * Reruns of one seed are exact: the same seed twice gives the same trace (every line of it, hashed)
     * and the same end. Without {@link SeededRandomness} (Heartbeat drawing its own max-age jitter and
     * ping jitter) these seeds' reruns differ, as the last assertion shows with the draws of another seed.
     */
    @Test
    void oneSeedRunsTheSameTwice() {
        for (long seed : DRAW_SENSITIVE_SEEDS) {
            String first = outcome(seed, seed);
            assertEquals(first, outcome(seed, seed), "seed " + seed + " run twice");
            assertNotEquals(first, outcome(seed, seed + 1_000_000), "seed " + seed + " with other draws: "
                    + "Heartbeat's draws do not shape it, so the rerun above could not tell them escaping the seed");
        }
    }

    /**
     * Seeds beyond the default run's that once failed, rerun exactly (reruns are exact, see {@link
     * #oneSeedRunsTheSameTwice}): 1675, a PING_TIMEOUT after 1 unanswered ping of 3 under {@code ANY_INBOUND} and an
     * action budget: a read after the latest ping did not end the streak; 1703, a READER_IDLE close with no ping since
     * the last read: the re-check of a held close carried the ping the worker decided during the hold, and the event
     * loop dropped the ping when it found the close no longer due; 1678, an overload close 100 ms late: a read raced
     * the decided close, and the worker looked again only after the re-check's retry, not at the new scaled deadline (8
     * ms); 8941, an overload close late (item 108): a close decided under a factor of 0.4 was dropped when the factor
     * rose to 0.7 in the same instant, and the worker looked again only after the re-check's retry, 37 ms past the
     * deadline under 0.7; 8116, an overload close late (item 108): a read raced an all-idle close, and the worker
     * looked again a scaled all-idle timeout later, after the writer-idle deadline, which the read had not moved;
     * 11427, a PING_TIMEOUT close late during a max-age grace (item 109): decided while the veto held the max-age
     * close, it was dropped as the re-check of a held ping timeout whose streak a newer ping had settled, then asked
     * afresh once the goodbye ended the episode and held another maxCloseHold; 12111, the close at a grace's end held
     * past maxCloseHold (item 104): each reconfiguration began the veto's episode afresh, and four switches during the
     * holds kept the channel open 2.7 s after the grace's end; 9169, 7622, 9435, 10025, 11275 (item 1, ping-timeout
     * closes held by the veto, up to 0.25 s late): an answer during the hold was seen only at the hold's end, so the
     * next ping waited for it (9169: interval 31 ms, hold 115 ms); the re-check that found the held close answered
     * dropped the ping handed over with it (9435); and the close of the ping written during a hold joined that hold,
     * then was dropped at its re-check as the old close, and asked afresh only after it (11275; 10025, a write stall's
     * hold: a whole maxCloseHold later); 4965, 4913, 5686, 7198, 11692, 12263 (placed as item 12, a max age counted
     * from a reconfigure: late ping-timeout closes, fixed with 10025 and 11275); 10138 (placed as item 12: an overload
     * close, its next look 22 ms after its scaled deadline): a close decided under a factor of 0.5 was found not due by
     * the event loop under 0.6, set in the same millisecond, and looked at again only a scaled timeout later.
     */
    private static final long[] PINNED_SEEDS = {1675, 1703, 1678, 8941, 8116, 11427, 12111, 9169, 7622, 9435,
        10025, 11275, 4965, 4913, 5686, 7198, 11692, 12263, 10138};

    /**
     * Seeds beyond the default run's that once failed with the draws of today's episodes (answered reads, coalescing),
     * rerun as the default run runs them: 5450, a second READER_IDLE 43 ms after the first under a readerIdle of 55
     * ms, with coalescing and an action budget of 50/s: a verdict of the spell before a read waited 85 ms for the
     * budget, and was handed over once the new spell had lasted a timeout, beside the worker's own verdict for it;
     * 19976, an all-idle close 70 ms late: a tracked write, completed unseen by a goodbye's flush while a configuration
     * that tracks no writes was in force, was stamped at the first close verdict after a switch back
     * ({@code PromiseRegressionTest#aWriteCompletedUnseenBeforeAReconfigurationIsNoLaterActivity}); 20331 (item 1), a
     * PING_TIMEOUT close 4 ms beyond its bound: a reader-idle close decided while the veto held another looked again
     * only at the hold's end, so an answer during the hold was seen 353 ms later (interval 74 ms), and the next ping
     * with it.
     */
    private static final long[] PINNED_DRAWN_SEEDS = {5450, 19976, 20331};

    @Test
    void pinnedSeedsKeepEveryDocumentedPromise() {
        for (long seed : PINNED_SEEDS) {
            String outcome = outcome(seed, seed, false);
            assertTrue(outcome.endsWith(", passed"), "seed " + seed + ": " + outcome);
        }
        for (long seed : PINNED_DRAWN_SEEDS) {
            String outcome = outcome(seed, seed, true);
            assertTrue(outcome.endsWith(", passed"), "seed " + seed + " (drawn as today): " + outcome);
        }
    }

    private String outcome(long seed, long drawSeed) {
        return outcome(seed, drawSeed, false);
    }

    /**
     * The outcome of the model seed {@code seed} with Heartbeat's draws from {@code drawSeed}'s: its trace and end;
     * with answered reads and coalescing drawn if {@code today} (as the default run draws), else as the seeds found
     * before those were drawn.
     */
    private String outcome(long seed, long drawSeed, boolean today) {
        Episode episode = new Episode(seed, drawSeed, today, false);
        String end;
        try {
            episode.run(EPISODE_STEPS);
            end = "passed";
        } catch (Violation v) {
            end = v.getMessage();
        } finally {
            episode.close();
        }
        return "steps " + episode.step + ", trace lines " + episode.notes + ", trace hash " + episode.fingerprint
                + ", tolerated " + episode.tolerated + ", " + end;
    }

    /**
     * Heartbeat's draws for one episode ({@link Randomness}), from its seed: the max-age jitter and first
     * ping tokens in the order the channels draw them, and per handler a number for its ping jitter share,
     * drawn at its first use (the worker's order of checks, itself fixed by the seed).
     */
    static final class SeededRandomness implements Randomness {
        private final Random draws;
        private final IdentityHashMap<HeartbeatHandler, Integer> hashes = new IdentityHashMap<>();

        SeededRandomness(long seed) {
            draws = new Random(Long.rotateLeft(seed, 32) ^ 0x2545F4914F6CDD1DL); // a stream apart from the model's
        }

        @Override
        public double ageJitterDraw() {
            return draws.nextDouble();
        }

        @Override
        public long firstToken() {
            return draws.nextLong();
        }

        @Override
        public int channelHash(HeartbeatHandler handler) {
            return hashes.computeIfAbsent(handler, h -> draws.nextInt());
        }
    }

    // ------------------------------------------------------------------ one episode

    /** One monitor, its channels and their model, driven by one seed. */
    final class Episode implements ModelSpec.Asker {
        final Random rnd;
        final ManualTicker ticker;
        final HeartbeatMonitor monitor;
        final long origin;
        final int budget;
        /**
         * The monitor's coalescing: its {@code maxCoalescing} (0: off, as in every episode before it was drawn), its
         * grid's phase and the most checks a grid point takes ({@code gridBurst}: a few channels fill a point only
         * if it takes one to three), and whether hand-offs are lazy. Drawn from a stream of their own (as
         * {@link #echoRnd}), so that the seeds found before keep their steps; off in those seeds' reruns.
         */
        final long coalescing;
        final int burst;
        final long phase;
        final boolean lazy;
        /**
         * The handlers' executors of their own ({@code pipeline.addLast(executor, name, handler)}), none, one or two,
         * shared by the channels whose handler is put on one (drawn per channel), and the stream of those draws, a
         * stream apart (as {@link #echoRnd}); none in the reruns of the seeds found before they were drawn.
         */
        final ManualExecutor[] executors;
        final Random executorRnd;
        /**
         * The monitor's coarse write clock ({@code coarseWriteClock}; 0: off): its resolution, what a check on the
         * writes may come later ("up to resolution later than with ticker readings, never sooner"), added to every
         * action's slack. Drawn from a stream of its own (as {@link #echoRnd}); off in the reruns of the seeds found
         * before it was drawn.
         */
        final long coarseClock;
        /**
         * The worker's late spells: the longest one (0: none, the worker runs every millisecond, as in the reruns of
         * the seeds found before spells were drawn), drawn with the spells from a stream of their own (as
         * {@link #echoRnd}). In a spell the model's time moves and the event loops run, but the worker runs no cycle
         * (a descheduled worker thread, or a hosting loop busy elsewhere); a spell starts only twice the longest
         * spell after the last one ended, so that an action meets at most one spell and its deferral (seed 4267:
         * three spells back to back made a close late by all three). Drawn in the default run only (as the
         * executors of handlers' own): the reruns of the seeds found before replay their episodes. What it proves:
         * a late worker makes actions late by at most twice the spell (the spell, and a check deferred as a stall
         * looks again after as long, {@code HeartbeatMonitor.Builder#stallThreshold}), added to every action's
         * slack, and never early, whatever it stamped meanwhile (a coarse write clock's lease runs out in a spell:
         * {@code CoarseClock}'s late intervals; a mutant that judges such stamps as themselves fails 27 of 500
         * episodes). Found when first drawn: seed 150, a check deferred as a stall was placed at a drain slot that
         * came in the spell, in the past, and expired again a cycle later (fixed, {@code ComposedPoliciesTest});
         * seed 139, a reader-idle close without a ping, both due at once after a spell (documented:
         * {@code closeWhenReaderIdle}); seed 4562, idle events: one for the timeouts that passed in a spell.
         */
        final long workerLateMax;
        final Random lateRnd;
        /** The end of the worker's latest late spell (by {@link #now}). */
        long workerLateUntil = NONE;
        /**
         * What the model allows an action beyond its deadline: {@link #SLACK} plus the widest coalescing window of
         * the episode's configurations ({@code maxCoalescing}: "the most an idle channel's action may be delayed").
         */
        long slack = SLACK;

        /**
         * What the model allows an action of a channel configured {@code s} beyond its deadline: {@link #SLACK} plus
         * its coalescing window ("the largest power of two of nanoseconds at most 1/64 of its shortest timeout",
         * capped by the monitor's {@code maxCoalescing}).
         */
        long slack(ModelSpec s) {
            return SLACK + window(s) + coarseClock + 2 * workerLateMax;
        }

        /** The coalescing window of a channel configured {@code s}: what each look the worker takes may be late. */
        long window(ModelSpec s) {
            long window = Math.min(s.config.plan.coalescingNanos, coalescing);
            return window <= 1 ? 0 : window;
        }
        final List<ModelSpec> specs = new ArrayList<>();
        final Set<String> monitorFeatures = new java.util.TreeSet<>();
        final List<Chan> chans = new ArrayList<>();
        final List<Chan> all = new ArrayList<>();
        final IdentityHashMap<Channel, Chan> byChannel = new IdentityHashMap<>();
        final ArrayDeque<String> trace = new ArrayDeque<>();
        int step;
        long tolerated;
        /** The overload factor in force ({@code reduceIdleTimeouts}) and since when. */
        double factor = 1;
        long factorSince;
        boolean overloadEver;
        /** Close events fired while the factor was below 1 (an overload close is one of them). */
        long closesUnderOverload;
        /** Checks switched off after a tolerated violation of theirs, for the rest of the episode. */
        final Set<String> muted = new HashSet<>();
        /** The first violation found and not tolerated, thrown at the next safe point. */
        Violation found;
        /** A hash of every line of the trace, and their number: what {@link #oneSeedRunsTheSameTwice} compares. */
        long fingerprint = 1;
        long notes;
        /** The channel whose read races the next event loop turn (after the worker's cycle, before the actions). */
        Chan raceRead;
        /**
         * The channel whose answered read races the next event loop turn: the actions the worker's cycle handed
         * over run inside the batch's end, after the answer's flush (an embedded loop runs its tasks where it is
         * told to). Drawn, as every answered read, from {@link #echoRnd}.
         */
        Chan raceEcho;
        /**
         * The draws of the answered reads ({@link #echo}), a stream apart from {@link #rnd}, so that the episodes
         * of the seeds found before answered reads existed draw the same steps; null in those seeds' reruns
         * ({@link #pinnedSeedsKeepEveryDocumentedPromise}), which replay their episodes exactly, without any.
         */
        final Random echoRnd;
        int nextChan;

        Episode(long seed) {
            this(seed, seed, true, true);
        }

        /**
         * The episode of {@code seed}, with Heartbeat's draws from {@code drawSeed}'s (the same, but in a test), with
         * answered reads and coalescing drawn if {@code echoes}, and the handlers' executors of their own if
         * {@code ownExecutors}.
         */
        Episode(long seed, long drawSeed, boolean echoes, boolean ownExecutors) {
            rnd = new Random(seed);
            echoRnd = echoes ? new Random(seed ^ 0x5DEECE66DL) : null;
            ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(rnd.nextInt(20)));
            origin = ticker.nanoTime();
            int[] budgets = {0, 0, 0, 5, 50, 1_000};
            budget = budgets[rnd.nextInt(budgets.length)];
            // Mixed by a multiply: the first draws of Randoms seeded 1, 2, 3, ... (or those xor a constant) agree.
            Random gridRnd = echoes ? new Random(seed * 0x9E3779B97F4A7C15L) : null;
            int g = gridRnd == null ? 0 : gridRnd.nextInt(4);
            coalescing = g == 0 || NO_COALESCING ? 0
                    : g == 1 ? 1L << 21 : HeartbeatMonitor.DEFAULT_MAX_COALESCING_NANOS;
            int[] bursts = {1, 2, 3, CheckGrid.BURST};
            burst = gridRnd == null ? CheckGrid.BURST : bursts[gridRnd.nextInt(bursts.length)];
            phase = gridRnd == null ? 0 : gridRnd.nextLong();
            lazy = coalescing > 0 && gridRnd.nextInt(3) == 0;
            executorRnd = ownExecutors ? new Random(seed * 0xC2B2AE3D27D4EB4FL) : null;
            executors = new ManualExecutor[executorRnd == null ? 0 : executorRnd.nextInt(3)];
            for (int i = 0; i < executors.length; i++) {
                executors[i] = new ManualExecutor(this::now);
            }
            Random clockRnd = echoes ? new Random(seed * 0xD6E8FEB86659FD93L) : null;
            long[] resolutions = {0, 0, 8 * MS, 32 * MS}; // at least four ticks of 2^20 ns
            coarseClock = clockRnd == null ? 0 : resolutions[clockRnd.nextInt(resolutions.length)];
            lateRnd = echoes && ownExecutors ? new Random(seed * 0xA24BAED4963EE407L) : null;
            long[] spells = {0, 0, 40 * MS, 250 * MS};
            workerLateMax = lateRnd == null ? 0 : spells[lateRnd.nextInt(spells.length)];
            monitor = HeartbeatMonitor.builder().manual(new SeededRandomness(drawSeed)).ticker(ticker)
                    .maxCoalescing(Duration.ofNanos(coalescing)).gridPhase(phase).gridBurst(burst)
                    .lazyHandOffs(lazy).actionBudget(budget).coarseWriteClock(Duration.ofNanos(coarseClock)).build();
            monitorFeatures.add(coarseClock == 0 ? "writes stamped with ticker readings"
                    : "a coarse write clock");
            monitorFeatures.add(workerLateMax == 0 ? "a worker on time" : "a worker late at times");
            monitorFeatures.add(budget == 0 ? "no actionBudget" : "actionBudget");
            monitorFeatures.add(executors.length == 0 ? "handlers on their channel's loop"
                    : executors.length + " executor(s) of handlers' own");
            monitorFeatures.add(coalescing == 0 ? "no coalescing" : "coalescing up to 2^"
                    + Long.numberOfTrailingZeros(coalescing) + " ns" + (burst < CheckGrid.BURST ? ", gridBurst " + burst
                    : "") + (lazy ? ", lazyHandOffs" : ""));
            List<String> refusals = new ArrayList<>();
            int n = 4 + rnd.nextInt(6);
            while (specs.size() < n) {
                ModelSpec s = ModelSpec.draw(specs.size(), rnd, this, refusals);
                checkBuildRefusesWhatWouldBeIgnored(refusals);
                if (s != null) {
                    specs.add(s);
                    slack = Math.max(slack, slack(s));
                }
            }
            int channels = 2 + rnd.nextInt(5);
            for (int i = 0; i < channels; i++) {
                open();
            }
        }

        long now() {
            return ticker.nanoTime() - origin;
        }

        void note(String s) {
            if (trace.size() == (ONE_SEED != null ? 1_000_000 : 40)) {
                trace.removeFirst();
            }
            String line = step + " t=" + now() / MS + "ms " + s;
            trace.addLast(line);
            fingerprint = fingerprint * 31 + line.hashCode();
            notes++;
        }

        String describe() {
            StringBuilder b = new StringBuilder("monitor: actionBudget ").append(budget).append(", overload factor ")
                    .append(factor).append(", maxCoalescing ")
                    .append(coalescing).append(" ns, gridBurst ").append(burst).append(", grid phase ").append(phase)
                    .append(", lazyHandOffs ").append(lazy).append(", coarseWriteClock ").append(coarseClock)
                    .append(" ns, worker late up to ").append(workerLateMax / MS).append(" ms")
                    .append("\nconfigurations:\n");
            for (ModelSpec s : specs) {
                b.append("  ").append(s).append(" veto=").append(s.veto).append(" extend=").append(s.extend / MS)
                        .append("ms\n");
            }
            b.append("channels:\n");
            for (Chan c : all) {
                b.append("  ").append(c).append('\n');
            }
            b.append("last steps:\n");
            for (String t : trace) {
                b.append("  ").append(t).append('\n');
            }
            return b.toString();
        }

        void close() {
            settle();
            for (Chan c : all) {
                c.ch.finishAndReleaseAll();
            }
            monitor.close();
        }

        // -------------------------------------------------------------- driving

        void run(int steps) {
            rethrow(); // the build checks of the generated configurations
            for (step = 0; step < steps; step++) {
                act();
                afterStep(true);
            }
            finish();
        }

        private void act() {
            boolean spellOver = workerLateUntil == NONE || now() - workerLateUntil >= 2 * workerLateMax;
            if (workerLateMax > 0 && spellOver && lateRnd.nextInt(40) == 0) {
                long ms = 1L + lateRnd.nextInt((int) (workerLateMax / MS));
                workerLateUntil = now() + ms * MS;
                note("the worker is late for the next " + ms + " ms");
            }
            int r = rnd.nextInt(1_000);
            if (r < 420) {
                int p = rnd.nextInt(100);
                int ms = p < 80 ? 1 + rnd.nextInt(10) : p < 97 ? 10 + rnd.nextInt(200) : 200 + rnd.nextInt(1_300);
                note("advance " + ms + " ms");
                advance(ms);
                return;
            }
            if (chans.isEmpty()) {
                open();
                return;
            }
            Chan c = chans.get(rnd.nextInt(chans.size()));
            if (r < 520) {
                int e = echoRnd == null ? 4 : echoRnd.nextInt(8);
                if (e < 2) {
                    echo(c, e == 1, false);
                } else if (e == 2) {
                    note("race an answered read of " + c.id + " with the next actions");
                    raceEcho = c;
                    advance(1);
                } else {
                    read(c, "DATA");
                }
            } else if (r < 580) {
                read(c, LineProbe.PONG);
            } else if (r < 600) {
                note("race a read of " + c.id + " with the next actions");
                raceRead = c;
                advance(1);
            } else if (r < 650) {
                write(c, rnd.nextBoolean(), true);
            } else if (r < 690) {
                write(c, rnd.nextBoolean(), false);
            } else if (r < 720) {
                flush(c);
            } else if (r < 750) {
                writability(c);
            } else if (r < 800) {
                reconfigure(c, specs.get(rnd.nextInt(specs.size())));
            } else if (r < 850) {
                c.flag = !c.flag;
                if (!c.flag) {
                    c.episodeActivity = now(); // the work in flight ended: the application says so
                }
                note("veto flag of " + c.id + " -> " + c.flag);
            } else if (r < 856) {
                drain(Duration.ofMillis(rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(2_000)));
            } else if (r < 868) {
                overload(rnd.nextBoolean() ? 1 : 0.2 + rnd.nextInt(7) / 10.0);
            } else if (r < 876) {
                userClose(c);
            } else if (r < 881) {
                removeHandler(c);
            } else if (r < 900 && chans.size() < 8) {
                open();
            } else {
                note("advance 1 ms");
                advance(1);
            }
        }

        @SuppressWarnings("deprecation") // Netty 4.2 deprecates addLast with an executor group; 4.1 has no successor
        Chan open() {
            ModelSpec s = specs.get(rnd.nextInt(specs.size()));
            Chan c = new Chan(nextChan++, s, now());
            c.startedUnderOverload = factor < 1;
            ChannelHandler handler = monitor.newHandler(s.config);
            c.handler = handler;
            c.ch = new EmbeddedChannel();
            byChannel.put(c.ch, c);
            c.ch.closeFuture().addListener(f -> closed(c));
            ManualExecutor executor = executors.length == 0 || executorRnd.nextInt(3) == 0 ? null
                    : executors[executorRnd.nextInt(executors.length)];
            c.ownExecutor = executor != null;
            if (executor != null) {
                c.completer = new LoopCompleter();
                c.ch.pipeline().addLast("completer", c.completer);
            }
            c.ch.pipeline().addLast(executor, "heartbeat", handler).addLast("recorder", new Recorder(c));
            chans.add(c);
            all.add(c);
            settle(); // the handler is added on its executor
            cycle();
            settle(); // what that cycle handed a handler's own executor runs before the next step reaches it
            note("open " + c.id + " with " + s + (executor == null ? "" : ", its handler on an executor of its own"));
            return c;
        }

        void advance(long ms) {
            for (long i = 0; i < ms; i++) {
                ticker.advance(MS);
                int work = cycle();
                if (work >= 0) {
                    checkNoEntryExpiredTwicePerDueTime(work);
                }
                Chan racing = raceRead;
                raceRead = null;
                if (racing != null && racedOnOwnExecutor(racing)) {
                    read(racing, "DATA"); // the worker judged before this read; its actions run after it
                }
                Chan echoing = raceEcho;
                raceEcho = null;
                if (echoing != null && racedOnOwnExecutor(echoing)) {
                    echo(echoing, echoRnd.nextBoolean(), true); // the worker judged before; its actions run inside
                }
                settle();
                for (int k = 0; k < chans.size(); k++) {
                    Chan c = chans.get(k);
                    c.ch.runPendingTasks();
                    drainOutbound(c);
                }
                if (i % 16 == 15) {
                    checkDueClosesHappenInTheirBound();
                }
                rethrow();
            }
        }

        /** The worker's cycle, unless it is late ({@link #workerLateMax}): the work it did, or -1 if it ran none. */
        int cycle() {
            if (now() < workerLateUntil) {
                return -1;
            }
            return monitor.runOnce();
        }

        /**
         * A read racing the actions of the worker's cycle, on a handler on an executor of its own: the read reaches
         * the executor behind the actions that cycle queued there, so they run before it (a handler on the channel's
         * loop reads first, as the race is drawn).
         *
         * @return whether the channel is still open to read
         */
        boolean racedOnOwnExecutor(Chan c) {
            if (c.ownExecutor && c.ch.isOpen()) {
                settle();
                drainOutbound(c); // what they wrote, before the read
            }
            return c.ch.isOpen();
        }

        void read(Chan c, String msg) {
            note("read " + msg + " on " + c.id);
            c.ch.writeInbound(msg); // read + readComplete: one read batch
            settle();
            readDone(c, msg);
        }

        /**
         * A read of data that the application answers within its read batch, as a request and its response: the
         * answer is written while reading (with the void promise if {@code voidPromise}) and flushed as the batch
         * ends ({@link Recorder#channelReadComplete}), where Heartbeat stamps the read and the answer with one clock
         * read; if {@code actInside}, the channel's pending actions run there too, after the flush.
         */
        void echo(Chan c, boolean voidPromise, boolean actInside) {
            note("read DATA on " + c.id + " and answer it" + (voidPromise ? " (void promise)" : "")
                    + (actInside ? ", the pending actions run inside the batch's end" : ""));
            c.answer = voidPromise ? Chan.ANSWER_VOID : Chan.ANSWER;
            c.actInside = actInside;
            try {
                c.ch.writeInbound("DATA");
                settle(); // the answer is written while the handler's executor passes the read on
            } finally {
                c.answer = Chan.NO_ANSWER;
            }
            if (c.answered) {
                c.answered = false;
            } else { // an application that answers nothing: a handler in front consumed the read (an answer to a ping)
                readDone(c, "DATA");
            }
        }

        /** Inside an answered read's batch end, after the flush: the model learns the read and the answer. */
        void answered(Chan c) {
            c.answered = true;
            readDone(c, "DATA");
            flushed(c);
            c.lastWriteSure = now();
            if (c.actInside) {
                c.ch.runPendingTasks(); // the verdicts of the worker's cycle, acted on before the batch ends
                drainOutbound(c);
            }
        }

        /** The model's side of a read batch of {@code msg} on {@code c}. */
        void readDone(Chan c, String msg) {
            long t = now();
            c.lastRead = t;
            c.episodeActivity = t;
            // The probe matches answers in order under every ping configuration (LineProbe), whatever its ack
            // mode: an answer settles the oldest waiting ping. A read under ANY_INBOUND settles the pings for the
            // policy but answers none of them in the protocol: the peer still owes an answer to each, and the
            // next answers are matched to the oldest (protocols-and-probes.md; the model once emptied the queue
            // at any read under ANY_INBOUND, then took later answers to those pings for answers to newer ones:
            // seed 300). Under an idle configuration no answer is looked at.
            boolean answer = c.spec.pings() && LineProbe.PONG.equals(msg) && c.unanswered > 0;
            if (answer) {
                c.unanswered--;
            }
            if (c.spec.ack == AckMode.ANY_INBOUND) {
                c.pingsSinceSettle = 0; // "any inbound read answers it"
            } else if (answer && c.unanswered == 0) {
                // Matched: the latest is settled (and the pings missed in a row forgiven) by its own answer; a late
                // answer to an older ping leaves the misses counted (protocols-and-probes.md: "in the matched
                // modes the miss already counted stands").
                c.pingsSinceSettle = 0;
            }
            c.pingsSinceRead = 0;
            drainOutbound(c);
        }

        void write(Chan c, boolean voidPromise, boolean flush) {
            note((flush ? "write+flush" : "write") + (voidPromise ? " (void promise)" : "") + " on " + c.id);
            if (flush) {
                if (voidPromise) {
                    c.ch.writeAndFlush("OUT", c.ch.voidPromise());
                } else {
                    c.ch.writeAndFlush("OUT");
                }
                settle();
                flushed(c);
                c.lastWriteSure = now();
            } else {
                if (voidPromise) {
                    c.ch.write("OUT", c.ch.voidPromise());
                } else {
                    c.ch.write("OUT");
                }
                settle();
                if (!c.pending) {
                    c.pending = true;
                    c.pendingSince = now();
                }
                c.pendingWriteConfig = c.reconfigures;
            }
            drainOutbound(c);
        }

        void flush(Chan c) {
            note("flush " + c.id);
            c.ch.flush();
            settle();
            if (c.pending) {
                if (c.pendingWriteConfig == c.reconfigures) { // a write of the batch came under this configuration
                    c.lastWriteSure = now();
                }
                flushed(c);
            }
            drainOutbound(c);
        }

        /** Everything written left the outbound buffer now: a completed write, and progress. */
        void flushed(Chan c) {
            long t = now();
            c.pending = false;
            c.lastWrite = t;
            c.lastAppWrite = t;
            c.lastProgress = t;
            c.episodeActivity = t;
        }

        void writability(Chan c) {
            boolean unwritable = !c.unwritable;
            note("writability of " + c.id + " -> " + (unwritable ? "unwritable" : "writable"));
            c.ch.unsafe().outboundBuffer().setUserDefinedWritability(1, !unwritable);
            if (unwritable) {
                c.spellStart = now();
            } else if (c.askedFor == CloseReason.UNWRITABLE) {
                // The close held for UNWRITABLE is no longer due: its re-check finds it writable and asks no one.
                // (A close that joined the hold silently is not seen here: the check is only weaker for it.)
                c.recheckBy = NONE;
            }
            c.unwritable = unwritable;
            c.ch.runPendingTasks();
            settle();
        }

        void reconfigure(Chan c, ModelSpec to) {
            note("reconfigure " + c.id + " from #" + c.spec.id + " to " + to);
            if (!c.handlerPresent) {
                try {
                    monitor.reconfigure(c.ch, to.config);
                    violate("checkNothingAfterRemoval", 0, c, "reconfigure of a channel without a Heartbeat handler "
                            + "was accepted (documented: IllegalArgumentException)");
                } catch (IllegalArgumentException expected) {
                    // HeartbeatMonitor#reconfigure: "if the channel is open and its pipeline has no handler"
                }
                return;
            }
            boolean applied = monitor.reconfigure(c.ch, to.config);
            if (!applied) {
                return;
            }
            long t = now();
            c.reconfigured(to, t);
            c.startedUnderOverload = factor < 1;
            c.ch.runPendingTasks();
            settle(); // a handler on an executor of its own is reconfigured there
        }

        void drain(Duration window) {
            note("drain over " + window.toMillis() + " ms");
            long t = now();
            monitor.drain(window);
            int live = 0;
            for (Chan c : chans) {
                live += c.watched() ? 1 : 0;
            }
            for (Chan c : chans) {
                if (c.watched()) {
                    // HeartbeatMonitor#drain: "channel i of n is closed about window * (i + 1) / n after [the
                    // worker's next cycle]"; "closed once the goodbye is written (at most 1 s later)"; a drain
                    // that finds another under way re-spreads every channel not yet closed over the new window.
                    c.drainBy = t + window.toNanos() + GOODBYE_WAIT + slack + budgetSlack(live);
                    c.drainAt = t;
                    c.reconfiguredSinceDrain = false;
                }
            }
            monitorFeatures.add("drain");
        }

        void overload(double f) {
            note("reduceIdleTimeouts(" + f + ")");
            monitor.reduceIdleTimeouts(f);
            if (f > factor) {
                // An idle close held while the timeouts were reduced may no longer be due: its re-check finds
                // the channel within its timeout and asks no one. (The model does not tell an overload close
                // from a policy close of the same reason, so the check is only weaker for those.)
                for (Chan c : chans) {
                    if (c.askedFor == CloseReason.READER_IDLE || c.askedFor == CloseReason.WRITER_IDLE
                            || c.askedFor == CloseReason.ALL_IDLE) {
                        c.recheckBy = NONE;
                    }
                }
            }
            if (f != factor) {
                factor = f;
                factorSince = now();
            }
            if (f < 1) {
                overloadEver = true;
                monitorFeatures.add("overload");
            }
        }

        void userClose(Chan c) {
            note("user closes " + c.id);
            c.userClosed = true;
            c.ch.close();
            c.ch.runPendingTasks();
            settle();
        }

        void removeHandler(Chan c) {
            if (!c.handlerPresent || !c.ch.isOpen()) {
                return;
            }
            note("remove the handler of " + c.id);
            c.ch.pipeline().remove(c.handler);
            c.handlerPresent = false;
            c.ch.runPendingTasks();
            settle();
        }

        /**
         * Runs what waits on the handlers' executors of their own, and on the channels' loops, until nothing does:
         * a call that reaches a handler on its executor from the channel's loop (or the test's thread) waits there,
         * as it would for a thread of a {@code DefaultEventExecutorGroup}, and runs before the step ends, in the
         * same virtual moment. Nothing in an episode without such executors.
         */
        void settle() {
            if (executors.length == 0) {
                return;
            }
            boolean waiting;
            do {
                for (ManualExecutor x : executors) {
                    x.runAll();
                }
                waiting = false;
                for (Chan c : all) {
                    c.ch.runPendingTasks();
                    waiting |= c.completer != null && c.completer.completeTaken();
                }
                for (ManualExecutor x : executors) {
                    waiting |= x.hasTasks();
                }
            } while (waiting);
        }

        /** What Heartbeat wrote: pings and goodbyes are checked; the application's own writes are dropped. */
        void drainOutbound(Chan c) {
            boolean completedByGoodbye = false;
            for (Object msg; (msg = c.ch.readOutbound()) != null; ) {
                if (LineProbe.PING.equals(msg)) {
                    note(c.id + " was pinged");
                    checkNeverEarly(c, "ping", null);
                    c.pingsSinceSettle++;
                    c.unanswered++;
                    c.lastPingWrite = now();
                    c.pingsSinceRead++;
                    c.pending = false; // the ping's flush flushed what was waiting too
                    c.lastProgress = now();
                    if (c.askedFor == CloseReason.WRITE_STALL) {
                        c.recheckBy = NONE; // the held stall is over: its re-check finds progress and asks no one
                    }
                } else if (msg instanceof String s && s.startsWith(LineProbe.BYE)) {
                    c.byeFrames++;
                    checkAtMostOneCloseAndGoodbye(c);
                    if (c.pending) {
                        // The goodbye's flush flushed the application's writes waiting before it: they complete
                        // now, and count as writes, as IdleStateHandler counts a write at its completion. The
                        // goodbye itself is Heartbeat's own, written from its handler's context, and is no
                        // write activity (lifecycle-guards.md; family 109, seed 207: the model missed this).
                        if (c.ownExecutor) {
                            // A handler on an executor of its own learns of a completion on the channel's loop when
                            // the loop's notice reaches its executor: after the rest of the batch that said the
                            // goodbye, whose actions (a ping, seed 431) it decided without it, as any handler on
                            // another thread than the socket's would.
                            completedByGoodbye = true;
                            c.pending = false;
                        } else {
                            completedByGoodbye(c);
                        }
                    }
                }
            }
            if (completedByGoodbye) {
                completedByGoodbye(c);
            }
        }

        /** The application's writes waiting before a goodbye completed with its flush. */
        private void completedByGoodbye(Chan c) {
            if (c.pendingWriteConfig == c.reconfigures) {
                c.lastWriteSure = now();
            }
            flushed(c);
        }

        void closed(Chan c) {
            if (c.closedAt == NONE) {
                c.closedAt = now();
            }
        }

        /** The budget's documented deferral: "by at most (actions waiting) / perSecond" (actionBudget). */
        long budgetSlack(int live) {
            return budget == 0 ? 0 : TimeUnit.SECONDS.toNanos(3L * (live + 2)) / budget + 10 * MS;
        }

        void afterStep(boolean refill) {
            for (Chan c : new ArrayList<>(chans)) {
                if (c.tainted && c.ch.isOpen() && !c.userClosed) {
                    userClose(c); // a tolerated failure: the channel leaves, so that it does not fail again
                }
            }
            forgetClosed();
            checkDueClosesHappenInTheirBound();
            checkVetoAskedAgainAtExtensionEnd();
            HeartbeatStats stats = monitor.stats();
            checkNoStallRecheck(stats);
            checkCountersAgree(stats);
            rethrow();
            if (refill && chans.size() < 2) {
                open();
                forgetClosed(); // a handler's own executor ran the cycle's actions for the others as it opened
            }
        }

        /** The channels that closed leave the step's choice. */
        void forgetClosed() {
            chans.removeIf(c -> {
                if (!c.ch.isOpen()) {
                    checkHeartbeatClosesSayWhy(c);
                    leftSinceLastCycle++; // its cancel request may still be on its way to the worker
                    return true;
                }
                return false;
            });
        }

        /** The end of an episode: every channel closes; nothing may be left behind. */
        void finish() {
            for (Chan c : new ArrayList<>(chans)) {
                userClose(c);
            }
            afterStep(false);
            leftSinceLastCycle += chans.size();
            chans.clear();
            advance(2_000); // the pacer and any retry find nothing left to do
            checkNothingRetainedAfterClose();
            rethrow();
        }

        // -------------------------------------------------------------- the veto (called by Heartbeat)

        @Override
        public CloseDecision ask(ModelSpec spec, Channel channel, CloseReason reason) {
            Chan c = byChannel.get(channel);
            note("veto of " + c.id + " asked for " + reason);
            if (reason == CloseReason.DRAIN || reason == CloseReason.PING_ABUSE) {
                violate("checkNeverEarly", 0, c, "CloseVeto: asked for " + reason + ", which it is never asked for");
            }
            checkNeverEarly(c, "veto asked", reason);
            c.asked(now());
            c.askedFor = reason;
            CloseDecision d = switch (spec.veto) {
                case CLOSE_NOW -> CloseDecision.CLOSE_NOW;
                case EXTEND_WHILE_FLAG -> c.flag ? CloseDecision.extend(Duration.ofNanos(spec.extend))
                        : CloseDecision.PROCEED;
                case HOLD_ALWAYS -> CloseDecision.extend(Duration.ofNanos(spec.extend));
                default -> CloseDecision.PROCEED;
            };
            if (d.delay().toNanos() > 0) {
                c.extended(now(), d.delay().toNanos());
            }
            return d;
        }

        @Override
        public boolean busy(ModelSpec spec, Channel channel) {
            Chan c = byChannel.get(channel);
            note("holdWhile of " + c.id + " asked: " + c.flag);
            c.asked(now());
            if (c.flag) {
                c.extended(now(), Guards.HOLD_RECHECK_NANOS);
            }
            return c.flag;
        }

        // -------------------------------------------------------------- events Heartbeat fires

        void onEvent(Chan c, Object evt) {
            if (!c.handlerPresent) {
                violate("checkNothingAfterRemoval", 0, c, "Heartbeat fired " + evt + " after its handler was removed");
            }
            if (evt instanceof IdleStateEvent idle) {
                int kind = kindOf(idle.state());
                note(c.id + " got " + idle.state());
                checkNeverEarly(c, "idle event", null, kind);
                c.eventFired(kind, now());
            } else if (evt instanceof HeartbeatGoodbyeEvent bye) {
                note(c.id + " got " + bye);
                c.goodbyeEvents++;
                c.goodbyeReasons.add(bye.reason());
                checkAtMostOneCloseAndGoodbye(c);
                checkNeverEarly(c, "goodbye", bye.reason());
                if (c.goodbyeEvents == 1) {
                    c.goodbyeAt = now();
                    c.goodbyeGrace = bye.grace().toNanos();
                }
                if (c.askedFor == bye.reason()) {
                    c.recheckBy = NONE; // the held close went ahead (its hold's bound reached): no one is asked again
                }
            } else if (evt instanceof HeartbeatCloseEvent close) {
                note(c.id + " got " + close);
                c.closeEvents++;
                c.closeReasons.add(close.reason());
                c.closeEventAt = now();
                if (factor < 1) {
                    closesUnderOverload++;
                }
                checkAtMostOneCloseAndGoodbye(c);
                checkNeverEarly(c, "close", close.reason());
                checkVetoAskedBeforeClose(c, close.reason());
            }
        }

        /** The model's index of an idle kind: reader 0, writer 1, all 2. */
        private int kindOf(io.netty.handler.timeout.IdleState state) {
            return switch (state) {
                case READER_IDLE -> 0;
                case WRITER_IDLE -> 1;
                case ALL_IDLE -> 2;
            };
        }

        // -------------------------------------------------------------- the checks

        /**
         * Never early (DESIGN property 1; each rule's Javadoc): no event, ping, goodbye or close, and no
         * veto asked about a close, before the rule's deadline under the configuration in force, with
         * idleness measured afresh from a reconfigure ({@code HeartbeatMonitor#reconfigure}: "idleness is
         * then measured from now").
         */
        void checkNeverEarly(Chan c, String what, CloseReason reason) {
            checkNeverEarly(c, what, reason, -1);
        }

        void checkNeverEarly(Chan c, String what, CloseReason reason, int idleKind) {
            if (c.tainted) {
                return;
            }
            String early = earliness(c, what, reason, idleKind);
            if (early != null) {
                violate("checkNeverEarly", itemOfEarly(c, reason), c, what + (reason == null ? "" : " " + reason)
                        + " early: " + early);
            }
        }

        /** Why an action now would be early, or null if it is not. */
        private String earliness(Chan c, String what, CloseReason reason, int idleKind) {
            long t = now();
            ModelSpec s = c.spec;
            if (idleKind >= 0) {
                // EVENTS: IdleStateHandler's events; a repeated event comes a whole timeout after the last one.
                long timeout = s.kind == ModelSpec.Kind.EVENTS ? s.idle[idleKind] : 0;
                if (timeout == 0) {
                    return "no " + IdleStateEvent.class.getSimpleName() + " of kind " + idleKind + " in " + s;
                }
                // IdleStateHandler: the n-th event of one idle spell comes n timeouts after its last activity.
                long since = c.lastActivitySure(idleKind);
                long n = c.eventsOfSpell(idleKind) + 1L;
                return t - since >= n * timeout ? null : "event " + n + " of a spell idle " + (t - since) / MS
                        + " ms < " + n + " x " + timeout / MS + " ms";
            }
            if (what.equals("ping")) {
                if (!s.pings()) {
                    return "a ping under " + s;
                }
                // PingPolicy: a ping after the interval of silence (reads, or our writes with whenWriterIdle),
                // or again after the previous one went unanswered for its timeout.
                long base = c.lastActivitySure(s.writerMode ? 1 : 0);
                boolean regular = t - base >= s.interval;
                long answerFrom = s.ack == AckMode.MATCHED_EXTENDS ? Math.max(c.lastPingWrite, c.lastActivity(0))
                        : c.lastPingWrite;
                boolean resend = c.pingsSinceSettle > 0 && c.lastPingWrite >= c.cfgStart
                        && t - answerFrom >= s.pingTimeout;
                return regular || resend ? null : "silent " + (t - base) / MS + " ms < interval " + s.interval / MS
                        + " ms, and no unanswered ping for its timeout";
            }
            if (reason == null) {
                return null; // holdWhile: asked about an idle close, checked when it closes
            }
            switch (reason) {
                case READER_IDLE, WRITER_IDLE, ALL_IDLE -> {
                    int kind = reason == CloseReason.READER_IDLE ? 0 : reason == CloseReason.WRITER_IDLE ? 1 : 2;
                    if (s.pings()) {
                        // closeWhenReaderIdle: "closes the channel when nothing was read for timeout".
                        if (reason != CloseReason.READER_IDLE || s.readerClose == 0) {
                            return "no " + reason + " close in " + s;
                        }
                        long idle = t - Math.max(c.lastRead, c.cfgStart);
                        if (idle < s.readerClose) {
                            return "read " + idle / MS + " ms ago < closeWhenReaderIdle " + s.readerClose / MS + " ms";
                        }
                        // Builder#closeWhenReaderIdle: build() checks it "else the channel would close before its
                        // first ping"; with read-silence pings a silent channel is pinged before it is closed. A
                        // ping still waiting for its answer (the matched modes: a read does not settle it) holds
                        // the next one back, and the close comes "whatever the pings do": a peer that talked
                        // since that ping but did not answer it may be closed without another (seed 348). A worker
                        // late since the last read may find the ping and the close due at once ("a worker stalled
                        // longer may decide later", HeartbeatConfig#firstPingBoundNanos), as a budget may defer the
                        // ping until the close is due: then the close comes without it.
                        if (!s.writerMode && c.pingsSinceRead == 0 && c.pingsSinceSettle == 0 && budget == 0
                                && workerLateUntil <= Math.max(c.lastRead, c.cfgStart) && what.equals("close")) {
                            return "closed for READER_IDLE before its first ping since the last read";
                        }
                        return null;
                    }
                    if (!s.closesWhenIdle() || s.idle[kind] == 0) {
                        return "no " + reason + " close in " + s;
                    }
                    // reduceIdleTimeouts: "closed once idle for factor times its timeout".
                    long timeout = factor < 1 ? Math.max(1, (long) (s.idle[kind] * factor)) : s.idle[kind];
                    long idle = t - c.lastActivitySure(kind);
                    return idle >= timeout ? null : "idle " + idle / MS + " ms < " + timeout / MS + " ms (factor "
                            + factor + ")";
                }
                case PING_TIMEOUT -> {
                    if (!s.pings()) {
                        return "no ping timeout in " + s;
                    }
                    // "after maxMissedPings pings without an answer, each waited for timeout"; MATCHED_EXTENDS:
                    // "other reads push the ping's deadline out".
                    if (c.pingsSinceSettle < s.maxMissed) {
                        return c.pingsSinceSettle + " unanswered pings < maxMissedPings " + s.maxMissed;
                    }
                    long waited = t - c.lastPingWrite;
                    if (waited < s.pingTimeout) {
                        return "the last ping waited " + waited / MS + " ms < timeout " + s.pingTimeout / MS + " ms";
                    }
                    if (s.ack == AckMode.MATCHED_EXTENDS && t - c.lastActivity(0) < s.pingTimeout) {
                        return "MATCHED_EXTENDS: data read " + (t - c.lastActivity(0)) / MS + " ms ago < timeout "
                                + s.pingTimeout / MS + " ms";
                    }
                    return null;
                }
                case MAX_AGE -> {
                    // After the goodbye, the close at the grace's end (and the veto asked about it) is the
                    // terminal decision of the configuration that said it, whatever the channel has since.
                    if ((what.equals("close") || what.equals("veto asked"))
                            && c.goodbyeReasons.contains(CloseReason.MAX_AGE)) {
                        long inGrace = t - c.goodbyeAt;
                        return inGrace >= c.goodbyeGrace || c.goodbyeGrace == 0 ? null
                                : "closed " + inGrace / MS + " ms into a grace of " + c.goodbyeGrace / MS + " ms";
                    }
                    if (s.maxAge == 0) {
                        return "no maxAge in " + s;
                    }
                    long age = t - c.ageStart;
                    return age >= s.ageSoonest() ? null : "age " + age / MS + " ms < " + s.ageSoonest() / MS + " ms";
                }
                case WRITE_STALL -> {
                    if (s.writeStall == 0 || !c.pending) {
                        return s.writeStall == 0 ? "no writeStall in " + s : "nothing waits in the outbound buffer";
                    }
                    // Builder#writeStall: "between timeout and 1.25 x timeout after the last byte left".
                    long stalled = t - Math.max(c.pendingSince, c.lastProgress);
                    return stalled >= s.writeStall ? null : "stalled " + stalled / MS + " ms < " + s.writeStall / MS;
                }
                case UNWRITABLE -> {
                    if (s.maxUnwritable == 0 || !c.unwritable) {
                        return s.maxUnwritable == 0 ? "no maxUnwritable in " + s : "the channel is writable";
                    }
                    // Builder#maxUnwritable: "Measured from the writability change Netty fires".
                    long spell = t - c.spellStart;
                    return spell >= s.maxUnwritable ? null : "unwritable for " + spell / MS + " ms < "
                            + s.maxUnwritable / MS + " ms";
                }
                case DRAIN -> {
                    return c.drainBy != NONE ? null : "no drain covers this channel";
                }
                default -> {
                    return "unexpected reason " + reason;
                }
            }
        }

        private int itemOfEarly(Chan c, CloseReason reason) {
            if (reason == CloseReason.PING_TIMEOUT && c.everHeld) {
                return NEW_STALE_RECHECK;
            }
            if ((reason == CloseReason.PING_TIMEOUT || reason == null) && c.spec.ack == AckMode.MATCHED_EXTENDS) {
                return 6;
            }
            if (reason == null && budget > 0 && c.spec.pings()) {
                return NEW_BUDGET_RESEND;
            }
            if (reason == CloseReason.WRITE_STALL) {
                return NEW_UNFLUSHED_STALL;
            }
            if (reason == CloseReason.UNWRITABLE && c.reconfigures > 0) {
                return 7;
            }
            if (reason == CloseReason.READER_IDLE && c.spec.pings()) {
                return 14;
            }
            if (reason == CloseReason.MAX_AGE && c.goodbyeReasons.contains(CloseReason.MAX_AGE)
                    && c.cfgStart >= c.goodbyeAt) {
                return NEW_GRACE_CUT;
            }
            return 0;
        }

        /**
         * DESIGN property 9: "a channel is closed at most once, told its goodbye at most once, with one
         * reason" (one {@link HeartbeatCloseEvent}, one {@link HeartbeatGoodbyeEvent}, one protocol goodbye).
         */
        void checkAtMostOneCloseAndGoodbye(Chan c) {
            if (c.tainted) {
                return;
            }
            if (c.goodbyeEvents > 1) {
                violate("checkAtMostOneCloseAndGoodbye", c.goodbyeReasons.contains(CloseReason.MAX_AGE)
                        && c.goodbyeReasons.contains(CloseReason.DRAIN) ? 10
                        : c.cfgStart > c.goodbyeAt ? NEW_GRACE_LOST : 0, c,
                        c.goodbyeEvents + " goodbye events: " + c.goodbyeReasons);
            }
            if (c.byeFrames > 1) {
                violate("checkAtMostOneCloseAndGoodbye", c.goodbyeReasons.contains(CloseReason.DRAIN) ? 10 : 0, c,
                        c.byeFrames + " protocol goodbyes written");
            }
            if (c.closeEvents > 1) {
                violate("checkAtMostOneCloseAndGoodbye", 0, c, c.closeEvents + " close events: " + c.closeReasons);
            }
        }

        /** A channel Heartbeat closed got its close event (its reason); a user's close got none. */
        void checkHeartbeatClosesSayWhy(Chan c) {
            if (!c.userClosed && c.closeEvents == 0 && !c.tainted) {
                violate("checkHeartbeatClosesSayWhy", 0, c, "closed by Heartbeat without a HeartbeatCloseEvent");
            }
        }

        /**
         * Every due action within its documented bound (DESIGN properties 2 and 9): the rule's deadline
         * plus {@link #slack}, plus the veto's {@code maxCloseHold} where a veto can hold the close
         * ({@code CloseDecision#extend}: "Held closes of one episode add up to at most maxCloseHold"), plus
         * the budget's deferral ({@code actionBudget}); the goodbye's write wait where there is a goodbye.
         */
        void checkDueClosesHappenInTheirBound() {
            long t = now();
            int live = 0;
            for (Chan c : chans) {
                live += c.watched() ? 1 : 0;
            }
            long budgetSlack = budgetSlack(live);
            for (Chan c : chans) {
                if (!c.ch.isOpen() || c.tainted || c.userClosed) {
                    continue;
                }
                String late = lateness(c, t, budgetSlack);
                if (late != null) {
                    violate("checkDueClosesHappenInTheirBound", itemOfLate(c, late), c, late);
                }
            }
        }

        /** The first obligation of {@code c} that is overdue at {@code t}, described; null if none. */
        private String lateness(Chan c, long t, long budgetSlack) {
            // Announced closes: HeartbeatCloseEvent is "fired just before the close".
            if (c.closeEvents > 0 && t > c.closeEventAt + GOODBYE_WAIT + slack) {
                return "announced " + c.closeReasons + " at " + c.closeEventAt / MS + " ms, still open";
            }
            if (!c.handlerPresent) {
                return null; // removed: Heartbeat no longer acts on it (a drain or a goodbye included)
            }
            // A drain: HeartbeatMonitor#drain (a terminal decision: no reconfigure undoes it).
            if (c.drainBy != NONE && t > c.drainBy) {
                return "drain: the drain at " + c.drainAt / MS + " ms was to close it by " + c.drainBy / MS + " ms";
            }
            ModelSpec s = c.spec;
            // CloseDecision#extend: "a delay under 10 ms: 10 ms later, when the worker looks for the hold"; the
            // last extension of an episode is cut to what is left of maxCloseHold, which can be under 10 ms,
            // so the bound's close comes up to that look later (family 1, seed 50: the model left it out).
            // The look at a hold's end is a check of its own, coalesced as any (seeds 27181, 27475: 1 and 2 ms late).
            long hold = s.maxHold == 0 ? 0 : s.maxHold + CloseSequence.HOLD_LOOK_NANOS + window(s);
            // A held close is handed to the event loop twice, when first asked and at its re-check, each an
            // action through the budget ("by at most (actions waiting) / perSecond"): the deferral twice (seed 28).
            hold += hold == 0 ? 0 : budgetSlack;
            // A goodbye said: HeartbeatGoodbyeEvent "closes the channel grace() later" (terminal).
            if (c.goodbyeEvents > 0) {
                long by = c.goodbyeAt + c.goodbyeGrace + GOODBYE_WAIT + maxHoldOfAll() + slack + budgetSlack;
                if (t > by) {
                    return "goodbye " + c.goodbyeReasons + " said at " + c.goodbyeAt / MS + " ms with grace "
                            + c.goodbyeGrace / MS + " ms: to close by " + by / MS + " ms";
                }
            }
            // Builder#maxAge: "Measured from the moment the channel became active"; a veto may hold it.
            if (s.maxAge > 0 && c.goodbyeEvents == 0) {
                // An age already reached when configured is due at that switch (issue 26 item 12), not before it.
                long by = Math.max(c.ageStart + s.ageLatest(), c.cfgStart) + hold + s.grace + GOODBYE_WAIT + slack(s)
                        + budgetSlack;
                if (t > by) {
                    return "maxAge: counted from " + c.ageStart / MS + " ms, age " + s.maxAge / MS + " ms (latest "
                            + s.ageLatest() / MS + " ms): to close by " + by / MS + " ms";
                }
            }
            long extra = hold + slack(s) + budgetSlack;
            if (s.closesWhenIdle()) {
                for (int k = 0; k < 3; k++) {
                    if (s.idle[k] == 0) {
                        continue;
                    }
                    long due = c.lastActivity(k) + s.idle[k];
                    if (factor < 1) {
                        // reduceIdleTimeouts: "A lower factor takes effect at once".
                        due = Math.min(due, Math.max(c.lastActivity(k) + Math.max(1, (long) (s.idle[k] * factor)),
                                factorSince));
                    }
                    if (t > due + extra) {
                        return "idle close (kind " + k + "): idle since " + c.lastActivity(k) / MS + " ms, timeout "
                                + s.idle[k] / MS + " ms, factor " + factor + ": to close by " + (due + extra) / MS
                                + " ms";
                    }
                }
            }
            if (s.kind == ModelSpec.Kind.EVENTS) {
                for (int k = 0; k < 3; k++) {
                    if (s.idle[k] == 0) {
                        continue;
                    }
                    long due = c.lastActivity(k) + (c.eventsOfSpell(k) + 1L) * s.idle[k] + slack(s) + budgetSlack;
                    if ((budget > 0 || workerLateUntil > c.lastActivity(k)) && c.eventsOfSpell(k) > 0) {
                        // An event deferred by the budget past the next one's time is merged with it (one pending
                        // action word per channel: HeartbeatHandler#offerActions), so a spell under a saturated
                        // budget has fewer events than timeouts: the next comes a timeout after the latest one,
                        // deferred at most as one action is (seed 53: 5 actions/s for 4 channels). So under a
                        // worker late in this spell: the timeouts that passed while it was late make one event when
                        // it is back, as IdleStateHandler's task run late after a pause does (seed 4562).
                        due = Math.max(due, c.lastEventAt[k] + s.idle[k] + slack(s) + budgetSlack);
                    }
                    if (t > due) {
                        return "idle event (kind " + k + ") due by " + due / MS + " ms";
                    }
                }
            }
            if (s.pings()) {
                long settle = Math.max(c.cfgStart, c.lastRead);
                if (s.writerMode) {
                    settle = Math.max(settle, c.lastAppWrite);
                }
                long due = settle + (long) (s.interval * (1 + s.jitter)) + s.maxMissed * s.pingTimeout
                        + (s.maxMissed + 2) * (slack(s) + budgetSlack) + hold;
                if (t > due) {
                    return "ping timeout: silent since " + settle / MS + " ms, interval " + s.interval / MS
                            + " ms, timeout " + s.pingTimeout / MS + " ms, maxMissedPings " + s.maxMissed
                            + ": to close by " + due / MS + " ms";
                }
                if (s.readerClose > 0 && t > Math.max(c.lastRead, c.cfgStart) + s.readerClose + extra) {
                    return "closeWhenReaderIdle: read at " + Math.max(c.lastRead, c.cfgStart) / MS + " ms";
                }
            }
            if (s.writeStall > 0 && c.pending) {
                // The stall's looks are coalesced checks: a second window (seed 20641: 2 ms beyond one).
                long by = Math.max(Math.max(c.pendingSince, c.lastProgress), c.cfgStart) + s.writeStall * 5 / 4
                        + extra + window(s);
                if (t > by) {
                    return "writeStall: waiting since " + c.pendingSince / MS + " ms: to close by " + by / MS + " ms";
                }
            }
            if (s.maxUnwritable > 0 && c.unwritable) {
                long by = Math.max(c.spellStart, c.cfgStart) + s.maxUnwritable + extra;
                if (t > by) {
                    return "maxUnwritable: unwritable since " + c.spellStart / MS + " ms: to close by " + by / MS
                            + " ms";
                }
            }
            return null;
        }

        private long maxHoldOfAll() {
            long max = 0;
            for (ModelSpec s : specs) {
                max = Math.max(max, s.maxHold == 0 ? 0 : s.maxHold + CloseSequence.HOLD_LOOK_NANOS);
            }
            return max;
        }

        private int itemOfLate(Chan c, String late) {
            if (late.startsWith("drain")) {
                return !c.reconfiguredSinceDrain ? 0 : budget > 0 ? 3 : 2;
            }
            if (late.startsWith("goodbye") && c.cfgStart > c.goodbyeAt) {
                return NEW_GRACE_LOST;
            }
            if (c.ageFromReconfigure && c.spec.maxAge > 0 && now() - c.activation >= c.spec.ageSoonest()) {
                return 12; // switched to a max age it had passed: due at once, and its checks go astray
            }
            if (late.startsWith("maxUnwritable") && c.unwritableFromReconfigure) {
                return 7;
            }
            if (late.startsWith("writeStall") && (!c.everHeld || c.spec.veto == ModelSpec.Veto.NONE)) {
                return NEW_STALL_GRID;
            }
            if (late.startsWith("idle close") && factor < 1 && c.startedUnderOverload) {
                return NEW_OVERLOAD_START;
            }
            if (late.startsWith("idle close") && factor < 1) {
                return NEW_OVERLOAD_LATE;
            }
            if ((late.startsWith("idle event") || late.startsWith("ping timeout")) && c.goodbyeEvents > 0) {
                return NEW_EVENT_IN_GRACE;
            }
            if (c.everHeld && c.spec.veto != ModelSpec.Veto.NONE) {
                return 1;
            }
            if (monitor.stats().stallRechecks() > 0) {
                return overloadEver ? 8 : c.unwritableFromReconfigure ? 7 : 12; // a check deferred as a stall
            }
            return 0;
        }

        /**
         * {@code Builder#beforeClose}: "Asks veto on the event loop before every close Heartbeat makes (but
         * drains and ping abuse)"; {@code holdWhile} only for idle closes. (Lenient: once asked under the
         * configuration in force, a close may go ahead without asking, as at the end of {@code maxCloseHold}.)
         */
        void checkVetoAskedBeforeClose(Chan c, CloseReason reason) {
            ModelSpec.Veto v = c.spec.veto;
            boolean idle = reason == CloseReason.READER_IDLE || reason == CloseReason.WRITER_IDLE
                    || reason == CloseReason.ALL_IDLE;
            if (v == ModelSpec.Veto.NONE || reason == CloseReason.DRAIN || reason == CloseReason.PING_ABUSE
                    || (v == ModelSpec.Veto.HOLD_WHILE && !idle) || c.tainted || c.cfgStart > c.closeEventAt) {
                return;
            }
            if (c.lastAskAt < c.cfgStart) {
                violate("checkVetoAskedBeforeClose", 0, c, reason + " close without asking the veto " + v
                        + " under the configuration in force since " + c.cfgStart / MS + " ms");
            }
        }

        /**
         * {@code CloseDecision#extend}: "Keeps the channel open and asks again delay later, if it is still
         * due to close then (traffic in between puts an idle close off as usual)". By the extension's end
         * the veto was asked again, or the channel closed, or traffic or a reconfigure came since.
         */
        void checkVetoAskedAgainAtExtensionEnd() {
            long t = now();
            int live = chans.size();
            for (Chan c : chans) {
                if (c.recheckBy == NONE || !c.ch.isOpen() || !c.handlerPresent || c.tainted || c.userClosed) {
                    continue;
                }
                if (c.episodeActivity >= c.extendedAt || c.cfgStart >= c.extendedAt) {
                    c.recheckBy = NONE;
                    continue;
                }
                // CloseDecision#extend: "a delay under 10 ms: 10 ms later, when the worker looks for the hold".
                long due = Math.max(c.recheckBy, c.extendedAt + CloseSequence.HOLD_LOOK_NANOS);
                if (t > due + slack + budgetSlack(live)) {
                    violate("checkVetoAskedAgainAtExtensionEnd", 1, c, "extended at " + c.extendedAt / MS
                            + " ms until " + c.recheckBy / MS + " ms; not asked again by " + t / MS + " ms");
                }
            }
        }

        /**
         * No wheel entry expired more than once per due time: after a worker cycle at {@code now} no
         * channel's entry is armed in the past (it would expire again, late, at every cycle), the cycle
         * expired at most one check per entry, and no check was deferred as a worker stall
         * ({@code stallRechecks}: "checks deferred because the worker was late by more than the stall
         * threshold") while the worker has never been late ({@link #checkNoStallRecheck}).
         */
        /** Channels that left the model (closed) since the last worker cycle: their cancels are still due. */
        private int leftSinceLastCycle;

        void checkNoEntryExpiredTwicePerDueTime(int cycleWork) {
            int left = leftSinceLastCycle; // those that left still have a cancel to apply
            leftSinceLastCycle = 0;
            if (muted.contains("checkNoEntryExpiredTwicePerDueTime")) {
                return;
            }
            long nowNanos = ticker.nanoTime();
            long tick = dev.heartbeat.core.TimingWheel.DEFAULT_TICK_NANOS;
            for (Chan c : chans) {
                if (c.handler instanceof HeartbeatHandler h && h.isScheduled() && h.deadline() - nowNanos < -2 * tick) {
                    violate("checkNoEntryExpiredTwicePerDueTime", overloadEver ? 8 : 0, c, "its entry is armed "
                            + (nowNanos - h.deadline()) / MS + " ms in the past after a worker cycle");
                }
            }
            // runOnce: "requests applied plus entries expired"; a channel has at most a request or two a cycle.
            int channels = chans.size() + left;
            if (cycleWork > 3 * channels + 4) {
                violate("checkNoEntryExpiredTwicePerDueTime", overloadEver ? 8 : 0, null, cycleWork
                        + " requests and expirations in one cycle for " + channels + " channels");
            }
        }

        /**
         * The worker keeps up (a cycle every 1 ms, no late spell yet): no check may be deferred as a stall, and a
         * coarse write clock is never published late.
         */
        void checkNoStallRecheck(HeartbeatStats stats) {
            boolean neverLate = workerLateUntil == NONE;
            if (stats.stallRechecks() > 0 && neverLate && !muted.contains("checkNoStallRecheck")) {
                violate("checkNoStallRecheck", overloadEver ? 8 : anyAgeFromReconfigure() ? 12
                        : anyUnwritableFromReconfigure() ? 7 : 0,
                        null, stats.stallRechecks() + " stall re-checks while the worker keeps up");
            }
            if (stats.coarseClockLateSpells() > 0 && neverLate && !muted.contains("checkNoStallRecheck")) {
                violate("checkNoStallRecheck", 0, null, stats.coarseClockLateSpells()
                        + " late publications of the coarse write clock while the worker keeps up");
            }
        }

        private boolean anyUnwritableFromReconfigure() {
            for (Chan c : all) {
                if (c.unwritableFromReconfigure) {
                    return true;
                }
            }
            return false;
        }

        private boolean anyAgeFromReconfigure() {
            for (Chan c : all) {
                if (c.ageFromReconfigure) {
                    return true;
                }
            }
            return false;
        }

        /**
         * The counters say what happened: {@code stats().channels()} ("channels whose handler is active
         * now") is the model's watched channels; every close event is one close counted; overload closes
         * ({@code overloadCloses}: "Closes made because of a reduced idle timeout") are closes that happened.
         */
        void checkCountersAgree(HeartbeatStats stats) {
            if (muted.contains("checkCountersAgree")) {
                return;
            }
            long watched = 0;
            long closeEvents = 0;
            for (Chan c : all) {
                watched += c.watched() ? 1 : 0;
                closeEvents += c.closeEvents;
            }
            if (stats.channels() != watched) {
                violate("checkCountersAgree", 0, null, "stats().channels() " + stats.channels() + ", watched "
                        + watched);
            }
            if (stats.closedTotal() != closeEvents) {
                violate("checkCountersAgree", 0, null, "stats().closedTotal() " + stats.closedTotal()
                        + ", close events " + closeEvents);
            }
            if (monitor.overloadCloses() > closesUnderOverload) {
                violate("checkCountersAgree", 8, null, "overloadCloses() " + monitor.overloadCloses()
                        + " > closes made under overload " + closesUnderOverload);
            }
        }

        /** DESIGN property 3: "the wheel's size returns to zero and no channel is retained". */
        void checkNothingRetainedAfterClose() {
            HeartbeatStats stats = monitor.stats();
            if (stats.channels() != 0 || stats.timer().entries() != 0) {
                violate("checkNothingRetainedAfterClose", 0, null, "after every channel closed: channels "
                        + stats.channels() + ", wheel entries " + stats.timer().entries());
            }
        }

        /**
         * DESIGN property 6: "no configuration or call is a silent no-op"; {@code maxCloseHold} without a
         * veto (item 15) and a reader-idle close that can come before the first ping (item 14,
         * {@code closeWhenReaderIdle}: "checked by build()") must be refused by {@code build()}.
         */
        void checkBuildRefusesWhatWouldBeIgnored(List<String> refusals) {
            for (String r : refusals) {
                violate("checkBuildRefusesWhatWouldBeIgnored", r.startsWith("item 15") ? 15 : 14, null, r);
            }
            refusals.clear();
        }

        /** Records a violation: tolerated (counted; the channel or check left alone from now on) or thrown. */
        void violate(String check, int item, Chan c, String message) {
            if (TOLERATE_ALL || (item > 0 && TOLERATED.contains(item)) || OPEN.contains(check)) {
                if (c != null ? !c.tainted : !muted.contains(check)) {
                    tolerated++; // once per channel, or per global check
                }
                if (c != null) {
                    c.tainted = true;
                } else {
                    muted.add(check);
                }
                return;
            }
            if (found == null) { // thrown at the next safe point: Netty and the veto's caller catch callbacks' throws
                found = new Violation(check, item, (c == null ? "" : "channel " + c.id + " (" + c.spec + "): ")
                        + message);
            }
        }

        /** Throws the first violation found, if any: after every worker cycle, event loop turn and step. */
        void rethrow() {
            if (found != null) {
                throw found;
            }
        }

        /** The last handler in each channel's pipeline: the application, which sees Heartbeat's events. */
        /**
         * In front of a handler on an executor of its own: a write the channel took completes when the channel's loop
         * next runs outside that executor ({@link #completeTaken}, from {@link Episode#settle}), as a transport's
         * loop completes a socket write on its own thread. (An embedded channel would complete it inside the call
         * that reached it, on the handler's executor, and run the loop's tasks there too.) A void promise passes as it
         * is: the handler gives a void-promise write a promise of its own.
         */
        static final class LoopCompleter extends ChannelOutboundHandlerAdapter {
            private final ArrayDeque<Runnable> taken = new ArrayDeque<>();

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                if (promise.isVoid()) {
                    ctx.write(msg, promise);
                    return;
                }
                ctx.write(msg).addListener(f -> taken.add(() -> {
                    if (f.isSuccess()) {
                        promise.trySuccess();
                    } else {
                        promise.tryFailure(f.cause());
                    }
                }));
            }

            /** Completes the writes the channel took; returns whether there were any. */
            boolean completeTaken() {
                boolean any = !taken.isEmpty();
                for (Runnable r; (r = taken.poll()) != null; ) {
                    r.run();
                }
                return any;
            }
        }

        final class Recorder extends ChannelInboundHandlerAdapter {
            private final Chan chan;

            Recorder(Chan chan) {
                this.chan = chan;
            }

            @Override
            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                onEvent(chan, evt);
            }

            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                // the application's data, and unsolicited answers: consumed; answered if the step says so
                if (chan.answer != Chan.NO_ANSWER) {
                    ctx.write("OUT", chan.answer == Chan.ANSWER_VOID ? ctx.voidPromise() : ctx.newPromise());
                    chan.answerWritten = true;
                }
            }

            @Override
            public void channelReadComplete(ChannelHandlerContext ctx) {
                if (chan.answerWritten) {
                    chan.answerWritten = false;
                    ctx.flush();
                    answered(chan);
                }
            }

            @Override
            @SuppressWarnings("deprecation")
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                // withTimeoutExceptions' ReadTimeoutException / WriteTimeoutException: seen, not rethrown
            }
        }
    }

    // ------------------------------------------------------------------ the model of one channel

    /** What the model knows of one channel; times are virtual nanoseconds since the episode began. */
    static final class Chan {
        static final int NO_ANSWER = 0;
        static final int ANSWER = 1;
        static final int ANSWER_VOID = 2;

        final int id;
        /** During an answered read ({@link Episode#echo}): how the application answers, and whether it has. */
        int answer;
        boolean answerWritten;
        boolean answered;
        boolean actInside;
        final long activation;
        ModelSpec spec;
        EmbeddedChannel ch;
        ChannelHandler handler;
        boolean handlerPresent = true;
        /** Whether its handler runs on an executor of its own ({@link Episode#executors}). */
        boolean ownExecutor;
        /** In front of a handler on an executor of its own, else null. */
        Episode.LoopCompleter completer;
        boolean userClosed;
        boolean tainted;
        long closedAt = NONE;
        long cfgStart;
        int reconfigures;
        boolean ageFromReconfigure;
        /** Whence its max age counts: activation, or the latest switch from a configuration without guards. */
        long ageStart;
        boolean unwritableFromReconfigure;
        /** Whether its configuration came into force (activation or reconfigure) while an overload was on. */
        boolean startedUnderOverload;
        long lastRead = NONE;
        long lastWrite = NONE;
        long lastWriteSure = NONE;
        long lastAppWrite = NONE;
        /** Per idle kind: the activity time the spell's events count from, and how many it had. */
        final long[] eventSpell = {NONE, NONE, NONE};
        final int[] eventCount = new int[3];
        /** Per idle kind: when its latest event was fired. */
        final long[] lastEventAt = {NONE, NONE, NONE};
        int pingsSinceSettle;
        /** Pings written and not yet matched by an answer (in order) since the last settle. */
        int unanswered;
        int pingsSinceRead;
        long lastPingWrite = NONE;
        boolean pending;
        /** The configuration (by its reconfigure count) the latest unflushed write was made under. */
        int pendingWriteConfig = -1;
        long pendingSince = NONE;
        long lastProgress = NONE;
        boolean unwritable;
        long spellStart = NONE;
        boolean flag;
        int goodbyeEvents;
        final List<CloseReason> goodbyeReasons = new ArrayList<>();
        long goodbyeAt = NONE;
        long goodbyeGrace;
        int byeFrames;
        int closeEvents;
        final List<CloseReason> closeReasons = new ArrayList<>();
        long closeEventAt = NONE;
        long drainBy = NONE;
        long drainAt = NONE;
        boolean reconfiguredSinceDrain;
        /** The latest activity that ends a veto's hold episode (traffic, the work in flight ending). */
        long episodeActivity = NONE;
        long extendedAt = NONE;
        /** The reason the veto was last asked for. */
        CloseReason askedFor;
        long recheckBy = NONE;
        boolean everHeld;
        long lastAskAt = NONE;

        Chan(int id, ModelSpec spec, long now) {
            this.id = id;
            this.spec = spec;
            this.activation = now;
            this.ageStart = now;
            this.cfgStart = now;
        }

        /** Whether the monitor watches the channel now: open, with its handler, and not closing. */
        boolean watched() {
            return ch.isOpen() && handlerPresent && closeEvents == 0;
        }

        /** The latest activity of idle kind {@code kind} (reader, writer, all), measured afresh from a reconfigure. */
        /**
         * {@link #lastActivity}, counting only the writes issued under the configuration in force: a write
         * the handler saw before it tracked writes may or may not count when it completes (the lower bounds
         * take the lenient reading).
         */
        long lastActivitySure(int kind) {
            long read = Math.max(lastRead, cfgStart);
            long write = Math.max(lastWriteSure, cfgStart);
            return kind == 0 ? read : kind == 1 ? write : Math.max(read, write);
        }

        long lastActivity(int kind) {
            long read = Math.max(lastRead, cfgStart);
            long write = Math.max(lastWrite, cfgStart);
            return kind == 0 ? read : kind == 1 ? write : Math.max(read, write);
        }

        void reconfigured(ModelSpec to, long now) {
            if (to.keepsGuardState() && !spec.keepsGuardState()) {
                // Builder#maxAge: "A channel reconfigured to a max age from a configuration with no lifecycle
                // guard ... is measured from that reconfiguration".
                ageStart = now;
            }
            if (to.maxAge > 0 && (spec.maxAge == 0 || spec.maxAge != to.maxAge)) {
                ageFromReconfigure = true;
            }
            if (to.maxUnwritable > 0 && spec.maxUnwritable == 0) {
                unwritableFromReconfigure = true;
            }
            spec = to;
            cfgStart = now;
            reconfigures++;
            Arrays.fill(eventSpell, NONE);
            pingsSinceSettle = 0; // PingPolicy.start: "no missed pings"; the answers still match in order
            if (!to.pings() && to.idle[0] > 0 && to.idle[1] > 0 && to.idle[2] > 0) {
                unanswered = 0; // all three idle kinds keep their third check time where the probe's state was
            }
            pingsSinceRead = 0;
            if (drainBy != NONE) {
                reconfiguredSinceDrain = true;
            }
        }

        /** The idle events of kind {@code kind} fired since its latest activity. */
        int eventsOfSpell(int kind) {
            return eventSpell[kind] == lastActivity(kind) ? eventCount[kind] : 0;
        }

        void eventFired(int kind, long now) {
            lastEventAt[kind] = now;
            eventCount[kind] = eventsOfSpell(kind) + 1;
            eventSpell[kind] = lastActivity(kind);
        }

        void asked(long now) {
            recheckBy = NONE;
            lastAskAt = now;
        }

        void extended(long now, long delay) {
            extendedAt = now;
            recheckBy = now + delay;
            everHeld = true;
        }

        @Override
        public String toString() {
            return "channel " + id + " #" + spec.id + (ch.isOpen() ? " open" : " closed at " + closedAt / MS + " ms")
                    + (handlerPresent ? "" : " (handler removed)") + (userClosed ? " (user closed)" : "")
                    + (ownExecutor ? " (handler on an executor of its own)" : "")
                    + ", active at " + activation / MS + " ms, config since " + cfgStart / MS + " ms, read "
                    + ms(lastRead) + ", write " + ms(lastWrite) + ", pings unanswered " + pingsSinceSettle
                    + ", goodbyes " + goodbyeReasons + ", closes " + closeReasons;
        }

        private static String ms(long t) {
            return t == NONE ? "never" : t / MS + " ms";
        }
    }
}
