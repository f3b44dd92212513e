/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

/**
 * The heartbeat {@code TimingWheel} against peer timers, on the operations an idle-detection library
 * lives on, with {@link #pending} timers already pending (deadlines spread uniformly over 1..60 s
 * ahead) so that every structure is realistically full.
 *
 * <h2>Implementations ({@link #impl})</h2>
 * <ul>
 * <li>{@code heartbeat}: {@code dev.heartbeat.core.TimingWheel}, default tick (2^20 ns) and levels.</li>
 * <li>{@code nettyHashedWheelTimer}: Netty's {@code HashedWheelTimer}, 1 ms tick, 65536 buckets.</li>
 * <li>{@code kafkaSystemTimer}: Kafka's {@code SystemTimer} (1 ms tick, wheels of 20) in a
 *     {@code SystemTimerReaper}, as the broker runs it.</li>
 * <li>{@code agronaDeadlineTimerWheel}: Agrona's {@code DeadlineTimerWheel}, 2^20 ns tick; 65536
 *     ticks for scheduleCancel, 4096 for move, 256 for expireBurst, because all its ticks share one
 *     capacity (see {@link AgronaDriver}); plus a {@code Long2LongHashMap} from timer id to
 *     connection, which any real use of its opaque ids needs.</li>
 * <li>{@code jdkScheduledThreadPool}: {@code ScheduledThreadPoolExecutor}, one thread,
 *     {@code setRemoveOnCancelPolicy(true)} so a cancel really removes.</li>
 * </ul>
 * Each uses its public API as well as it allows: heartbeat moves the same entry; the others have no
 * move and cancel, then schedule anew. Every pending timer that fires is re-armed for another 1..60 s,
 * so the pending count stays constant whatever the run length (checked after each trial).
 *
 * <h2>Threads and time</h2>
 * heartbeat and Agrona are single-threaded structures: the benchmark thread owns the wheel and does
 * the owner's work inline. Each operation reads {@code System.nanoTime()} once, uses it for the new
 * deadline, and first advances (polls) the wheel up to it whenever the wheel has work due by then
 * (heartbeat: {@code nanosToNextWork()}; Agrona: the end of its current tick), firing and re-arming
 * what is due; that upkeep is in their ns/op. Netty, Kafka and the JDK executor are
 * thread-safe timers with their own threads; the benchmark thread calls their public API and they read
 * their own clock ({@code System.nanoTime()}, in ms for Kafka) once per schedule, so every
 * implementation pays one clock read per operation. Their upkeep (bucket processing, cancel queues,
 * re-arms) runs on their own threads and is not in their ns/op, though on a 2-core machine it competes
 * with the benchmark thread. Sharing a connection's handle with the firing thread costs the threaded
 * ones one atomic swap per move (see {@link ThreadedDriver}).
 *
 * <h2>Benchmarks</h2>
 * <ul>
 * <li>{@link #move} (average time): one activity on a random pending connection pushes its timer out
 *     to now + 30 s; the pending count is unchanged.</li>
 * <li>{@link #scheduleCancel} (average time): a connection opens (a timer due in 30 s is added) and
 *     closes (it is cancelled).</li>
 * <li>{@link #expireBurst} (single shot, one burst per iteration): the time to fire 100,000 timers
 *     that are all due at the same moment (the same tick; the same millisecond for Kafka). The
 *     per-iteration setup (not timed) schedules them, due 20 ms ahead (owned wheels) or well after
 *     the scheduling will be done (threaded timers: twice the previous burst's scheduling time plus
 *     50 ms), keeps the timer running meanwhile, and returns exactly at the due moment; the timed part
 *     runs from there until the 100,000th task has run.
 *     <ul>
 *     <li>heartbeat and Agrona: the due moment is on a tick boundary and the setup has advanced the
 *         wheel up to just before it; the timed part advances (polls) the wheel to the due moment, on
 *         the benchmark thread, until all have fired. A pure measure of the firing work.</li>
 *     <li>Netty, Kafka, JDK: the timed part waits on a latch that the 100,000th task opens; the tasks
 *         count on the timer's single firing thread. It includes each timer's own firing mechanism:
 *         the worker's wake-up at its next tick (Netty: up to 1 ms after the due moment; Kafka: the
 *         reaper's {@code DelayQueue} wake-up at ms resolution, the cascade, and one executor hand-off
 *         per task; JDK: one heap removal per task), and the latch wake-up of the benchmark thread.</li>
 *     </ul>
 *     Its B/op is per burst and, because JMH runs iteration setup inside the profiled iteration,
 *     includes scheduling the 100,000 timers. heartbeat and Agrona allocate nothing there; the few KB
 *     per burst that {@code -prof gc} shows for them is JMH's own and the trial teardown's.</li>
 * </ul>
 * {@code -prof gc} counts the allocations of every thread but JMH's control thread, so for the
 * threaded timers it includes what their own threads allocate meanwhile.
 *
 * <p>After each trial the pending count is checked (a trial fails if it drifted): exactly for heartbeat
 * and Agrona; within 0.1%, after giving their threads up to 10 s to catch up, for the threaded timers,
 * whose own counts lag behind: Netty's includes cancels its worker has not processed yet, Kafka's
 * leaves out fired tasks still queued for its executor, and a busy machine makes both lags long.
 *
 * <h2>Running</h2>
 * Build from the repository root, then run (the full matrix takes roughly half an hour):
 * <pre>
 * ./mvnw -B package
 * java -jar load-test/target/benchmarks.jar TimerBenchmark -prof gc
 * </pre>
 * A quick run, one fork and a few short iterations, 100k pending only (a few minutes):
 * <pre>
 * java -jar load-test/target/benchmarks.jar TimerBenchmark -f 1 -wi 2 -i 3 -w 1s -r 1s -p pending=100000 -prof gc
 * </pre>
 * One implementation or benchmark: add e.g. {@code -p impl=heartbeat} or use the regex
 * {@code 'TimerBenchmark.move'}. Each fork uses a 3 GiB heap.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class TimerBenchmark {

    @Param({"heartbeat", "nettyHashedWheelTimer", "kafkaSystemTimer", "agronaDeadlineTimerWheel",
            "jdkScheduledThreadPool"})
    public String impl;

    @Param({"100000", "1000000"})
    public int pending;

    private TimerDriver driver;
    private TimerDriver.Workload workload;
    /** xorshift64 state for picking the connection to move: the same cheap sequence for every impl. */
    private long indexState = 0x9E3779B97F4A7C15L;

    @Setup(Level.Trial)
    public void setUp(BenchmarkParams params) throws Exception {
        String benchmark = params.getBenchmark();
        workload = TimerDriver.Workload.of(benchmark.substring(benchmark.lastIndexOf('.') + 1));
        driver = TimerDriver.create(impl);
        driver.start(pending, workload, new SplittableRandom(42));
    }

    @Setup(Level.Iteration)
    public void armBurst() throws Exception {
        if (workload == TimerDriver.Workload.EXPIRE_BURST) {
            driver.armBurst();
        }
    }

    /**
     * Checks that the pending count stayed constant: exactly for the wheels the benchmark thread owns;
     * within 0.1% for the threaded timers, once their threads have caught up (up to 10 s), because
     * their own counts lag (see the class Javadoc).
     */
    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        boolean owned = driver instanceof HeartbeatDriver || driver instanceof AgronaDriver;
        long tolerance = owned ? 0 : pending / 1000;
        long left = driver.pendingCount();
        long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!owned && Math.abs(left - pending) > tolerance && System.nanoTime() - giveUp < 0) {
            Thread.sleep(10);
            left = driver.pendingCount();
        }
        driver.close();
        if (Math.abs(left - pending) > tolerance) {
            throw new IllegalStateException(impl + ": " + left + " timers pending after the trial, "
                    + pending + " expected");
        }
    }

    private int nextIndex() {
        long x = indexState;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        indexState = x;
        return (int) (((x >>> 32) * pending) >>> 32);
    }

    /** Pushes a random pending connection's timer out to now + 30 s. */
    @Benchmark
    public long move() {
        return driver.move(nextIndex());
    }

    /** Opens a connection (adds a timer due in 30 s) and closes it (cancels the timer). */
    @Benchmark
    public long scheduleCancel() {
        return driver.scheduleCancel();
    }

    /** Fires 100,000 timers that are all due now; see the class Javadoc for how it is measured. */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 5)
    @Measurement(iterations = 10)
    public long expireBurst() throws Exception {
        return driver.fireBurst();
    }
}
