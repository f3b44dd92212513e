/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.util.Optional;

/**
 * The JDK Flight Recorder events of the work Heartbeat does on event loops: {@code dev.heartbeat.HostedCycle}
 * (a worker cycle run on its host loop) and {@code dev.heartbeat.BatchRun} (one run of a hand-off batch), each
 * with its duration, thread and CPU time ({@link CycleEvents}), so that a recording gives the distribution of
 * these tasks per event loop. Both are disabled unless a recording enables them; then a run costs one check of
 * a flag and allocates nothing.
 *
 * <p>Both are enabled by default in any recording (they have no setting in the JDK's {@code .jfc} files) and
 * have no threshold, so every run is recorded while one runs; without a recording a run costs one check of
 * the event type's enabled flag and allocates nothing:
 *
 * <pre>
 * java -XX:StartFlightRecording:filename=hb.jfr ...     (or: jcmd PID JFR.start filename=hb.jfr)
 * jfr print --events dev.heartbeat.HostedCycle,dev.heartbeat.BatchRun hb.jfr
 * jfr summary hb.jfr
 * </pre>
 *
 * <p>{@code jdk.jfr} is an optional module ({@code requires static}): on a runtime without it (a jlink image
 * that leaves it out), or where this module does not read it, the events are never made. The event classes
 * are only ever loaded through this class, behind {@link #AVAILABLE}, because loading one needs
 * {@code jdk.jfr.Event}. Any thread.
 */
public final class FlightEvents {

    /** Whether {@code jdk.jfr} is there and readable, so that the event classes can be loaded. */
    public static final boolean AVAILABLE = available();

    private FlightEvents() {
    }

    private static boolean available() {
        Optional<Module> jfr = ModuleLayer.boot().findModule("jdk.jfr");
        if (jfr.isEmpty() || !FlightEvents.class.getModule().canRead(jfr.get())) {
            return false;
        }
        try {
            return CycleEvents.load();
        } catch (LinkageError e) {
            return false;
        }
    }

    /**
     * Loads the event classes now, on the calling thread, if {@code jdk.jfr} is there (a call runs this class's
     * initialiser, which does it). An event class's first load registers it with the Flight Recorder, whose
     * metadata is set up on the first registration in the JVM, recording or not: about 0.1 s of CPU on this
     * project's 2-vCPU VM (async-profiler, {@code load-test/docs/results.md}). A monitor calls this as it is
     * built, so that the first hosted cycle or hand-off batch does not pay it on an event loop.
     */
    static void preload() {
        // Nothing more: the initialiser has run by the time this body does.
    }

    /** A hosted cycle's event, begun, or null if none is recorded. */
    public static Object beginHostedCycle() {
        return AVAILABLE ? CycleEvents.beginHostedCycle() : null;
    }

    /** Ends and commits what {@link #beginHostedCycle} returned (nothing for null). */
    static void endHostedCycle(Object event, int work, boolean continued) {
        if (event != null) {
            CycleEvents.endHostedCycle(event, work, continued);
        }
    }

    /** A batch run's event, begun, or null if none is recorded. */
    public static Object beginBatchRun() {
        return AVAILABLE ? CycleEvents.beginBatchRun() : null;
    }

    /** Ends and commits what {@link #beginBatchRun} returned (nothing for null). */
    static void endBatchRun(Object event, int actions, boolean continued) {
        if (event != null) {
            CycleEvents.endBatchRun(event, actions, continued);
        }
    }
}
