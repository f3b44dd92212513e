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
 * jcstress test of a hosted worker's plan (TimerWorker.planNext, run on the host at the end of a
 * cycle) against a schedule request for an earlier deadline: exactly one of the two must ask the
 * host for an early run, never neither (a lost wake-up: the request waits for the late plan) and
 * never both (the CAS on {@code parked} decides). As {@link WorkerParkStress}, a model that replicates
 * the real code's accesses, because {@code planNext} is private and calls a host.
 *
 * <p>Run: {@code java -jar load-test/target/jcstress.jar -t HostedPlanStress}.
 */
@JCStressTest
@Description("hosted planNext (wakeAt, parked, queue re-check, CAS) vs schedule() of an earlier deadline")
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "The host planned for later; the requester woke it early.")
@Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "The host saw the request in its re-check and runs again at once.")
@Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "Both saw each other; the requester's CAS won and woke the host.")
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "Lost wake-up: planned for later and nobody asked for an early run.")
@Outcome(id = "1, 1", expect = FORBIDDEN, desc = "Both asked for an early run: the CAS must let only one through.")
@Outcome(id = "2, 0", expect = FORBIDDEN, desc = "The host's CAS failed, yet nobody else claimed the wake-up.")
@State
public class HostedPlanStress {

    private static final long WAKE_AT = 1_000;
    private static final long EARLIER = 500;
    private static final VarHandle PARKED;

    static {
        try {
            PARKED = MethodHandles.lookup().findVarHandle(HostedPlanStress.class, "parked", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MessagePassingQueue<Object> requests = new MpscUnboundedXaddArrayQueue<>(8, 4);
    volatile boolean parked;
    volatile long wakeAt;

    /** TimerWorker.planNext with an empty wheel re-check: 0 plan later, 1 run again at once, 2 lost the CAS. */
    @Actor
    public void host(II_Result r) {
        wakeAt = WAKE_AT;
        parked = true;
        if (!requests.isEmpty()) {
            r.r1 = PARKED.compareAndSet(this, true, false) ? 1 : 2;
        } else {
            r.r1 = 0;
        }
    }

    /** TimerWorker.schedule() from the offer on: 1 if this request calls host.wake(). */
    @Actor
    public void requester(II_Result r) {
        requests.offer(this);
        r.r2 = parked && EARLIER - wakeAt < 0 && PARKED.compareAndSet(this, true, false) ? 1 : 0;
    }
}
