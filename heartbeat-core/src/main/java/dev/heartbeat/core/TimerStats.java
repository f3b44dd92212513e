/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

/**
 * A snapshot of a {@link TimerWorker}'s counters. Counts are totals since the worker was built.
 *
 * @param entries entries in the wheel at the end of the latest cycle
 * @param scheduled schedule requests applied (registrations and moves)
 * @param cancelled cancel requests that removed an entry from the wheel
 * @param expired handler calls: entries that came due while armed
 * @param rearmed lazy re-arms from inside a handler ({@link TimerWorker#rearm})
 * @param requestsDrained requests taken from the queue (schedule and cancel)
 * @param queueDepth requests waiting in the queue when the snapshot was taken
 * @param rejected requests refused because the worker was closed
 * @param callbackFailures handler calls that threw
 * @param worstLatenessNanos the largest delay seen between a deadline and its handler call
 * @param wakeups times the worker woke from a park
 * @param cycles duty cycles run
 * @param hostedNanos CPU time the host threads spent in the cycles they ran for a {@link CycleHost}
 *     (by each thread's CPU clock; wall time where the JVM cannot measure thread CPU); 0 for a worker
 *     on its own thread. An estimate: one cycle in 16 is timed, and each cycle counts the cost of the
 *     latest timed one, because reading a thread's CPU clock is a system call that cost a quarter of
 *     a cycle
 * @param hostTakeovers times the worker's own thread ran cycles because its host had not run a
 *     planned cycle within the watchdog period
 */
public record TimerStats(
        long entries,
        long scheduled,
        long cancelled,
        long expired,
        long rearmed,
        long requestsDrained,
        long queueDepth,
        long rejected,
        long callbackFailures,
        long worstLatenessNanos,
        long wakeups,
        long cycles,
        long hostedNanos,
        long hostTakeovers) {
}
