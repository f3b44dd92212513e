/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;

import dev.heartbeat.loadtest.MachineCpu.ThreadKind;
import org.junit.jupiter.api.Test;

/** The {@code /proc} parsers and the window split, on fixed sample text: no real {@code /proc} needed. */
class MachineCpuTest {

    private static final String PROC_STAT = "cpu  326547 10 40931 198356 200 3 3369 148 0 0\n"
            + "cpu0 163675 0 19837 99331 39 0 1625 75 0 0\n"
            + "cpu1 162872 0 21093 99024 160 0 1743 73 0 0\n"
            + "intr 123 0 0\nctxt 456\n";

    /** A stat line as Linux writes it; the thread's name holds a space and a parenthesis. */
    private static String stat(long pid, String name, long utime, long stime, long cutime) {
        return pid + " (" + name + ") S 1 1 1 0 -1 4194560 2153 0 0 0 " + utime + " " + stime + " " + cutime
                + " 5 20 0 24 0 31234 2821451776 30123 18446744073709551615 1 1 0 0 0 0 0 4096 17612 0 0 0 17 1 0 "
                + "0 0 0 0\n";
    }

    private static String status(long voluntary) {
        return "Name:\tdemo-worker-2-1\nState:\tS (sleeping)\nThreads:\t1\n"
                + "voluntary_ctxt_switches:\t" + voluntary + "\nnonvoluntary_ctxt_switches:\t7\n";
    }

    @Test
    void readsEveryStateOfTheCpuLine() {
        MachineCpu.Times t = MachineCpu.parseMachine(PROC_STAT);
        assertEquals(new MachineCpu.Times(326547, 10, 40931, 198356, 200, 3, 3369, 148, 2), t);
        assertEquals(326547 + 10 + 40931 + 3 + 3369 + 148, t.busy());
    }

    @Test
    void anOldKernelsShortCpuLineLeavesTheMissingStatesAtZero() {
        MachineCpu.Times t = MachineCpu.parseMachine("cpu 1 2 3 4\n");
        assertEquals(new MachineCpu.Times(1, 2, 3, 4, 0, 0, 0, 0, 0), t);
    }

    @Test
    void refusesTextThatIsNotProcStat() {
        assertThrows(IllegalArgumentException.class, () -> MachineCpu.parseMachine("intr 1 2 3\n"));
        assertThrows(IllegalArgumentException.class, () -> MachineCpu.parseTask("12 no name here"));
    }

    @Test
    void readsUserAndSystemTicksAfterANameWithSpacesAndParentheses() {
        MachineCpu.Task t = MachineCpu.parseTask(stat(4711, "GC Thread#0) (x", 1234, 56, 7));
        assertEquals(new MachineCpu.Task("GC Thread#0) (x", 1234, 56, 7 + 5), t);
        assertEquals(1290, t.ticks());
    }

    @Test
    void readsTheVoluntaryContextSwitchesNotTheNonvoluntaryOnes() {
        assertEquals(98765, MachineCpu.parseVoluntarySwitches(status(98765)));
        assertEquals(-1, MachineCpu.parseVoluntarySwitches("Name:\tx\n"));
    }

    @Test
    void tellsTheThreadKindsApartByTheirTruncatedLinuxNames() {
        assertEquals("heartbeat-monit", MachineCpu.comm(ThreadKind.HEARTBEAT_WORKER_NAME));
        assertEquals(ThreadKind.HEARTBEAT_WORKER, ThreadKind.of("heartbeat-monit"));
        assertEquals(ThreadKind.EVENT_LOOP, ThreadKind.of("demo-worker-2-1"));
        assertEquals(ThreadKind.EVENT_LOOP, ThreadKind.of("server-loop-3-1"));
        assertEquals(ThreadKind.CLIENT_LOOP, ThreadKind.of("client-loop-4-2"));
        for (String gc : List.of("GC Thread#1", "G1 Conc#0", "G1 Refine#0", "G1 Main Marker", "ZWorker#0", "ZDriver")) {
            assertEquals(ThreadKind.GC, ThreadKind.of(gc), gc);
        }
        for (String jit : List.of("C2 CompilerThre", "C1 CompilerThre", "Sweeper thread")) {
            assertEquals(ThreadKind.JIT, ThreadKind.of(jit), jit);
        }
        for (String other : List.of("java", "VM Thread", "demo-boss-1-1", "heartbeat-timer", "demo-debug-3-1")) {
            assertEquals(ThreadKind.OTHER, ThreadKind.of(other), other);
        }
    }

    @Test
    void splitsTheMachineAndTheServerThreadsOverTheWindow() {
        long server = 100;
        long client = 200;
        long harness = 300;
        long earlier = 400;
        long ksoftirqd = 14;
        long stranger = 500;
        CpuSplit.Pids pids = new CpuSplit.Pids(List.of(server), List.of(client), harness,
                List.of(server, client, earlier));
        CpuSplit.Snapshot start = new CpuSplit.Snapshot(0,
                MachineCpu.parseMachine("cpu 1000 0 500 5000 0 0 100 0\n"),
                Map.of(server, task(server, "java", 100), client, task(client, "java", 100),
                        harness, task(harness, "java", 50), earlier, task(earlier, "java", 900),
                        ksoftirqd, task(ksoftirqd, "ksoftirqd/0", 10), stranger, task(stranger, "make", 0, 100)),
                Map.of(server, Map.of(1L, thread("demo-worker-2-1", 10, 1000), 2L,
                        thread("heartbeat-monit", 5, 50), 3L, thread("GC Thread#0", 20, 7), 4L,
                        thread("exits-in-window", 5, 0))));
        // 10 s later; the server used 3 s: 1.5 s on its event loop, 0.25 s on the worker, 0.5 s of GC,
        // 0.25 s on a JIT thread started meanwhile, 0.5 s on a thread that exited
        CpuSplit.Snapshot end = new CpuSplit.Snapshot(10_000_000_000L,
                MachineCpu.parseMachine("cpu 1800 0 900 6000 0 0 200 50\n"),
                Map.of(server, task(server, "java", 400), client, task(client, "java", 300),
                        harness, task(harness, "java", 60), earlier, task(earlier, "java", 920),
                        ksoftirqd, task(ksoftirqd, "ksoftirqd/0", 40), stranger, task(stranger, "make", 150, 500)),
                Map.of(server, Map.of(1L, thread("demo-worker-2-1", 160, 21000), 2L,
                        thread("heartbeat-monit", 30, 1050), 3L, thread("GC Thread#0", 70, 9), 5L,
                        thread("C2 CompilerThre", 25, 3))));
        CpuSplit c = CpuSplit.between(start, end, pids);

        assertEquals(10.0, c.windowSeconds, 1e-9);
        assertEquals(13.5, c.busy(), 1e-9); // 800 user + 400 system + 100 softirq + 50 steal ticks
        assertEquals(0, c.missingSeconds, 1e-9, "no cpuN lines: the cores are unknown");
        assertEquals(3.0, c.servers, 1e-9);
        assertEquals(2.0, c.clients, 1e-9);
        assertEquals(0.1, c.harness, 1e-9);
        assertEquals(13.5 - 3.0 - 2.0 - 0.1, c.everythingElse, 1e-9);
        assertEquals(0.3, c.ksoftirqd, 1e-9);
        assertEquals(0.2, c.previousRuns, 1e-9);
        assertEquals(1, c.previousLeft);
        assertEquals(4.0, c.exitedChildren, 1e-9); // make's children that exited: 400 ticks
        assertEquals(List.of(new CpuSplit.Other(stranger, "make's exited children", 4.0),
                new CpuSplit.Other(stranger, "make", 1.5), new CpuSplit.Other(ksoftirqd, "ksoftirqd/0", 0.3),
                new CpuSplit.Other(earlier, "java", 0.2)), c.busiestOthers);

        assertEquals(1.5, c.thread(ThreadKind.EVENT_LOOP), 1e-9);
        assertEquals(0.25, c.thread(ThreadKind.HEARTBEAT_WORKER), 1e-9);
        assertEquals(0.5, c.thread(ThreadKind.GC), 1e-9);
        assertEquals(0.25, c.thread(ThreadKind.JIT), 1e-9);
        assertEquals(0.5, c.thread(ThreadKind.OTHER), 1e-9); // the exited thread, from the process's time
        assertEquals(3.0, c.serverTotal(), 1e-9);
        assertEquals(20000, c.eventLoopWakeups);
        assertEquals(2000, c.eventLoopWakeupsPerSecond(), 1e-9);
        assertEquals(1000, c.workerWakeups);
        assertEquals(100, c.workerWakeupsPerSecondPerProcess(), 1e-9);
    }

    @Test
    void onTheLocalTransportTheClientLoopsOfTheServersJvmCountAsClients() {
        long jvm = 100;
        CpuSplit.Pids pids = new CpuSplit.Pids(List.of(jvm), List.of(), 300, List.of(jvm));
        CpuSplit.Snapshot start = new CpuSplit.Snapshot(0, MachineCpu.parseMachine("cpu 0 0 0 0\n"),
                Map.of(jvm, task(jvm, "java", 0)), Map.of(jvm, Map.of(1L, thread("server-loop-2-1", 0, 0), 2L,
                        thread("client-loop-3-1", 0, 0))));
        CpuSplit.Snapshot end = new CpuSplit.Snapshot(1_000_000_000L, MachineCpu.parseMachine("cpu 500 0 0 0\n"),
                Map.of(jvm, task(jvm, "java", 500)), Map.of(jvm, Map.of(1L, thread("server-loop-2-1", 200, 10), 2L,
                        thread("client-loop-3-1", 300, 20))));
        CpuSplit c = CpuSplit.between(start, end, pids);
        assertEquals(2.0, c.servers, 1e-9);
        assertEquals(3.0, c.clients, 1e-9);
        assertEquals(2.0, c.serverTotal(), 1e-9);
        assertEquals(0, c.workerProcesses);
        assertEquals(Double.NaN, c.workerWakeupsPerSecondPerProcess());
        assertNull(CpuSplit.between(null, end, pids));
    }

    private static MachineCpu.Task task(long pid, String name, long ticks) {
        return task(pid, name, ticks, 0);
    }

    /** A process whose exited children used {@code children} ticks (and 5 more of system time). */
    private static MachineCpu.Task task(long pid, String name, long ticks, long children) {
        return MachineCpu.parseTask(stat(pid, name, ticks, 0, children));
    }

    private static MachineCpu.ThreadSample thread(String name, long ticks, long voluntary) {
        return new MachineCpu.ThreadSample(ThreadKind.of(MachineCpu.parseTask(stat(1, name, ticks - ticks / 2,
                ticks / 2, 0)).name()), ticks, MachineCpu.parseVoluntarySwitches(status(voluntary)));
    }

    /**
     * A tickless kernel's tick-based accounting of busy time can miss part of a window when its cores
     * switch between idle and busy often: the states then add up to less than the cores times the
     * window, and the split says by how much (on this project's VM a 100 s window of the tcp load test
     * missed up to 46 of its 200 core-seconds, which made "everything else" negative).
     */
    @Test
    void saysHowMuchOfTheWindowTheStatesMiss() {
        CpuSplit.Pids pids = new CpuSplit.Pids(List.of(), List.of(), 300, List.of());
        CpuSplit.Snapshot start = new CpuSplit.Snapshot(0, MachineCpu.parseMachine(
                "cpu 1000 0 500 5000 0 0 100 0\ncpu0 500 0 250 2500 0 0 50 0\ncpu1 500 0 250 2500 0 0 50 0\n"),
                Map.of(), Map.of());
        // 10 s on 2 cores are 2000 ticks; the states grew by 700 busy + 900 idle = 1600: 4 s missing
        CpuSplit.Snapshot end = new CpuSplit.Snapshot(10_000_000_000L, MachineCpu.parseMachine(
                "cpu 1500 0 700 5900 0 0 100 0\ncpu0 750 0 350 2950 0 0 50 0\ncpu1 750 0 350 2950 0 0 50 0\n"),
                Map.of(), Map.of());
        CpuSplit c = CpuSplit.between(start, end, pids);
        assertEquals(2, c.machine.cores());
        assertEquals(7.0, c.busy(), 1e-9);
        assertEquals(4.0, c.missingSeconds, 1e-9);
    }
}
