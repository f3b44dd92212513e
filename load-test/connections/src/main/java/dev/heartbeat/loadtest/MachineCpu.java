/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;

/**
 * CPU time of the whole machine and of given processes, from Linux's {@code /proc} (in USER_HZ,
 * 1/100 s): how much of the machine the load test's own processes used over a run window, and so
 * how much other processes took (another build on a shared machine disturbs a comparison; the report
 * says so instead of hiding it). NaN where {@code /proc} cannot be read. Stateless; any thread.
 */
final class MachineCpu {

    /** Linux reports /proc times in USER_HZ, which is 100 on every architecture it runs on. */
    private static final double TICKS_PER_SECOND = 100;

    private MachineCpu() {
    }

    /** CPU seconds the machine has spent busy (not idle, not waiting for I/O) since boot. */
    static double machineBusySeconds() {
        try {
            String first = Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.US_ASCII).get(0);
            String[] f = first.trim().split("\\s+", -1);
            // cpu user nice system idle iowait irq softirq steal ...
            long busy = 0;
            for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
                if (i < f.length) {
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy / TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /** CPU seconds (user and system) the processes have used so far; gone processes count 0. */
    static double processSeconds(Collection<Long> pids) {
        double sum = 0;
        for (long pid : pids) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
                // after the command name in parentheses: state ppid ... utime(14) stime(15)
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+", -1);
                sum += (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
            } catch (IOException | RuntimeException e) {
                // gone: nothing to add
            }
        }
        return sum;
    }
}
