/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One timer implementation under the workload of {@link TimerBenchmark}: a population of pending
 * connection timers, each re-armed for another idle period when it fires, so that the pending count
 * stays constant however long the benchmark runs.
 *
 * <p>Every method except {@link #start} and {@link #close} is called on the benchmark thread only.
 */
abstract class TimerDriver {

    /** Timers fired by {@code expireBurst}. */
    static final int BURST = 100_000;
    /** The new deadline of a moved timer, and the deadline of the timer that scheduleCancel opens. */
    static final long MOVE_NANOS = TimeUnit.SECONDS.toNanos(30);
    static final long MOVE_MILLIS = TimeUnit.NANOSECONDS.toMillis(MOVE_NANOS);
    /** Pending timers are due between these bounds ahead, when created and whenever they fire. */
    static final long MIN_IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);
    static final long MAX_IDLE_NANOS = TimeUnit.SECONDS.toNanos(60);
    /** The tick of every wheel: heartbeat's default, 2^20 ns (1.05 ms); 1 ms where the API is in ms. */
    static final long TICK_NANOS = 1L << 20;

    /** The benchmark a driver is started for; a driver may size its timer for it. */
    enum Workload {
        MOVE, SCHEDULE_CANCEL, EXPIRE_BURST;

        static Workload of(String benchmarkMethod) {
            switch (benchmarkMethod) {
                case "move":
                    return MOVE;
                case "scheduleCancel":
                    return SCHEDULE_CANCEL;
                case "expireBurst":
                    return EXPIRE_BURST;
                default:
                    throw new IllegalArgumentException("unknown benchmark: " + benchmarkMethod);
            }
        }
    }

    /**
     * Creates the population of {@code pending} timers.
     *
     * @param workload the benchmark to run; with {@link Workload#EXPIRE_BURST}, {@link #armBurst} and
     *     {@link #fireBurst} will be called
     * @param random the source of the initial deadlines
     */
    abstract void start(int pending, Workload workload, SplittableRandom random) throws Exception;

    /** Pushes pending timer {@code index}'s deadline out to now + 30 s. */
    abstract long move(int index);

    /** Adds one timer due in 30 s and cancels it. */
    abstract long scheduleCancel();

    /**
     * Setup of one expireBurst invocation: schedules {@link #BURST} timers due at one moment and
     * returns at that moment.
     */
    abstract void armBurst() throws Exception;

    /** The measured part of expireBurst: returns once all {@link #BURST} timers have fired. */
    abstract long fireBurst() throws Exception;

    /** How many timers are pending, for the sanity check after a trial. */
    abstract long pendingCount();

    /** Stops the timer and its threads. */
    abstract void close() throws Exception;

    /** A uniform random delay in [{@link #MIN_IDLE_NANOS}, {@link #MAX_IDLE_NANOS}). */
    static long idleNanos(SplittableRandom random) {
        return random.nextLong(MIN_IDLE_NANOS, MAX_IDLE_NANOS);
    }

    /** Parks, then spins, until {@code System.nanoTime()} reaches {@code deadline}. */
    static void waitUntil(long deadline) {
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            if (left > TimeUnit.MILLISECONDS.toNanos(2)) {
                LockSupport.parkNanos(left - TimeUnit.MILLISECONDS.toNanos(1));
            } else {
                Thread.onSpinWait();
            }
        }
    }

    static TimerDriver create(String impl) {
        switch (impl) {
            case "heartbeat":
                return new HeartbeatDriver();
            case "nettyHashedWheelTimer":
                return new NettyDriver();
            case "kafkaSystemTimer":
                return new KafkaDriver();
            case "agronaDeadlineTimerWheel":
                return new AgronaDriver();
            case "jdkScheduledThreadPool":
                return new JdkDriver();
            default:
                throw new IllegalArgumentException("unknown impl: " + impl);
        }
    }
}
