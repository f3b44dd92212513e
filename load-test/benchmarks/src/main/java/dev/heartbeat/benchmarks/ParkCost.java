/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What one park-and-wake costs a thread in CPU, whatever it does when awake: a thread that only calls
 * {@code LockSupport.parkNanos(sleep)} in a loop for a while, measured by its own CPU clock
 * ({@link ThreadMXBean#getCurrentThreadCpuTime()}, user and system). This is the floor of a timer
 * thread's cost per wake-up on the machine it runs on, and why Heartbeat's worker can run its cycles
 * on an event loop instead (see README, "Where the worker runs").
 *
 * <p>{@code java -cp load-test/target/benchmarks.jar dev.heartbeat.benchmarks.ParkCost [seconds] [sleep-us ...]}
 * (defaults: 8 s each for 16,000 us and 1,000 us; a 2 s warm-up first).
 */
public final class ParkCost {

    private ParkCost() {
    }

    public static void main(String[] args) {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        long[] sleepsMicros = args.length > 1 ? new long[args.length - 1] : new long[] {16_000, 1_000};
        for (int i = 1; i < args.length; i++) {
            sleepsMicros[i - 1] = Long.parseLong(args[i]);
        }
        measure(TimeUnit.MILLISECONDS.toNanos(1), 2); // warm-up: class loading and JIT out of the figures
        for (long micros : sleepsMicros) {
            double[] r = measure(TimeUnit.MICROSECONDS.toNanos(micros), seconds);
            System.out.printf(Locale.ROOT, "parkNanos(%,d us) for %d s: %,.0f wake-ups, CPU %.1f us per wake-up "
                    + "(user %.1f, system %.1f)%n", micros, seconds, r[0], r[1], r[2], r[1] - r[2]);
        }
    }

    /** Returns wake-ups, CPU microseconds per wake-up, user microseconds per wake-up. */
    private static double[] measure(long sleepNanos, int seconds) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long user0 = threads.getCurrentThreadUserTime();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        long wakeups = 0;
        while (System.nanoTime() - end < 0) {
            LockSupport.parkNanos(sleepNanos);
            wakeups++;
        }
        double cpu = (threads.getCurrentThreadCpuTime() - cpu0) / 1e3;
        double user = (threads.getCurrentThreadUserTime() - user0) / 1e3;
        return new double[] {wakeups, cpu / wakeups, user / wakeups};
    }
}
