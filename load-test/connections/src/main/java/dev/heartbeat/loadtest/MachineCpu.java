/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time of the whole machine, of processes and of their threads, from Linux's {@code /proc} (in
 * USER_HZ ticks, 1/100 s): {@code /proc/stat}'s first line, {@code /proc/<pid>/stat} and
 * {@code /proc/<pid>/task/<tid>/stat} and {@code status}. The parsers take the files' text, so they
 * are tested on fixed samples; the readers return null or empty where {@code /proc} cannot be read
 * (not Linux, a process gone). Stateless; any thread.
 */
final class MachineCpu {

    /** Linux reports /proc times in USER_HZ, which is 100 on every architecture it runs on. */
    static final double TICKS_PER_SECOND = 100;
    /** Linux keeps the first 15 bytes of a thread's name ({@code TASK_COMM_LEN} - 1). */
    static final int COMM_LENGTH = 15;

    private static final Path PROC = Path.of("/proc");

    private MachineCpu() {
    }

    /**
     * The machine's time since boot by state, summed over the cores, in ticks: {@code /proc/stat}'s
     * "cpu" line; and the number of cores, its "cpuN" lines (0 if it has none).
     */
    record Times(long user, long nice, long system, long idle, long iowait, long irq, long softirq, long steal,
            int cores) {

        /** Everything but idle and I/O wait; steal included (the hypervisor gave the time to another guest). */
        long busy() {
            return user + nice + system + irq + softirq + steal;
        }

        /** Every state, idle and I/O wait included. */
        long total() {
            return busy() + idle + iowait;
        }

        Times minus(Times o) {
            return new Times(user - o.user, nice - o.nice, system - o.system, idle - o.idle, iowait - o.iowait,
                    irq - o.irq, softirq - o.softirq, steal - o.steal, cores);
        }
    }

    /**
     * One task's (process or thread) name and CPU time so far, in ticks, from its {@code stat} file,
     * and the whole-life CPU time of its children that exited and were waited for (cutime + cstime).
     */
    record Task(String name, long userTicks, long systemTicks, long exitedChildrenTicks) {

        long ticks() {
            return userTicks + systemTicks;
        }
    }

    /** One thread of a process: what kind it is, its CPU time in ticks, its voluntary context switches. */
    record ThreadSample(ThreadKind kind, long ticks, long voluntarySwitches) {
    }

    /** Thread groups of a load-test JVM, told apart by the names the JVM gives its native threads. */
    enum ThreadKind {
        /** The demo server's ({@code demo-worker-*}) and the local worker's ({@code server-loop-*}) event loops. */
        EVENT_LOOP("event loops"),
        /** The local worker's client event loops ({@code client-loop-*}), in the server's JVM there. */
        CLIENT_LOOP("client loops"),
        /** Heartbeat's worker thread. */
        HEARTBEAT_WORKER("Heartbeat worker"),
        /** G1's, Parallel's and ZGC's threads (Serial collects in the "VM Thread": other). */
        GC("GC"),
        /** The JIT compilers and the code cache sweeper. */
        JIT("JIT"),
        OTHER("other");

        /** The Heartbeat worker's thread name in the demo server and the local worker (HeartbeatMonitor's default). */
        static final String HEARTBEAT_WORKER_NAME = "heartbeat-monitor";
        private static final List<String> EVENT_LOOP_PREFIXES = List.of("demo-worker", "server-loop");
        private static final List<String> GC_PREFIXES = List.of("GC Thread", "G1 ", "ZWorker", "ZDriver", "ZDirector",
                "ZStat", "ZUnmapper", "ZUncommitter", "RuntimeWorker", "Shenandoah");
        private static final List<String> JIT_PREFIXES = List.of("C1 CompilerThre", "C2 CompilerThre",
                "Sweeper thread");

        final String label;

        ThreadKind(String label) {
            this.label = label;
        }

        /** The kind of a thread by its Linux name (at most {@link #COMM_LENGTH} characters). */
        static ThreadKind of(String comm) {
            if (startsWithAny(comm, EVENT_LOOP_PREFIXES)) {
                return EVENT_LOOP;
            }
            if (comm.startsWith("client-loop")) {
                return CLIENT_LOOP;
            }
            if (comm.equals(comm(HEARTBEAT_WORKER_NAME))) {
                return HEARTBEAT_WORKER;
            }
            if (startsWithAny(comm, GC_PREFIXES)) {
                return GC;
            }
            return startsWithAny(comm, JIT_PREFIXES) ? JIT : OTHER;
        }

        private static boolean startsWithAny(String s, List<String> prefixes) {
            for (String p : prefixes) {
                if (s.startsWith(p)) {
                    return true;
                }
            }
            return false;
        }
    }

    /** A thread name as Linux keeps it. */
    static String comm(String threadName) {
        return threadName.length() <= COMM_LENGTH ? threadName : threadName.substring(0, COMM_LENGTH);
    }

    // ------------------------------------------------------------------------------------ parsers

    /** The "cpu" line of {@code /proc/stat}: user nice system idle iowait irq softirq steal (older kernels: fewer). */
    static Times parseMachine(String procStat) {
        String first = procStat.lines().findFirst().orElse("");
        String[] f = first.trim().split("\\s+", -1);
        if (!"cpu".equals(f[0]) || f.length < 5) {
            throw new IllegalArgumentException("not the cpu line of /proc/stat: " + JsonCodec.abbreviate(first));
        }
        long[] v = new long[8];
        for (int i = 0; i < v.length && i + 1 < f.length; i++) {
            v[i] = Long.parseLong(f[i + 1]);
        }
        int cores = (int) procStat.lines().filter(l -> l.matches("cpu[0-9]+\\s.*")).count();
        return new Times(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], cores);
    }

    /**
     * A {@code stat} file of a process or thread: the name is between the first '(' and the last ')'
     * (it may hold both, and spaces); utime, stime, cutime and cstime are fields 14 to 17.
     */
    static Task parseTask(String stat) {
        int open = stat.indexOf('(');
        int close = stat.lastIndexOf(')');
        if (open < 0 || close < open) {
            throw new IllegalArgumentException("not a /proc stat line: " + JsonCodec.abbreviate(stat));
        }
        // after the name: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17)
        String[] f = stat.substring(close + 1).trim().split("\\s+", -1);
        if (f.length < 15) {
            throw new IllegalArgumentException("a /proc stat line too short: " + JsonCodec.abbreviate(stat));
        }
        return new Task(stat.substring(open + 1, close), Long.parseLong(f[11]), Long.parseLong(f[12]),
                Long.parseLong(f[13]) + Long.parseLong(f[14]));
    }

    /** {@code voluntary_ctxt_switches} of a {@code status} file: the times the task blocked; -1 if absent. */
    static long parseVoluntarySwitches(String status) {
        String key = "voluntary_ctxt_switches:";
        for (String line : status.split("\n", -1)) {
            if (line.startsWith(key)) {
                return Long.parseLong(line.substring(key.length()).trim());
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------------------------ readers

    /** The machine's times now, or null where {@code /proc/stat} cannot be read. */
    static Times machine() {
        try {
            return parseMachine(Files.readString(PROC.resolve("stat"), StandardCharsets.US_ASCII));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** A process's name and CPU time so far (its threads, live and exited), or null if it is gone. */
    static Task process(long pid) {
        return task(PROC.resolve(Long.toString(pid)));
    }

    /** Every process this one may see, by pid (kernel threads included). Empty where there is no /proc. */
    static Map<Long, Task> processes() {
        Map<Long, Task> out = new LinkedHashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC, "[0-9]*")) {
            for (Path dir : dirs) {
                Task t = task(dir);
                if (t != null) {
                    out.put(Long.parseLong(dir.getFileName().toString()), t);
                }
            }
        } catch (IOException | RuntimeException e) {
            // no /proc: nothing to list
        }
        return out;
    }

    /** A process's live threads by thread id; empty if it is gone. */
    static Map<Long, ThreadSample> threads(long pid) {
        Map<Long, ThreadSample> out = new LinkedHashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC.resolve(Long.toString(pid)).resolve("task"))) {
            for (Path dir : dirs) {
                Task t = task(dir);
                if (t == null) {
                    continue; // exited meanwhile
                }
                long switches;
                try {
                    switches = parseVoluntarySwitches(Files.readString(dir.resolve("status"), StandardCharsets.UTF_8));
                } catch (IOException | RuntimeException e) {
                    continue;
                }
                out.put(Long.parseLong(dir.getFileName().toString()),
                        new ThreadSample(ThreadKind.of(t.name()), t.ticks(), switches));
            }
        } catch (IOException | RuntimeException e) {
            // gone
        }
        return out;
    }

    private static Task task(Path dir) {
        try {
            return parseTask(Files.readString(dir.resolve("stat"), StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
