/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.EventLoopBatch;
import dev.heartbeat.netty.engine.EventLoopHost;
import dev.heartbeat.netty.engine.FlightEvents;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.core.TimerEntry;
import dev.heartbeat.core.TimerWorker;
import io.netty.channel.embedded.EmbeddedChannel;
import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JFR events of {@link FlightEvents}: none is made while no recording enables them, and a recording
 * gets one {@code dev.heartbeat.BatchRun} per run of a hand-off batch (a continued one marked so) and one
 * {@code dev.heartbeat.HostedCycle} per hosted cycle, each with its thread, duration and CPU time.
 */
class FlightEventsTest {

    private static final long PING_COST = TimeUnit.MICROSECONDS.toNanos(10);
    /** The CPU time the expiring hosted cycle spends, by its thread's CPU clock. */
    private static final long EXPIRY_CPU = TimeUnit.MILLISECONDS.toNanos(2);
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final ManualTicker ticker = new ManualTicker(0);
    private final BoundedBatchRunTest.StepLoop loop = new BoundedBatchRunTest.StepLoop();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private HeartbeatMonitor monitor;
    private TimerWorker<TimerEntry> worker;

    @AfterEach
    void tearDown() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
        if (monitor != null) {
            monitor.close();
        }
        if (worker != null) {
            worker.close(Duration.ofSeconds(5));
        }
    }

    @Test
    void noEventIsMadeWithoutARecording() {
        assertTrue(FlightEvents.AVAILABLE, "jdk.jfr is on this JDK and the tests run on the class path");
        assertNull(FlightEvents.beginBatchRun());
        assertNull(FlightEvents.beginHostedCycle());
    }

    @Test
    void aRecordingGetsBatchRunsAndHostedCycles(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("hb.jfr");
        // The JDK's default settings, as -XX:StartFlightRecording uses them: they do not name these events,
        // which are then enabled with no threshold.
        try (Recording recording = new Recording(Configuration.getConfiguration("default"))) {
            recording.start();
            pingsInBoundedRuns(3 * (int) (EventLoopBatch.RUN_BUDGET_NANOS / PING_COST));
            hostedCycles();
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> runs = new ArrayList<>();
        List<RecordedEvent> cycles = new ArrayList<>();
        for (RecordedEvent e : events) {
            if (e.getEventType().getName().equals("dev.heartbeat.BatchRun")) {
                runs.add(e);
            } else if (e.getEventType().getName().equals("dev.heartbeat.HostedCycle")) {
                cycles.add(e);
            }
        }
        assertTrue(runs.size() >= 3, "a batch run per task: " + runs);
        int actions = 0;
        for (RecordedEvent run : runs) {
            actions += run.getInt("actions");
            assertEquals(Thread.currentThread().getName(), run.getThread().getJavaName());
            assertTrue(!run.getDuration().isNegative());
        }
        assertEquals(channels.size(), actions, "every action in some run");
        assertTrue(runs.get(0).getBoolean("continued"), "the first run used its budget");
        assertTrue(!runs.get(runs.size() - 1).getBoolean("continued"), "the last finished");
        assertEquals(2, cycles.size(), "two hosted cycles: " + cycles);
        assertEquals(1, cycles.get(0).getInt("work"), "the first applied the schedule request");
        assertEquals(1, cycles.get(1).getInt("work"), "the second expired the entry");
        List<RecordedEvent> all = new ArrayList<>(runs);
        all.addAll(cycles);
        for (RecordedEvent e : all) {
            assertTrue(e.getDuration("cpuTime").toNanos() >= 0, "CPU time measured (Linux measures it): " + e);
        }
        // The expiring cycle's handler spent EXPIRY_CPU of its thread's CPU time; the first cycle spent none of that.
        assertTrue(cycles.get(1).getDuration("cpuTime").toNanos() >= EXPIRY_CPU, cycles.get(1).toString());
        assertTrue(cycles.get(0).getDuration("cpuTime").toNanos() < EXPIRY_CPU, cycles.get(0).toString());
        assertTrue(Files.size(file) > 0);
    }

    // addLast with an executor group is deprecated in Netty 4.2; it is how the handlers get the test's loop.
    @SuppressWarnings("deprecation")
    private void pingsInBoundedRuns(int n) {
        monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        HeartbeatConfig config = HeartbeatConfig.ping(c -> {
            ticker.advance(PING_COST);
            return "PING";
        }).interval(Duration.ofSeconds(1)).timeout(Duration.ofSeconds(30)).build();
        for (int i = 0; i < n; i++) {
            EmbeddedChannel channel = new EmbeddedChannel();
            channel.pipeline().addLast(loop, "heartbeat", monitor.newHandler(config));
            channels.add(channel);
        }
        loop.runAll();
        monitor.runOnce();
        while (loop.tasks.isEmpty()) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
        loop.runAll(); // the batch re-queues itself until done
    }

    private void hostedCycles() {
        worker = TimerWorker.builder((TimerEntry e, long now) -> spendCpu(EXPIRY_CPU)).ticker(ticker)
                .threadName("jfr-test").build();
        EventLoopHost host = new EventLoopHost(loop, worker);
        worker.startHosted(host, Duration.ofMinutes(1)); // asks the loop for a cycle: queued, not run
        loop.tasks.clear();
        worker.schedule(new TimerEntry(), ticker.nanoTime() + TimeUnit.MILLISECONDS.toNanos(5));
        host.run();
        ticker.advance(10, TimeUnit.MILLISECONDS);
        host.run();
    }

    /** Works (no sleep) until the calling thread has spent {@code nanos} more of CPU time, by its CPU clock. */
    private static void spendCpu(long nanos) {
        long start = THREADS.getCurrentThreadCpuTime();
        assertTrue(start >= 0, "this JVM measures the thread's CPU time"); // else the loop below would not end
        long sink = 0;
        while (THREADS.getCurrentThreadCpuTime() - start < nanos) {
            sink += System.identityHashCode(THREADS);
        }
        assertTrue(sink != 1); // keeps the loop's work
    }
}
