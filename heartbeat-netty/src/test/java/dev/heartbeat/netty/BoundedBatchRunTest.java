/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.EventLoopBatch;
import dev.heartbeat.netty.engine.EventLoopHost;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.core.TimerEntry;
import dev.heartbeat.core.TimerWorker;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.SingleThreadEventExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A hand-off batch's run is bounded ({@link EventLoopBatch#RUN_BUDGET_NANOS}): the pings of 10,000
 * channels of one event loop, each costing 10 µs of virtual time to write, go out over several tasks,
 * each ending within one action past the budget, the rest re-queued by the batch itself; every
 * channel gets its ping exactly once, and worker cycles in between add no second task for the batch.
 * So with pings that cost 60 µs each, as a ping written to a socket did at the 90th percentile in the
 * 100k tcp run of {@code load-test/docs/results.md} (issue 29). Likewise a hosted worker cycle with
 * 10,000 entries due continues in tasks of its own.
 */
class BoundedBatchRunTest {

    private static final int CHANNELS = 10_000;
    private static final Duration INTERVAL = Duration.ofSeconds(1);

    private final ManualTicker ticker = new ManualTicker(0);
    private final StepLoop loop = new StepLoop();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private HeartbeatMonitor monitor;
    /** Pings made by the probe in the current task. */
    private int pingsThisTask;

    @AfterEach
    void tearDown() {
        for (EmbeddedChannel c : channels) {
            c.finishAndReleaseAll();
        }
        if (monitor != null) {
            monitor.close();
        }
    }

    // addLast with an executor group is deprecated in Netty 4.2; it is how the handlers get one executor (the
    // test's loop) whose tasks the test runs one by one.
    @Test
    void tenThousandPingsGoOutInSeveralBoundedRunsEachOnce() {
        pingsGoOutInBoundedRunsEachOnce(CHANNELS, TimeUnit.MICROSECONDS.toNanos(10));
    }

    /** The clock is read before every action: read every four (before issue 29's change), a run took four, 240 µs. */
    @Test
    void costlyPingsEndARunWithinOneActionPastItsBudget() {
        pingsGoOutInBoundedRunsEachOnce(1_000, TimeUnit.MICROSECONDS.toNanos(60));
    }

    @SuppressWarnings("deprecation")
    private void pingsGoOutInBoundedRunsEachOnce(int channelCount, long pingCost) {
        monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        HeartbeatConfig config = HeartbeatConfig.ping(c -> {
            pingsThisTask++;
            ticker.advance(pingCost); // what writing it costs the loop, in virtual time
            return "PING";
        }).interval(INTERVAL).timeout(Duration.ofSeconds(30)).build();
        for (int i = 0; i < channelCount; i++) {
            EmbeddedChannel channel = new EmbeddedChannel();
            channel.pipeline().addLast(loop, "heartbeat", monitor.newHandler(config));
            channels.add(channel);
        }
        loop.runAll();
        monitor.runOnce(); // the registrations
        while (loop.tasks.isEmpty()) {
            assertTrue(ticker.nanoTime() < 2 * INTERVAL.toNanos(), "no hand-off");
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
        assertEquals(1, loop.tasks.size(), "one batch for the loop");

        int runs = 0;
        int pings = 0;
        for (Runnable task; (task = loop.tasks.poll()) != null; ) {
            pingsThisTask = 0;
            task.run();
            runs++;
            pings += pingsThisTask;
            assertTrue(pingsThisTask * pingCost < EventLoopBatch.RUN_BUDGET_NANOS + pingCost, "run " + runs + " wrote "
                    + pingsThisTask + " pings of " + pingCost / 1_000 + " µs: more than one past the budget");
            monitor.runOnce(); // a worker cycle between two runs: the pending continuation is the batch's task
            assertTrue(loop.tasks.size() <= 1, "one task for the batch at a time: " + loop.tasks.size());
        }
        assertEquals(runs - 1, loop.scheduledNow,
                "each continuation waits for the loop's I/O: scheduled, not executed");
        assertEquals(1, loop.executed, "the worker's one hand-off");
        assertEquals(channelCount, pings);
        assertTrue(runs > 1 && runs >= channelCount * pingCost / (EventLoopBatch.RUN_BUDGET_NANOS + pingCost),
                "several runs: " + runs);
        for (EmbeddedChannel channel : channels) {
            assertEquals("PING", channel.readOutbound());
            assertNull(channel.readOutbound(), "one ping per channel");
        }
        assertEquals(0, monitor.stats().actionFailures());
    }

    @Test
    void aHostedCycleWithTenThousandDueEntriesContinuesInTasksAfterTheLoopsIo() {
        IdentityHashMap<TimerEntry, Integer> expired = new IdentityHashMap<>();
        TimerWorker<TimerEntry> worker = TimerWorker.builder((TimerEntry e, long now) -> {
            expired.merge(e, 1, Integer::sum);
            ticker.advance(1_000); // a microsecond per expiry, in virtual time
        }).ticker(ticker).threadName("bounded-host-test").build();
        try {
            worker.startHosted(new EventLoopHost(loop, worker), Duration.ofMinutes(1));
            long deadline = ticker.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10);
            for (int i = 0; i < CHANNELS; i++) {
                worker.schedule(new TimerEntry(), deadline);
            }
            loop.runAll(); // the start's wake-up: a cycle that applies the requests and plans for the deadline
            ticker.set(deadline + worker.tickNanos());
            int before = loop.scheduledNow;
            worker.execute(() -> { }); // a request wakes the host: the cycle that finds all 10,000 due
            int runs = 0;
            for (Runnable task; (task = loop.tasks.poll()) != null; ) {
                int expiredBefore = expired.size();
                task.run();
                runs++;
                assertTrue(expired.size() - expiredBefore <= 1_000, "run " + runs + ": a bounded run");
            }
            assertEquals(CHANNELS, expired.size());
            assertTrue(expired.values().stream().allMatch(n -> n == 1), "each entry once");
            assertTrue(runs > 10 && loop.scheduledNow - before == runs - 1,
                    "continued by tasks scheduled for now: " + runs + " runs, "
                    + (loop.scheduledNow - before) + " continuations");
        } finally {
            worker.close(Duration.ofSeconds(5));
        }
    }

    /**
     * An event loop that runs nothing by itself: tasks handed with {@code execute}, {@code lazyExecute} or
     * scheduled with no delay wait in {@link #tasks}, in that order, until the test runs them one by one
     * (tasks scheduled for later never run).
     */
    static final class StepLoop extends SingleThreadEventExecutor {
        final ArrayDeque<Runnable> tasks = new ArrayDeque<>();
        int executed;
        int lazy;
        int scheduledNow;

        StepLoop() {
            super(null, (Executor) command -> {
                throw new IllegalStateException("never started: the hand-offs are overridden");
            }, false);
        }

        @Override
        protected void run() {
            // never started
        }

        @Override
        public void execute(Runnable task) {
            executed++;
            tasks.add(task);
        }

        @Override
        public void lazyExecute(Runnable task) {
            lazy++;
            tasks.add(task);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            if (delay != 0) {
                return super.schedule(command, delay, unit); // kept, never run: the loop is never started
            }
            scheduledNow++;
            tasks.add(command);
            return null; // the batch and the host keep no future of a task for now
        }

        /** Runs the queue until it is empty, tasks queued meanwhile included. */
        void runAll() {
            for (Runnable r; (r = tasks.poll()) != null; ) {
                r.run();
            }
        }

        @Override
        public boolean inEventLoop(Thread thread) {
            return true;
        }
    }
}
