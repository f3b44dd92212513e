/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.EventLoopHost;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.TimerEntry;
import dev.heartbeat.core.TimerWorker;
import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What {@link EventLoopHost} asks of its event loop when the worker plans cycles: a plan for the
 * moment already planned keeps the pending task (no cancel, no new task), a plan for another moment
 * replaces it, and a run-now leaves it in place. Each call below is what a hosted cycle would call,
 * made on the loop's thread; the worker's wheel stays empty, so a cycle that runs plans nothing.
 */
class EventLoopHostTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** A loop that records the tasks scheduled on it; none comes due within a test (an hour away). */
    static final class CountingLoop extends DefaultEventLoop {
        final List<ScheduledFuture<?>> scheduled = new ArrayList<>();
        int executed;

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            ScheduledFuture<?> f = super.schedule(command, delay, unit);
            scheduled.add(f);
            return f;
        }

        @Override
        public void execute(Runnable task) {
            if (task instanceof EventLoopHost) {
                executed++; // counted, not run
                return;
            }
            super.execute(task);
        }

        int cancelled() {
            int n = 0;
            for (ScheduledFuture<?> f : scheduled) {
                n += f.isCancelled() ? 1 : 0;
            }
            return n;
        }
    }

    private final CountingLoop loop = new CountingLoop();
    private final TimerWorker<TimerEntry> worker =
            TimerWorker.builder((TimerEntry e, long now) -> { }).threadName("event-loop-host-test").build();
    /** The host's clock, moved by the tests (on the loop's thread only). */
    private long now = 1_000 * MS;
    private final EventLoopHost host = new EventLoopHost(loop, worker, () -> now);

    EventLoopHostTest() {
        worker.startHosted(host, Duration.ofMinutes(1)); // its first wake is counted, not run
    }

    @AfterEach
    void tearDown() {
        worker.close(Duration.ofSeconds(5));
        loop.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private <T> T onLoop(Callable<T> call) throws Exception {
        return loop.submit(call).get(10, TimeUnit.SECONDS);
    }

    @Test
    void aPlanForTheMomentAlreadyPlannedKeepsThePendingTask() throws Exception {
        long hour = TimeUnit.HOURS.toNanos(1);
        onLoop(() -> {
            long moment = now + hour;
            // Each plan is for the same moment, computed from a clock read a little before the host's
            // own read (30, 0 and 45 us before), as a hosted cycle's plans are.
            long delay = moment - now;
            now += 30_000;
            host.plan(delay);
            host.plan(moment - now);
            delay = moment - now;
            now += 45_000;
            host.plan(delay);
            return null;
        });
        assertEquals(1, onLoop(() -> loop.scheduled.size()), "one task for one moment");
        assertEquals(0, onLoop(loop::cancelled));
    }

    @Test
    void aPlanForAnotherMomentReplacesThePendingTask() throws Exception {
        long hour = TimeUnit.HOURS.toNanos(1);
        onLoop(() -> {
            long moment = now + hour;
            host.plan(moment - now);
            host.plan(moment - worker.tickNanos() - now); // a tick earlier: never keep a later task
            host.plan(moment + 5 * MS - now); // later: the earlier task would run a cycle for nothing
            return null;
        });
        assertEquals(3, onLoop(() -> loop.scheduled.size()));
        assertEquals(2, onLoop(loop::cancelled), "each replaced task is cancelled");
        assertFalse(onLoop(() -> loop.scheduled.get(2).isCancelled()));
    }

    @Test
    void runningNowLeavesThePlannedCycleInPlaceAndWaitsForTheLoopsIo() throws Exception {
        long hour = TimeUnit.HOURS.toNanos(1);
        int runs = onLoop(() -> {
            int before = loop.executed; // the worker's start asked for one
            long moment = now + hour;
            host.plan(moment - now);
            host.plan(0); // the cycle left work (or a request came early): run a cycle now
            now += 10_000;
            host.plan(moment - now); // and that cycle plans the same moment again
            return loop.executed - before;
        });
        assertEquals(0, runs, "not executed: that task would run before the loop looks at its I/O again");
        assertEquals(2, onLoop(() -> loop.scheduled.size()), "the planned task, and one for now");
        assertTrue(onLoop(() -> loop.scheduled.get(1).getDelay(TimeUnit.NANOSECONDS)) <= 0,
                "the run-now task is due at once");
        assertEquals(0, onLoop(loop::cancelled), "the planned task was neither cancelled nor made again");
        assertFalse(onLoop(() -> loop.scheduled.get(0).isDone()));
    }

    @Test
    void aTaskThatRanIsPlannedAgain() throws Exception {
        onLoop(() -> {
            host.plan(1); // due at once: runs after this task, a cycle with an empty wheel
            return null;
        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!onLoop(() -> loop.scheduled.get(0).isDone())) {
            assertTrue(System.nanoTime() - deadline < 0, "the planned task never ran");
            Thread.onSpinWait();
        }
        onLoop(() -> {
            host.plan(1); // the same moment, give or take, but the task for it is done
            return null;
        });
        assertEquals(2, onLoop(() -> loop.scheduled.size()));
    }
}
