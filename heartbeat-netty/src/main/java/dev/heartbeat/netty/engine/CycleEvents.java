/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Timespan;

/**
 * The event classes behind {@link FlightEvents}; only that class calls these methods, and only once it has
 * found {@code jdk.jfr} (initialising this class loads the event classes, and so needs it). Any thread; an
 * event object belongs to the thread that began it.
 *
 * <p>Each event also carries the CPU time its thread spent in the run, so that a run whose wall time is long
 * because the thread was off its core (on a machine with more threads than cores) can be told from one that
 * worked that long. The thread's CPU clock is read just before the event begins and just after it ends, so the
 * event's duration does not include those reads (system calls, about a microsecond each on a virtual machine),
 * and its CPU time does, at most. Only while a recording enables the event; else nothing is read.
 */
public final class CycleEvents {

    /** Asked whether each event is enabled: an instance's {@code isEnabled()} reads its type's setting. */
    private static final HostedCycle HOSTED_CYCLE = new HostedCycle();
    private static final BatchRun BATCH_RUN = new BatchRun();
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    /** Whether the JVM measures a thread's CPU time: else the events' CPU time is -1. */
    private static final boolean THREAD_CPU =
            THREADS.isCurrentThreadCpuTimeSupported() && THREADS.isThreadCpuTimeEnabled();

    private CycleEvents() {
    }

    /** Loads the event classes (and so {@code jdk.jfr}): throws a {@link LinkageError} where that fails. */
    static boolean load() {
        return HOSTED_CYCLE != null && BATCH_RUN != null;
    }

    static Object beginHostedCycle() {
        if (!HOSTED_CYCLE.isEnabled()) {
            return null;
        }
        return new HostedCycle().started();
    }

    static void endHostedCycle(Object event, int work, boolean continued) {
        HostedCycle e = (HostedCycle) event;
        e.end();
        if (e.shouldCommit()) {
            e.work = work;
            e.continued = continued;
            e.commitWithCpuTime();
        }
    }

    static Object beginBatchRun() {
        if (!BATCH_RUN.isEnabled()) {
            return null;
        }
        return new BatchRun().started();
    }

    static void endBatchRun(Object event, int actions, boolean continued) {
        BatchRun e = (BatchRun) event;
        e.end();
        if (e.shouldCommit()) {
            e.actions = actions;
            e.continued = continued;
            e.commitWithCpuTime();
        }
    }

    /** A run on an event loop, with the CPU time its thread spent in it. */
    abstract static class Run extends Event {
        @Label("CPU Time")
        @Description("CPU time the thread spent in this run (with two reads of its CPU clock), -1 if not measured")
        @Timespan(Timespan.NANOSECONDS)
        long cpuTime;

        /** The thread's CPU clock when the run began (-1 if not measured): not recorded. */
        transient long cpuStart;

        /** Reads the thread's CPU clock, then begins the event; this. */
        final Run started() {
            cpuStart = THREAD_CPU ? THREADS.getCurrentThreadCpuTime() : -1;
            begin();
            return this;
        }

        /** After {@code end()}: the CPU time since {@link #started}, then commits. */
        final void commitWithCpuTime() {
            long now = cpuStart < 0 ? -1 : THREADS.getCurrentThreadCpuTime(); // -1 if switched off meanwhile
            cpuTime = now < 0 ? -1 : now - cpuStart;
            commit();
        }
    }

    /** One worker cycle run on its host event loop. */
    @Name("dev.heartbeat.HostedCycle")
    @Label("Heartbeat Hosted Cycle")
    @Category({"Heartbeat"})
    @Description("A Heartbeat worker cycle run as a task on its host event loop")
    @StackTrace(false)
    static final class HostedCycle extends Run {
        @Label("Work")
        @Description("Requests applied plus checks expired in this run")
        int work;

        @Label("Continued")
        @Description("Work was left for a run of its own, queued at once")
        boolean continued;
    }

    /** One run of the hand-off batch of an event loop. */
    @Name("dev.heartbeat.BatchRun")
    @Label("Heartbeat Batch Run")
    @Category({"Heartbeat"})
    @Description("A run of the actions (pings, closes, idle events) Heartbeat handed to an event loop")
    @StackTrace(false)
    static final class BatchRun extends Run {
        @Label("Actions")
        @Description("Handlers whose actions this run took")
        int actions;

        @Label("Continued")
        @Description("The run used its time budget and queued the rest as a task of its own")
        boolean continued;
    }
}
