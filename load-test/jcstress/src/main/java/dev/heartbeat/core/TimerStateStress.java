/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;
import org.openjdk.jcstress.infra.results.ZII_Result;

/**
 * jcstress tests of an entry's state word ({@link TimerEntry}, transitions in {@link TimerWorker}):
 * the owner thread's {@code schedule} and {@code cancel} against the worker's duty cycle on the same
 * entry. Both sides are the real code: the worker is never started and one actor drives its cycle
 * with {@link TimerWorker#doWork()} (request apply, then the wheel's advance and the ARMED to FIRING
 * CAS), on a {@link ManualTicker} that stands past every deadline. The arbiter runs one more cycle
 * on the final state, as the worker's next wake-up would, and reports what fired.
 *
 * <p>Deadlines are reported as codes: 1 for {@link #D1}, 2 for {@link #D2}, 0 for nothing.
 * Run: {@code java -jar load-test/target/jcstress.jar -t TimerStateStress}.
 */
public final class TimerStateStress {

    /** The first arming's deadline. */
    static final long D1 = 10_000_000;
    /** The second request's deadline; before {@link #NOW} too, so both are due. */
    static final long D2 = 20_000_000;
    /** The worker's time in every cycle: past both deadlines. */
    static final long NOW = 100_000_000;

    private TimerStateStress() {
    }

    /** An entry that records the wheel deadlines it fired on (worker only, plain). */
    static final class Probe extends TimerEntry {
        int fires;
        int first;
        int second;
        /** Set before the actors: the handler re-arms the entry for later, as the lazy re-arm does. */
        TimerWorker<Probe> rearmOn;

        void fired() {
            if (rearmOn != null) {
                rearmOn.rearm(this, NOW * 2);
            }
            int code = deadline == D1 ? 1 : deadline == D2 ? 2 : 9;
            if (fires == 0) {
                first = code;
            } else if (fires == 1) {
                second = code;
            }
            fires++;
        }
    }

    /** One never-started worker and one entry: each test state makes its own. */
    abstract static class Fixture {
        final ManualTicker ticker = new ManualTicker(0);
        final TimerWorker<Probe> worker = TimerWorker.<Probe>builder((e, now) -> e.fired())
                .ticker(ticker)
                .queueChunkSize(8)
                .build();
        final Probe entry = new Probe();

        /** Arms the entry at {@code D1} and lets the worker apply it, at time 0 (nothing due). */
        final void armApplied() {
            worker.schedule(entry, D1);
            worker.doWork();
        }

        final void fired(III_Result r) {
            r.r1 = entry.first;
            r.r2 = entry.second;
            r.r3 = entry.fires;
        }
    }

    /** The owner moves an armed, due entry while the worker expires it. */
    @JCStressTest
    @Description("schedule(D2) on the owner vs the worker's cycle on an entry armed (applied) at D1, both due")
    @Outcome(id = "1, 2, 2", expect = ACCEPTABLE,
            desc = "The worker fired the D1 arming first; the D2 request re-armed the entry and fired next cycle.")
    @Outcome(id = "2, 0, 1", expect = ACCEPTABLE,
            desc = "The D2 request won (committed, or WRITING seen): the D1 arming never fired, D2 fired once.")
    @Outcome(expect = FORBIDDEN,
            desc = "A request lost, an arming fired twice, or a deadline fired that was never committed.")
    @State
    public static class ScheduleVsFire extends Fixture {
        public ScheduleVsFire() {
            armApplied();
            ticker.set(NOW);
        }

        @Actor
        public void owner() {
            worker.schedule(entry, D2);
        }

        @Actor
        public void worker() {
            worker.doWork();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            worker.doWork();
            fired(r);
        }
    }

    /**
     * The owner replaces a request the worker has not applied yet while the worker applies it: the
     * worker may read the requested deadline while the new one is being written (WRITING set), and
     * must not fire on it until it is committed.
     */
    @JCStressTest
    @Description("schedule(D2) on the owner vs the worker's cycle on an entry whose D1 request is still queued")
    @Outcome(id = "1, 2, 2", expect = ACCEPTABLE,
            desc = "The worker applied and fired D1 before the owner began; D2 re-armed it and fired next cycle.")
    @Outcome(id = "2, 0, 1", expect = ACCEPTABLE,
            desc = "D2 replaced D1 before it fired (merged into the queued request, or the fire was skipped).")
    @Outcome(id = "2, 2, 2", expect = FORBIDDEN,
            desc = "Fired on D2 read before its CAS committed, then again for the committed request.")
    @Outcome(expect = FORBIDDEN, desc = "A request lost, or an arming fired twice.")
    @State
    public static class RescheduleVsFire extends Fixture {
        public RescheduleVsFire() {
            worker.schedule(entry, D1);
            ticker.set(NOW);
        }

        @Actor
        public void owner() {
            worker.schedule(entry, D2);
        }

        @Actor
        public void worker() {
            worker.doWork();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            worker.doWork();
            fired(r);
        }
    }

    /** The owner cancels an armed, due entry while the worker expires it. */
    @JCStressTest
    @Description("cancel() on the owner vs the worker's cycle on an entry armed (applied) at D1, due")
    @Outcome(id = "true, 0, 0", expect = ACCEPTABLE,
            desc = "The cancel won the ARMED state: the handler never ran; the entry left the wheel.")
    @Outcome(id = "false, 1, 0", expect = ACCEPTABLE,
            desc = "The worker won (FIRING): the handler ran once; cancel reported false; the entry left the wheel.")
    @Outcome(id = "true, 1, .*", expect = FORBIDDEN, desc = "A successful cancel followed by a fire of that arming.")
    @Outcome(id = "false, 0, .*", expect = FORBIDDEN, desc = "The cancel failed, yet the arming never fired.")
    @Outcome(expect = FORBIDDEN, desc = "The entry is still linked in the wheel (a leak), or fired twice.")
    @State
    public static class CancelVsFire extends Fixture {
        public CancelVsFire() {
            armApplied();
            ticker.set(NOW);
        }

        @Actor
        public void owner(ZII_Result r) {
            r.r1 = worker.cancel(entry);
        }

        @Actor
        public void worker() {
            worker.doWork();
        }

        @Arbiter
        public void arbiter(ZII_Result r) {
            worker.doWork();
            r.r2 = entry.fires;
            r.r3 = entry.isScheduled() ? 1 : 0;
        }
    }

    /**
     * The owner cancels while the worker expires an entry whose handler re-arms it: a cancel that
     * lands while the handler runs must still take the entry out of the wheel.
     */
    @JCStressTest
    @Description("cancel() on the owner vs the worker's cycle, the handler re-arming the entry (lazy re-arm)")
    @Outcome(id = "true, 0, 0", expect = ACCEPTABLE,
            desc = "The cancel won the ARMED state: the handler never ran; the entry left the wheel.")
    @Outcome(id = "false, 1, 0", expect = ACCEPTABLE,
            desc = "The cancel came while the handler ran (FIRING): false; the re-arm does not stand.")
    @Outcome(id = "true, 1, 0", expect = ACCEPTABLE,
            desc = "The handler ran and re-armed (ARMED again); the cancel disarmed that new arming: true.")
    @Outcome(id = ".*, .*, 1", expect = FORBIDDEN,
            desc = "Leak: cancelled, yet the re-armed entry stayed in the wheel.")
    @Outcome(expect = FORBIDDEN, desc = "A failed cancel without a fire, or two fires.")
    @State
    public static class CancelVsRearm extends Fixture {
        public CancelVsRearm() {
            entry.rearmOn = worker;
            armApplied();
            ticker.set(NOW);
        }

        @Actor
        public void owner(ZII_Result r) {
            r.r1 = worker.cancel(entry);
        }

        @Actor
        public void worker() {
            worker.doWork();
        }

        @Arbiter
        public void arbiter(ZII_Result r) {
            worker.doWork();
            r.r2 = entry.fires;
            r.r3 = entry.isScheduled() ? 1 : 0;
        }
    }

    /**
     * The owner replaces a queued request while the worker applies it, nothing due: the entry must be
     * in the queue at most once, and the newest request must win.
     */
    @JCStressTest
    @Description("schedule(D2) on the owner vs the worker applying the queued D1 request, nothing due yet")
    @Outcome(id = "0, 2, 0", expect = ACCEPTABLE,
            desc = "D2 was merged into the queued request (QUEUED still set): one apply, at D2.")
    @Outcome(id = "1, 2, 0", expect = ACCEPTABLE,
            desc = "The worker took the D1 request first; D2 queued the entry again, once; applied next cycle.")
    @Outcome(id = "2, .*", expect = FORBIDDEN, desc = "The entry was in the queue twice.")
    @Outcome(expect = FORBIDDEN, desc = "The newest request (D2) lost, or the queue not empty after a cycle.")
    @State
    public static class RescheduleVsApply extends Fixture {
        public RescheduleVsApply() {
            worker.schedule(entry, D1);
        }

        @Actor
        public void owner() {
            worker.schedule(entry, D2);
        }

        @Actor
        public void worker() {
            worker.doWork();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r1 = (int) worker.stats().queueDepth();
            worker.doWork();
            r.r2 = entry.deadline() == D2 ? 2 : entry.deadline() == D1 ? 1 : 9;
            r.r3 = (int) worker.stats().queueDepth();
        }
    }
}
