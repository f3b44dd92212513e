/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

/**
 * A thread that lends itself to a {@link TimerWorker}'s duty cycle, such as a Netty event loop that
 * is awake anyway: see {@link TimerWorker#startHosted}. The worker then runs its cycles on the host
 * by calling {@link TimerWorker#runHosted()} there, and its own thread only watches that the host
 * keeps doing so.
 *
 * <p>Why: on a virtual machine a thread that parks and wakes dozens of times a second costs tens of
 * microseconds of CPU per wake-up whatever it does when awake, while a cycle run by a thread that
 * is busy with I/O costs only its work.
 */
public interface CycleHost {

    /**
     * Called on the host, from inside {@link TimerWorker#runHosted()}: run {@code runHosted()} again
     * on the host in {@code delayNanos} ({@code 0}: as soon as possible, after what is queued),
     * no later. A run planned by an earlier call may be replaced or kept: a run the worker did not
     * need costs one cycle with nothing due, which plans again. Not called when the worker has
     * nothing to wait for (an empty wheel and no request): the next request calls {@link #wake()}.
     * Must not throw.
     *
     * @param delayNanos how long from now, {@code >= 0}
     */
    void plan(long delayNanos);

    /**
     * Any thread: run {@link TimerWorker#runHosted()} on the host soon, because a request needs the
     * worker earlier than its plan. The worker calls it at most once per plan. Must not block and
     * must not throw; if the host cannot run tasks any more, ignore it: the worker's own thread
     * takes over (see {@link TimerWorker#startHosted}).
     */
    void wake();
}
