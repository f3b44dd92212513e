/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker in hosted mode ({@link TimerWorker#startHosted}): its cycles run where the host calls
 * {@link TimerWorker#runHosted()}, here the test thread on a {@link ManualTicker}, and its own thread
 * only takes over when the host fails to run a due cycle.
 */
class HostedWorkerTest {

    private static final long TICK = TimingWheel.DEFAULT_TICK_NANOS;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Long enough that the watchdog never takes over in the virtual-time tests. */
    private static final Duration QUIET_WATCHDOG = Duration.ofMinutes(1);

    /** Records what the worker asks of its host; runs nothing by itself. */
    static final class RecordingHost implements CycleHost {
        final List<Long> plans = new ArrayList<>();
        int wakes;

        @Override
        public synchronized void plan(long delayNanos) {
            assertTrue(delayNanos >= 0, "negative plan " + delayNanos);
            plans.add(delayNanos);
        }

        @Override
        public synchronized void wake() {
            wakes++;
        }

        synchronized long lastPlan() {
            return plans.get(plans.size() - 1);
        }

        synchronized int wakes() {
            return wakes;
        }

        synchronized int plans() {
            return plans.size();
        }
    }

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 50 * MS); // wraps during tests
    private final List<TimerEntry> fired = new ArrayList<>();
    private final List<Thread> firedOn = new ArrayList<>();
    private final RecordingHost host = new RecordingHost();
    private TimerWorker<TimerEntry> worker;

    @AfterEach
    void close() {
        if (worker != null) {
            assertTrue(worker.close(Duration.ofSeconds(10)), "the watchdog thread ends");
        }
    }

    private TimerWorker<TimerEntry> hosted(Ticker t, Duration watchdog) {
        worker = TimerWorker.builder((TimerEntry e, long now) -> {
            assertTrue(e.deadline() - now <= 0, "early");
            synchronized (fired) {
                fired.add(e);
                firedOn.add(Thread.currentThread());
                fired.notifyAll();
            }
        }).ticker(t).threadName("hosted-test").build();
        worker.startHosted(host, watchdog);
        return worker;
    }

    @Test
    void theHostRunsTheCyclesAtTheTimesTheWorkerPlans() {
        hosted(ticker, QUIET_WATCHDOG);
        assertEquals(1, host.wakes(), "start asks for a first cycle");
        TimerEntry entry = new TimerEntry();
        long deadline = ticker.nanoTime() + 100 * MS;
        worker.schedule(entry, deadline);
        assertEquals(1, host.wakes(), "not parked yet: the first cycle is already asked for");

        worker.runHosted();
        assertEquals(1, worker.stats().entries());
        long plan = host.lastPlan();
        // The wheel's next work: the deadline's slot, or the earlier cascade of the level it sits on.
        assertTrue(plan > 0 && plan <= 100 * MS + TICK, "planned no later than the deadline's slot: " + plan);

        ticker.set(deadline - 1);
        worker.runHosted(); // a host may run early (a spurious run): nothing fires
        assertTrue(fired.isEmpty());
        ticker.set(deadline + TICK);
        worker.runHosted();
        assertEquals(List.of(entry), fired);
        assertSame(Thread.currentThread(), firedOn.get(0), "the cycle ran on the host");
        int plans = host.plans();
        worker.runHosted();
        assertEquals(plans, host.plans(), "an empty wheel plans nothing: the next request wakes the host");
        TimerStats stats = worker.stats();
        assertEquals(4, stats.cycles());
        assertEquals(0, stats.hostTakeovers());
        assertTrue(stats.hostedNanos() > 0);
    }

    @Test
    void everyHostedCycleCountsInTheHostedTimeThoughFewAreTimed() {
        hosted(ticker, QUIET_WATCHDOG);
        worker.schedule(new TimerEntry(), ticker.nanoTime() + 10_000 * MS);
        long before = worker.stats().hostedNanos();
        for (int i = 0; i < 3 * TimerWorker.TIMED_CYCLE_EVERY; i++) {
            worker.runHosted();
            long after = worker.stats().hostedNanos();
            assertTrue(after > before, "cycle " + i + " counted: " + before + " -> " + after);
            before = after;
        }
        assertEquals(3L * TimerWorker.TIMED_CYCLE_EVERY, worker.stats().cycles());
    }

    @Test
    void onlyARequestEarlierThanThePlanWakesTheHostAndOnlyOnce() {
        hosted(ticker, QUIET_WATCHDOG);
        worker.schedule(new TimerEntry(), ticker.nanoTime() + 500 * MS);
        worker.runHosted();
        int wakes = host.wakes();

        worker.schedule(new TimerEntry(), ticker.nanoTime() + 900 * MS);
        assertEquals(wakes, host.wakes(), "a later deadline waits for the planned run");
        worker.schedule(new TimerEntry(), ticker.nanoTime() + 100 * MS);
        assertEquals(wakes + 1, host.wakes(), "an earlier deadline wakes the host");
        worker.schedule(new TimerEntry(), ticker.nanoTime() + 50 * MS);
        assertEquals(wakes + 1, host.wakes(), "one wake-up serves every request queued behind it");

        worker.runHosted();
        assertEquals(4, worker.stats().entries());
        long plan = host.lastPlan();
        assertTrue(plan <= 50 * MS + TICK, "planned for the earliest deadline: " + plan);
        worker.schedule(new TimerEntry(), ticker.nanoTime() + 10 * MS);
        assertEquals(wakes + 2, host.wakes(), "parked again after the cycle: an earlier deadline wakes it");
    }

    @Test
    void aCancelNeverWakesTheHost() {
        hosted(ticker, QUIET_WATCHDOG);
        TimerEntry entry = new TimerEntry();
        worker.schedule(entry, ticker.nanoTime() + 500 * MS);
        worker.runHosted();
        int wakes = host.wakes();
        assertTrue(worker.cancel(entry));
        assertEquals(wakes, host.wakes());
        ticker.advance(600, TimeUnit.MILLISECONDS);
        worker.runHosted();
        assertTrue(fired.isEmpty());
        assertEquals(0, worker.stats().entries());
    }

    @Test
    void theWatchdogRunsTheCyclesWhenTheHostDoesNot() throws InterruptedException {
        hosted(Ticker.system(), Duration.ofMillis(5)); // the host never runs anything it is asked to
        TimerEntry entry = new TimerEntry();
        worker.schedule(entry, System.nanoTime() + 20 * MS);
        synchronized (fired) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (fired.isEmpty() && end - System.nanoTime() > 0) {
                fired.wait(100);
            }
        }
        assertEquals(List.of(entry), fired, "expired by the watchdog");
        assertEquals("hosted-test", firedOn.get(0).getName());
        assertTrue(worker.stats().hostTakeovers() >= 1);
    }

    @Test
    void aHostThatComesBackGetsTheCyclesBack() throws InterruptedException {
        hosted(Ticker.system(), Duration.ofMillis(5));
        TimerEntry first = new TimerEntry();
        worker.schedule(first, System.nanoTime() + 10 * MS);
        synchronized (fired) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (fired.isEmpty() && end - System.nanoTime() > 0) {
                fired.wait(100);
            }
        }
        assertEquals(1, fired.size(), "taken over");

        // The host runs again: from now on it runs every cycle it is asked for, at once.
        CountDownLatch done = new CountDownLatch(1);
        Thread hostThread = new Thread(() -> {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (end - System.nanoTime() > 0) {
                worker.runHosted();
                synchronized (fired) {
                    if (fired.size() == 2) {
                        break;
                    }
                }
            }
            done.countDown();
        }, "host");
        TimerEntry second = new TimerEntry();
        hostThread.start();
        worker.schedule(second, System.nanoTime() + 200 * MS);
        assertTrue(done.await(30, TimeUnit.SECONDS));
        assertEquals(2, fired.size());
        assertSame(hostThread, firedOn.get(1), "the host drives again once it runs cycles");
    }

    @Test
    void closingFromInsideAHostedCycleDoesNotWaitForItself() {
        AtomicReference<Boolean> closedFromCycle = new AtomicReference<>();
        worker = TimerWorker.builder((TimerEntry e, long now) ->
                closedFromCycle.set(worker.close(Duration.ofSeconds(5)))).ticker(ticker).build();
        worker.startHosted(host, QUIET_WATCHDOG);
        worker.schedule(new TimerEntry(), ticker.nanoTime() + 10 * MS);
        worker.runHosted();
        ticker.advance(20, TimeUnit.MILLISECONDS);
        long began = System.nanoTime();
        worker.runHosted();
        assertTrue(System.nanoTime() - began < TimeUnit.SECONDS.toNanos(4), "close did not wait for its own cycle");
        assertEquals(Boolean.FALSE, closedFromCycle.get(), "from inside a cycle, close cannot wait for the end");
        assertTrue(worker.close(Duration.ofSeconds(10)));
        assertEquals(0, worker.stats().entries());
        int plans = host.plans();
        worker.runHosted();
        assertEquals(plans, host.plans(), "a closed worker does nothing on its host");
        assertFalse(worker.schedule(new TimerEntry(), ticker.nanoTime() + MS), "rejected after close");
    }

    @Test
    void misuseIsRefused() {
        TimerWorker<TimerEntry> plain = TimerWorker.builder((TimerEntry e, long now) -> { }).ticker(ticker).build();
        assertThrows(IllegalStateException.class, plain::runHosted);
        IllegalArgumentException tooShort = assertThrows(IllegalArgumentException.class,
                () -> plain.startHosted(host, Duration.ofNanos(999_999)));
        assertTrue(tooShort.getMessage().contains("watchdog"), tooShort.getMessage());
        assertThrows(IllegalArgumentException.class, () -> plain.startHosted(host, Duration.ofMinutes(2)));
        plain.close();

        hosted(ticker, QUIET_WATCHDOG);
        assertThrows(IllegalStateException.class, () -> worker.startHosted(host, QUIET_WATCHDOG));
        assertThrows(IllegalStateException.class, worker::start);
        assertThrows(IllegalStateException.class, worker::doWork);
    }
}
