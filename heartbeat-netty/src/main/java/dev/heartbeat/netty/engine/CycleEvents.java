/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The event classes behind {@link FlightEvents}; only that class calls these methods, and only once it has
 * found {@code jdk.jfr} (initialising this class loads the event classes, and so needs it). Any thread; an
 * event object belongs to the thread that began it.
 */
public final class CycleEvents {

    /** Asked whether each event is enabled: an instance's {@code isEnabled()} reads its type's setting. */
    private static final HostedCycle HOSTED_CYCLE = new HostedCycle();
    private static final BatchRun BATCH_RUN = new BatchRun();

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
        HostedCycle e = new HostedCycle();
        e.begin();
        return e;
    }

    static void endHostedCycle(Object event, int work, boolean continued) {
        HostedCycle e = (HostedCycle) event;
        e.end();
        if (e.shouldCommit()) {
            e.work = work;
            e.continued = continued;
            e.commit();
        }
    }

    static Object beginBatchRun() {
        if (!BATCH_RUN.isEnabled()) {
            return null;
        }
        BatchRun e = new BatchRun();
        e.begin();
        return e;
    }

    static void endBatchRun(Object event, int actions, boolean continued) {
        BatchRun e = (BatchRun) event;
        e.end();
        if (e.shouldCommit()) {
            e.actions = actions;
            e.continued = continued;
            e.commit();
        }
    }

    /** One worker cycle run on its host event loop. */
    @Name("dev.heartbeat.HostedCycle")
    @Label("Heartbeat Hosted Cycle")
    @Category({"Heartbeat"})
    @Description("A Heartbeat worker cycle run as a task on its host event loop")
    @StackTrace(false)
    static final class HostedCycle extends Event {
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
    static final class BatchRun extends Event {
        @Label("Actions")
        @Description("Handlers whose actions this run took")
        int actions;

        @Label("Continued")
        @Description("The run used its time budget and queued the rest as a task of its own")
        boolean continued;
    }
}
