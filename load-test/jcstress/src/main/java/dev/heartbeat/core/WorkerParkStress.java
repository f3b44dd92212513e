/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of the worker's park handshake with a schedule request (no lost wake-up).
 *
 * <p>The real {@link TimerWorker} cannot take part: its {@code idle()} is private and really parks
 * its own thread. So {@link Model} replicates, access for access and mode for mode, what
 * {@code TimerWorker.idle()} and the wake-up half of {@code TimerWorker.schedule()} do: the worker
 * publishes {@code wakeAt} (volatile store), sets {@code parked} (volatile store) and re-checks the
 * real JCTools queue ({@code isEmpty()}); the requester offers to that queue, then reads
 * {@code parked} and {@code wakeAt} (volatile loads) and unparks by CAS of {@code parked} from true to
 * false. An actor's result says whether the worker parked (1) or backed out (0), and whether the
 * requester claimed the wake-up (1) or not (0). If either side of the real code changes, this
 * model must change with it.
 *
 * <p>Run: {@code java -jar load-test/target/jcstress.jar -t WorkerParkStress}.
 */
public final class WorkerParkStress {

    /** The wake-up time the worker publishes in these tests. */
    static final long WAKE_AT = 1_000;
    /** A request's deadline before {@link #WAKE_AT}: the worker must not sleep through it. */
    static final long EARLIER = 500;

    private WorkerParkStress() {
    }

    /** The fields and accesses of the handshake, as in {@link TimerWorker}. */
    static class Model {
        private static final VarHandle PARKED;

        static {
            try {
                PARKED = MethodHandles.lookup().findVarHandle(Model.class, "parked", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final MessagePassingQueue<Object> requests = new MpscUnboundedXaddArrayQueue<>(8, 4);
        volatile boolean parked;
        volatile long wakeAt;

        /** TimerWorker.idle() up to the park: true if the worker parks. */
        final boolean idle(long wakeAtNow) {
            wakeAt = wakeAtNow;
            parked = true;
            if (!requests.isEmpty()) {
                parked = false;
                return false;
            }
            return true;
        }

        /** TimerWorker.schedule() from the offer on: true if this request unparks the worker. */
        final boolean schedule(Object entry, long deadline) {
            requests.offer(entry);
            return parked && deadline - wakeAt < 0 && PARKED.compareAndSet(this, true, false);
        }
    }

    /** A request for a deadline earlier than the worker's wake-up, against the worker going to park. */
    @JCStressTest
    @Description("worker idle() (wakeAt, parked, queue re-check) vs schedule() of an earlier deadline")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "The worker parked; the requester saw it and unparked it.")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "The worker saw the request in its re-check and did not park.")
    @Outcome(id = "0, 1", expect = ACCEPTABLE,
            desc = "Both saw each other: the worker backs out, one spare unpark (its next park returns at once).")
    @Outcome(id = "1, 0", expect = FORBIDDEN,
            desc = "Lost wake-up: the worker parks until WAKE_AT with an earlier request queued, nobody unparks it.")
    @State
    public static class EarlierDeadline extends Model {
        @Actor
        public void worker(II_Result r) {
            r.r1 = idle(WAKE_AT) ? 1 : 0;
        }

        @Actor
        public void requester(II_Result r) {
            r.r2 = schedule(this, EARLIER) ? 1 : 0;
        }
    }

    /**
     * The same, where the previous park left a stale {@code wakeAt} earlier than the request: a
     * requester that sees {@code parked} must also see the {@code wakeAt} published before it, or it
     * would skip the wake-up on the stale value.
     */
    @JCStressTest
    @Description("idle() publishing a later wakeAt over a stale earlier one vs schedule() between the two")
    @Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "The worker parked; the requester saw the new wakeAt, woke it.")
    @Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "The worker saw the request in its re-check and did not park.")
    @Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "Both saw each other: one spare unpark.")
    @Outcome(id = "1, 0", expect = FORBIDDEN,
            desc = "Lost wake-up: the requester saw parked with the stale wakeAt, or not parked at all.")
    @State
    public static class StaleWakeAt extends Model {
        public StaleWakeAt() {
            wakeAt = EARLIER - 100; // the previous park's, before this request's deadline
        }

        @Actor
        public void worker(II_Result r) {
            r.r1 = idle(WAKE_AT) ? 1 : 0;
        }

        @Actor
        public void requester(II_Result r) {
            r.r2 = schedule(this, EARLIER) ? 1 : 0;
        }
    }
}
