/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Where the machine's CPU went over one run window, from {@code /proc} snapshots at its start and
 * end: the machine's states ({@code /proc/stat}), the servers', clients' and this coordinator's
 * (the harness's) processes, "everything else" (busy minus those three) with the kernel's
 * {@code ksoftirqd/N} threads, the earlier runs' processes, the processes that exited in the window
 * (from their parents' children's times) and the busiest other processes named,
 * and the server processes' threads by kind with the voluntary context switches (wake-ups) of their
 * event loops and Heartbeat worker. In ticks of 1/100 s, so each figure is exact to about 0.01 s per
 * task. Absent (null) where there is no {@code /proc}. Built on the coordinator's thread.
 *
 * <p>On the local transport the server's JVM also runs the clients: its {@code client-loop} threads
 * count as clients, the rest of the process as the server.
 */
final class CpuSplit {

    /** The busiest other processes named in the report. */
    private static final int TOP_OTHERS = 5;

    /** The processes of one run: its servers and clients, and every process started before it. */
    record Pids(List<Long> servers, List<Long> clients, long harness, Collection<Long> previous) {
    }

    /** The window's start or end as {@code /proc} showed it. */
    record Snapshot(long nanos, MachineCpu.Times machine, Map<Long, MachineCpu.Task> processes,
            Map<Long, Map<Long, MachineCpu.ThreadSample>> serverThreads) {

        /** Reads {@code /proc} now; null where it cannot be read. */
        static Snapshot take(Pids pids) {
            MachineCpu.Times machine = MachineCpu.machine();
            if (machine == null) {
                return null;
            }
            Map<Long, Map<Long, MachineCpu.ThreadSample>> threads = new LinkedHashMap<>();
            for (long pid : pids.servers()) {
                threads.put(pid, MachineCpu.threads(pid));
            }
            return new Snapshot(System.nanoTime(), machine, MachineCpu.processes(), threads);
        }
    }

    /** A process outside the load test, and its CPU over the window. */
    record Other(long pid, String name, double cpuSeconds) {
    }

    final double windowSeconds;
    /** The machine's time by state over the window, in ticks, summed over the cores. */
    final MachineCpu.Times machine;
    /**
     * The window times the cores less the sum of {@code /proc/stat}'s states, in seconds (0 if the
     * cores are unknown): positive if the states miss part of the window, negative if they count more
     * than it. A tickless kernel counts busy time by timer ticks, which it loses or bunches when its
     * cores switch between idle and busy thousands of times a second: under the load test this
     * project's VM missed up to 23 % of a window and counted up to 4 % more than another. Machine busy
     * and {@link #everythingElse} are off by up to this much; the per-process figures (the
     * scheduler's own runtimes) are not.
     */
    final double missingSeconds;
    final double servers;
    final double clients;
    final double harness;
    /** Busy minus servers, clients and harness: other processes, kernel threads, steal. */
    final double everythingElse;
    /** Of everything else: the kernel's softirq threads, and processes started by earlier runs. */
    final double ksoftirqd;
    final double previousRuns;
    /**
     * Of everything else, roughly: the whole-life CPU of processes that exited in the window and were
     * waited for (their parents' cutime and cstime grew), this coordinator's children included, so a
     * short-lived process is seen whole and a long-lived one that exited in the window is overcounted.
     */
    final double exitedChildren;
    /** Earlier runs' processes still there when the window started. */
    final int previousLeft;
    final List<Other> busiestOthers;
    /** The server processes' threads over the window by kind, in seconds (exited threads count as other). */
    final Map<MachineCpu.ThreadKind, Double> serverThreads;
    /** Voluntary context switches over the window: event loops of every server, and Heartbeat's workers. */
    final long eventLoopWakeups;
    final long workerWakeups;
    /** Server processes that had a Heartbeat worker thread. */
    final int workerProcesses;

    private CpuSplit(Snapshot a, Snapshot b, Pids pids) {
        windowSeconds = (b.nanos() - a.nanos()) / 1e9;
        machine = b.machine().minus(a.machine());
        missingSeconds = machine.cores() == 0 ? 0
                : machine.cores() * windowSeconds - machine.total() / MachineCpu.TICKS_PER_SECOND;
        Set<Long> ours = new HashSet<>(pids.servers());
        ours.addAll(pids.clients());
        ours.add(pids.harness());
        serverThreads = new EnumMap<>(MachineCpu.ThreadKind.class);
        for (MachineCpu.ThreadKind k : MachineCpu.ThreadKind.values()) {
            serverThreads.put(k, 0.0);
        }
        long loopSwitches = 0;
        long workerSwitches = 0;
        int workers = 0;
        for (long pid : pids.servers()) {
            Map<Long, MachineCpu.ThreadSample> before = a.serverThreads().getOrDefault(pid, Map.of());
            double threadsSum = 0;
            boolean worker = false;
            for (Map.Entry<Long, MachineCpu.ThreadSample> e : b.serverThreads().getOrDefault(pid, Map.of())
                    .entrySet()) {
                MachineCpu.ThreadSample t = e.getValue();
                MachineCpu.ThreadSample t0 = before.get(e.getKey()); // null: started in the window
                double s = (t.ticks() - (t0 == null ? 0 : t0.ticks())) / MachineCpu.TICKS_PER_SECOND;
                threadsSum += s;
                serverThreads.merge(t.kind(), s, Double::sum);
                long switches = t.voluntarySwitches() - (t0 == null ? 0 : t0.voluntarySwitches());
                if (t.kind() == MachineCpu.ThreadKind.EVENT_LOOP) {
                    loopSwitches += switches;
                } else if (t.kind() == MachineCpu.ThreadKind.HEARTBEAT_WORKER) {
                    workerSwitches += switches;
                    worker = true;
                }
            }
            // threads that exited in the window are in the process's time only
            serverThreads.merge(MachineCpu.ThreadKind.OTHER, Math.max(0, delta(a, b, pid) - threadsSum), Double::sum);
            workers += worker ? 1 : 0;
        }
        eventLoopWakeups = loopSwitches;
        workerWakeups = workerSwitches;
        workerProcesses = workers;
        double clientLoops = serverThreads.get(MachineCpu.ThreadKind.CLIENT_LOOP);
        servers = sum(a, b, pids.servers()) - clientLoops;
        clients = sum(a, b, pids.clients()) + clientLoops;
        harness = delta(a, b, pids.harness());
        everythingElse = machine.busy() / MachineCpu.TICKS_PER_SECOND - servers - clients - harness;
        Set<Long> previous = new HashSet<>(pids.previous());
        previous.removeAll(ours);
        previousRuns = sum(a, b, previous);
        int left = 0;
        for (long pid : previous) {
            left += a.processes().containsKey(pid) ? 1 : 0;
        }
        previousLeft = left;
        double softirqThreads = 0;
        double exited = 0;
        List<Other> others = new ArrayList<>();
        for (Map.Entry<Long, MachineCpu.Task> e : b.processes().entrySet()) {
            MachineCpu.Task start = a.processes().get(e.getKey());
            double children = start == null ? 0 : (e.getValue().exitedChildrenTicks() - start.exitedChildrenTicks())
                    / MachineCpu.TICKS_PER_SECOND;
            exited += children;
            if (children > 0) {
                others.add(new Other(e.getKey(), e.getValue().name() + "'s exited children", children));
            }
            if (ours.contains(e.getKey())) {
                continue;
            }
            double s = delta(a, b, e.getKey());
            if (e.getValue().name().startsWith("ksoftirqd/")) {
                softirqThreads += s;
            }
            if (s > 0) {
                others.add(new Other(e.getKey(), e.getValue().name(), s));
            }
        }
        ksoftirqd = softirqThreads;
        exitedChildren = exited;
        others.sort(Comparator.comparingDouble(Other::cpuSeconds).reversed());
        busiestOthers = List.copyOf(others.subList(0, Math.min(TOP_OTHERS, others.size())));
    }

    /** The split between two snapshots; null if either is. */
    static CpuSplit between(Snapshot start, Snapshot end, Pids pids) {
        return start == null || end == null ? null : new CpuSplit(start, end, pids);
    }

    /** Busy CPU seconds of the machine over the window. */
    double busy() {
        return machine.busy() / MachineCpu.TICKS_PER_SECOND;
    }

    /** Ticks of one state over the window, in seconds. */
    static double seconds(long ticks) {
        return ticks / MachineCpu.TICKS_PER_SECOND;
    }

    /** The server processes' CPU over the window, every thread kind (on local: client loops excluded). */
    double serverTotal() {
        double sum = 0;
        for (Map.Entry<MachineCpu.ThreadKind, Double> e : serverThreads.entrySet()) {
            sum += e.getKey() == MachineCpu.ThreadKind.CLIENT_LOOP ? 0 : e.getValue();
        }
        return sum;
    }

    double thread(MachineCpu.ThreadKind kind) {
        return serverThreads.get(kind);
    }

    double eventLoopWakeupsPerSecond() {
        return eventLoopWakeups / windowSeconds;
    }

    /** Heartbeat worker wake-ups per second and process; NaN without a worker. */
    double workerWakeupsPerSecondPerProcess() {
        return workerProcesses == 0 ? Double.NaN : workerWakeups / windowSeconds / workerProcesses;
    }

    /** "name (pid) 1.23 s, ..." for the busiest other processes. */
    String describeOthers() {
        List<String> parts = new ArrayList<>();
        for (Other o : busiestOthers) {
            parts.add(String.format(Locale.ROOT, "%s (pid %d) %.2f s", o.name(), o.pid(), o.cpuSeconds()));
        }
        return parts.isEmpty() ? "none visible" : String.join(", ", parts);
    }

    /** A process's CPU seconds between the snapshots: from 0 if it started in between, 0 if it exited. */
    private static double delta(Snapshot a, Snapshot b, long pid) {
        MachineCpu.Task end = b.processes().get(pid);
        if (end == null) {
            return 0;
        }
        MachineCpu.Task start = a.processes().get(pid);
        return (end.ticks() - (start == null ? 0 : start.ticks())) / MachineCpu.TICKS_PER_SECOND;
    }

    private static double sum(Snapshot a, Snapshot b, Collection<Long> pids) {
        double sum = 0;
        for (long pid : pids) {
            sum += delta(a, b, pid);
        }
        return sum;
    }
}
