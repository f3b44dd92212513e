/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/** The worker driven synchronously with {@link TimerWorker#doWork()} on a {@link ManualTicker}. */
class TimerWorkerTest {

    private static final long TICK = TimingWheel.DEFAULT_TICK_NANOS;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 50 * MS); // wraps during tests
    private final List<TimerEntry> fired = new ArrayList<>();
    private final List<Long> firedAt = new ArrayList<>();

    private TimerWorker<TimerEntry> worker(ExpiryHandler<TimerEntry> handler) {
        return TimerWorker.builder(handler).ticker(ticker).build();
    }

    private TimerWorker<TimerEntry> recordingWorker() {
        return worker((e, now) -> {
            assertTrue(e.deadline() - now <= 0, "early");
            fired.add(e);
            firedAt.add(now);
        });
    }

    @Test
    void shouldFireAScheduledEntryAtItsDeadline() {
        TimerWorker<TimerEntry> worker = recordingWorker();
        TimerEntry entry = new TimerEntry();
        long deadline = ticker.nanoTime() + 100 * MS;
        assertTrue(worker.schedule(entry, deadline));
        assertEquals(1, worker.stats().queueDepth());

        assertEquals(1, worker.doWork(), "applies the request");
        assertEquals(1, worker.stats().entries());
        ticker.set(deadline - 1);
        worker.doWork();
        assertTrue(fired.isEmpty());
        ticker.set(deadline + TICK);
        worker.doWork();
        assertEquals(List.of(entry), fired);
        TimerStats stats = worker.stats();
        assertEquals(1, stats.scheduled());
        assertEquals(1, stats.expired());
        assertEquals(0, stats.entries());
        assertEquals(1, stats.requestsDrained());
        assertTrue(stats.worstLatenessNanos() >= 0 && stats.worstLatenessNanos() <= TICK);
    }

    @Test
    void shouldReArmFromAHandlerWhenDrivenFromAnotherThread() throws Exception {
        AtomicReference<TimerWorker<TimerEntry>> self = new AtomicReference<>();
        TimerWorker<TimerEntry> worker = worker((e, now) -> {
            fired.add(e);
            self.get().rearm(e, now + 10 * MS);
        });
        self.set(worker);
        TimerEntry entry = new TimerEntry();
        worker.schedule(entry, ticker.nanoTime() + 10 * MS);
        worker.doWork(); // the first driver: this thread
        Thread other = new Thread(() -> {
            for (int i = 0; i < 35; i++) {
                ticker.advance(1, TimeUnit.MILLISECONDS);
                worker.doWork();
            }
        });
        other.start();
        other.join();
        assertEquals(3, fired.size(), "fired at about 10, 21 and 32 ms, from the other thread");
        assertEquals(0, worker.stats().callbackFailures(), "rearm accepted the other thread's cycle");
        assertEquals(1, worker.stats().entries(), "still armed");
    }

    @Test
    void shouldRefuseTwoThreadsDrivingAtOnce() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        TimerWorker<TimerEntry> worker = worker((e, now) -> {
            inside.countDown();
            try {
                release.await();
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
            }
        });
        worker.schedule(new TimerEntry(), ticker.nanoTime());
        Thread driver = new Thread(worker::doWork);
        driver.start();
        inside.await();
        IllegalStateException e = assertThrows(IllegalStateException.class, worker::doWork);
        assertTrue(e.getMessage().contains("one thread at a time"), e.getMessage());
        release.countDown();
        driver.join();
        worker.doWork(); // free again
    }

    @Test
    void shouldLetTheNewestRequestWin() {
        TimerWorker<TimerEntry> worker = recordingWorker();
        TimerEntry entry = new TimerEntry();
        long now = ticker.nanoTime();
        worker.schedule(entry, now + 10 * MS);
        worker.schedule(entry, now + 30 * MS);
        assertEquals(1, worker.stats().queueDepth(), "an entry is queued at most once");
        worker.doWork();
        ticker.advance(20, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertTrue(fired.isEmpty());
        ticker.advance(11, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(1, fired.size());
    }

    @Test
    void shouldMoveAnArmedEntry() {
        TimerWorker<TimerEntry> worker = recordingWorker();
        TimerEntry entry = new TimerEntry();
        long now = ticker.nanoTime();
        worker.schedule(entry, now + 10 * MS);
        worker.doWork();
        worker.schedule(entry, now + 5 * MS);
        worker.doWork();
        ticker.advance(6, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(1, fired.size());
        ticker.advance(10, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(1, fired.size(), "one arming, one firing");
    }

    @Test
    void shouldNotFireACancelledEntry() {
        TimerWorker<TimerEntry> worker = recordingWorker();
        TimerEntry queued = new TimerEntry();
        TimerEntry armed = new TimerEntry();
        long now = ticker.nanoTime();
        assertFalse(worker.cancel(armed), "nothing armed yet");
        worker.schedule(armed, now + MS);
        worker.doWork();
        worker.schedule(queued, now + MS);

        assertTrue(worker.cancel(queued), "cancelled before the worker saw it");
        assertTrue(worker.cancel(armed));
        assertFalse(worker.cancel(armed), "already cancelled");
        worker.doWork();
        ticker.advance(1, TimeUnit.SECONDS);
        worker.doWork();
        assertTrue(fired.isEmpty());
        assertEquals(0, worker.stats().entries());
        assertEquals(1, worker.stats().cancelled(), "only the armed one was in the wheel");

        worker.schedule(armed, ticker.nanoTime() + MS);
        worker.doWork();
        ticker.advance(2, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(List.of(armed), fired, "a cancelled entry can be scheduled again");
    }

    @Test
    void shouldRearmFromTheHandlerWithoutARequest() {
        TimerWorker<TimerEntry>[] self = holder();
        int[] count = {0};
        self[0] = worker((e, now) -> {
            if (++count[0] < 3) {
                self[0].rearm(e, now + 10 * MS);
            }
        });
        TimerWorker<TimerEntry> worker = self[0];
        TimerEntry entry = new TimerEntry();
        worker.schedule(entry, ticker.nanoTime() + 10 * MS);
        for (int i = 0; i < 10; i++) {
            ticker.advance(11, TimeUnit.MILLISECONDS);
            worker.doWork();
        }
        assertEquals(3, count[0]);
        assertEquals(2, worker.stats().rearmed());
        assertEquals(1, worker.stats().requestsDrained());
        assertEquals(0, worker.stats().entries());
        assertFalse(worker.cancel(entry), "idle after its last firing");
    }

    /** Counts the schedule requests the worker applied to it; records whether one was pending at each expiry. */
    private static final class CountingEntry extends TimerEntry {
        int applied;
        final List<Boolean> pendingAtExpiry = new ArrayList<>();

        @Override
        protected void requestApplied() {
            applied++;
        }
    }

    @Test
    void shouldTellAnAppliedRequestFromReArmsAndMoves() {
        TimerWorker<TimerEntry>[] self = holder();
        int[] count = {0};
        self[0] = worker((e, now) -> {
            ((CountingEntry) e).pendingAtExpiry.add(e.requestPending());
            if (++count[0] < 3) {
                self[0].rearm(e, now + 10 * MS);
            }
        });
        TimerWorker<TimerEntry> worker = self[0];
        CountingEntry entry = new CountingEntry();
        worker.schedule(entry, ticker.nanoTime() + 10 * MS);
        assertTrue(entry.requestPending(), "queued, not applied yet");
        assertEquals(0, entry.applied);
        worker.doWork();
        assertFalse(entry.requestPending());
        assertEquals(1, entry.applied, "the request, once");
        worker.schedule(entry, ticker.nanoTime() + 10 * MS);
        worker.schedule(entry, ticker.nanoTime() + 20 * MS); // replaces the one before: one application
        worker.doWork();
        assertEquals(2, entry.applied);
        boolean[] moved = {false};
        assertTrue(worker.execute(() -> moved[0] = worker.move(entry, ticker.nanoTime() + 30 * MS)));
        worker.doWork();
        assertTrue(moved[0]);
        assertEquals(2, entry.applied, "a move is no request");
        for (int i = 0; i < 10; i++) {
            ticker.advance(11, TimeUnit.MILLISECONDS);
            worker.doWork();
        }
        assertEquals(3, count[0]);
        assertEquals(2, entry.applied, "re-arms are no requests");
        assertEquals(List.of(false, false, false), entry.pendingAtExpiry);

        worker.schedule(entry, ticker.nanoTime() + MS);
        worker.doWork();
        assertTrue(worker.cancel(entry));
        worker.doWork();
        assertEquals(3, entry.applied, "a cancel is not applied as a schedule");
    }

    @Test
    void shouldArmAnIdleEntryFromTheCycleOnly() {
        TimerEntry follower = new TimerEntry();
        List<TimerEntry> expired = new ArrayList<>();
        boolean[] armed = new boolean[4];
        TimerWorker<TimerEntry>[] self = holder();
        self[0] = worker((e, now) -> {
            expired.add(e);
            if (e != follower) {
                armed[0] = self[0].arm(follower, now + 5 * MS); // from an expiry: idle, so armed
                armed[1] = self[0].arm(follower, now + MS); // armed already: left where it is
                armed[2] = self[0].arm(e, now + MS); // firing: not idle
            }
        });
        TimerWorker<TimerEntry> worker = self[0];
        IllegalStateException outside = assertThrows(IllegalStateException.class,
                () -> worker.arm(follower, ticker.nanoTime()));
        assertTrue(outside.getMessage().contains("arm is only allowed on the worker's cycle"), outside.getMessage());
        TimerEntry first = new TimerEntry();
        worker.schedule(first, ticker.nanoTime() + MS);
        worker.doWork();
        ticker.advance(2, TimeUnit.MILLISECONDS);
        assertEquals(1, worker.doWork(), "the first expired; the follower was armed with no request to apply");
        assertTrue(armed[0]);
        assertFalse(armed[1]);
        assertFalse(armed[2]);
        assertTrue(follower.isScheduled());
        assertFalse(first.isScheduled());
        ticker.advance(4, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(List.of(first), expired, "not before its own deadline (the second arm did not move it)");
        ticker.advance(2, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(List.of(first, follower), expired);
        assertTrue(worker.execute(() -> armed[3] = worker.arm(follower, ticker.nanoTime() + MS)));
        worker.doWork();
        assertTrue(armed[3], "idle again after its expiry: armed from a task on the cycle");
    }

    @Test
    void shouldRefuseRearmOutsideTheHandler() {
        TimerWorker<TimerEntry> worker = recordingWorker();
        TimerEntry entry = new TimerEntry();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> worker.rearm(entry, 0));
        assertTrue(e.getMessage().contains("expiry handler"), e.getMessage());
    }

    @Test
    void shouldRefuseRearmOfAnotherEntry() {
        TimerEntry other = new TimerEntry();
        TimerWorker<TimerEntry>[] self = holder();
        List<Throwable> errors = new ArrayList<>();
        self[0] = worker((e, now) -> {
            try {
                self[0].rearm(other, now);
            } catch (IllegalStateException expected) {
                errors.add(expected);
            }
        });
        self[0].schedule(new TimerEntry(), ticker.nanoTime());
        self[0].doWork();
        assertEquals(1, errors.size());
    }

    @Test
    void shouldCopeWithExceptionFromHandler() {
        TimerEntry bad = new TimerEntry();
        TimerWorker<TimerEntry> worker = worker((e, now) -> {
            if (e == bad) {
                throw new IllegalStateException("handler failure (expected by the test)");
            }
            fired.add(e);
        });
        TimerEntry good = new TimerEntry();
        long now = ticker.nanoTime();
        worker.schedule(bad, now + MS);
        worker.schedule(good, now + MS);
        worker.doWork();
        ticker.advance(3, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(List.of(good), fired);
        assertEquals(1, worker.stats().callbackFailures());
        assertEquals(0, worker.stats().entries());
        worker.schedule(bad, ticker.nanoTime() + MS);
        worker.doWork();
        ticker.advance(3, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(2, worker.stats().callbackFailures(), "the worker goes on");
    }

    @Test
    void shouldCallCycleEndOnceAfterACycleWithExpirations() {
        int[] cycleEnds = {0};
        TimerWorker<TimerEntry> worker = TimerWorker.builder(new ExpiryHandler<TimerEntry>() {
            @Override
            public void onExpired(TimerEntry entry, long now) {
                fired.add(entry);
            }

            @Override
            public void onCycleEnd() {
                cycleEnds[0]++;
            }
        }).ticker(ticker).build();
        for (int i = 0; i < 5; i++) {
            worker.schedule(new TimerEntry(), ticker.nanoTime() + MS);
        }
        worker.doWork();
        assertEquals(0, cycleEnds[0]);
        ticker.advance(2, TimeUnit.MILLISECONDS);
        worker.doWork();
        assertEquals(5, fired.size());
        assertEquals(1, cycleEnds[0]);
        worker.doWork();
        assertEquals(1, cycleEnds[0]);
    }

    @Test
    void shouldBoundTheWorkOfOneCycle() {
        TimerWorker<TimerEntry> worker = TimerWorker.<TimerEntry>builder((e, now) -> fired.add(e))
                .ticker(ticker).maxExpirationsPerCycle(2).maxRequestsPerCycle(3).build();
        for (int i = 0; i < 5; i++) {
            worker.schedule(new TimerEntry(), ticker.nanoTime() + MS);
        }
        assertEquals(3, worker.doWork());
        assertEquals(2, worker.stats().queueDepth());
        assertEquals(2, worker.doWork());
        ticker.advance(2, TimeUnit.MILLISECONDS);
        assertEquals(2, worker.doWork());
        assertEquals(2, worker.doWork());
        assertEquals(1, worker.doWork());
        assertEquals(5, fired.size());
    }

    @Test
    void shouldRejectRequestsOnceClosed() {
        TimerWorker<TimerEntry> worker = recordingWorker();
        TimerEntry entry = new TimerEntry();
        worker.schedule(entry, ticker.nanoTime() + MS);
        worker.doWork();
        assertTrue(worker.close(Duration.ofSeconds(1)));
        assertTrue(worker.close(Duration.ofSeconds(1)), "idempotent");
        assertTrue(worker.isClosed());
        assertFalse(worker.schedule(new TimerEntry(), 0));
        assertFalse(worker.cancel(entry));
        assertEquals(2, worker.stats().rejected());
        assertEquals(0, worker.stats().entries(), "entries are dropped on close");
        IllegalStateException e = assertThrows(IllegalStateException.class, worker::doWork);
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        IllegalStateException s = assertThrows(IllegalStateException.class, worker::start);
        assertTrue(s.getMessage().contains("closed"), s.getMessage());
    }

    @Test
    void shouldRejectBadSettingsNamingTheValue() {
        TimerWorker.Builder<TimerEntry> b = TimerWorker.builder((e, now) -> { });
        assertMessage("tick must be in [1ns, 1073741824ns]: PT-1S",
                assertThrows(IllegalArgumentException.class, () -> b.tick(Duration.ofSeconds(-1))));
        assertMessage("tick must be in [1ns, 1073741824ns]: PT2S",
                assertThrows(IllegalArgumentException.class, () -> b.tick(Duration.ofSeconds(2))));
        assertMessage("levels must be in [1, 7] for a tick of 1048576 ns: 0",
                assertThrows(IllegalArgumentException.class, () -> b.levels(0)));
        assertMessage("maxExpirationsPerCycle must be positive: -3",
                assertThrows(IllegalArgumentException.class, () -> b.maxExpirationsPerCycle(-3)));
        assertMessage("maxRequestsPerCycle must be positive: 0",
                assertThrows(IllegalArgumentException.class, () -> b.maxRequestsPerCycle(0)));
        assertMessage("queueChunkSize must be a power of two >= 2: 1000",
                assertThrows(IllegalArgumentException.class, () -> b.queueChunkSize(1000)));
        assertMessage("threadName must not be blank",
                assertThrows(IllegalArgumentException.class, () -> b.threadName(" ")));
        b.levels(7).tick(Duration.ofMillis(100));
        assertMessage("levels must be in [1, 5] for a tick of 100000000 ns: 7",
                assertThrows(IllegalArgumentException.class, b::build));
    }

    private static void assertMessage(String expected, Throwable t) {
        assertEquals(expected, t.getMessage());
    }

    @Test
    void startedWorkerSleepsUntilWorkAndStopsOnClose() throws InterruptedException {
        CountDownLatch fire = new CountDownLatch(1);
        TimerWorker<TimerEntry> worker = TimerWorker.<TimerEntry>builder((e, now) -> fire.countDown())
                .threadName("heartbeat-test-worker").build();
        worker.start();
        assertThrows(IllegalStateException.class, worker::start);
        assertThrows(IllegalStateException.class, worker::doWork);
        assertTrue(worker.thread().isDaemon());
        assertEquals("heartbeat-test-worker", worker.thread().getName());
        // An entry an hour away: the worker must park once and stay parked (not poll).
        TimerEntry far = new TimerEntry();
        worker.schedule(far, System.nanoTime() + TimeUnit.HOURS.toNanos(1));
        awaitParked(worker);
        long wakeups = worker.stats().wakeups();
        // Requests that do not need the worker sooner than it plans to wake (it sleeps at most
        // MAX_SLEEP_NANOS while it holds entries) must not wake it: a later deadline, a cancel.
        TimerEntry later = new TimerEntry();
        worker.schedule(later, System.nanoTime() + TimeUnit.MINUTES.toNanos(30));
        worker.cancel(later);
        Thread.sleep(100); // a property, not a timer wait: nothing may happen in this window
        assertTrue(TimerWorker.MAX_SLEEP_NANOS > TimeUnit.MILLISECONDS.toNanos(500));
        assertEquals(wakeups, worker.stats().wakeups(),
                "an idle worker must not wake up periodically, nor for a later deadline or a cancel");
        assertEquals(1, worker.stats().queueDepth(), "the later request waits for the worker's own wake-up");

        worker.schedule(new TimerEntry(), System.nanoTime());
        assertTrue(fire.await(10, TimeUnit.SECONDS), "a request wakes the worker");
        assertTrue(worker.close(Duration.ofSeconds(5)));
        assertFalse(worker.thread().isAlive());
        assertFalse(worker.schedule(far, 0));
    }

    private static void awaitParked(TimerWorker<?> worker) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(worker.isParked() && worker.thread().getState() != Thread.State.RUNNABLE)) {
            assertTrue(System.nanoTime() - deadline < 0, "worker never parked");
            Thread.sleep(1);
        }
    }

    @Test
    void steadyStateReArmsAllocateNothing() {
        TimerWorker<TimerEntry>[] self = holder();
        self[0] = worker((e, now) -> self[0].rearm(e, now + 3 * MS));
        TimerWorker<TimerEntry> worker = self[0];
        TimerEntry[] entries = new TimerEntry[2048];
        for (int i = 0; i < entries.length; i++) {
            entries[i] = new TimerEntry();
            worker.schedule(entries[i], ticker.nanoTime() + (i % 7 + 1) * MS);
        }
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().getId();
        for (int i = 0; i < 3000; i++) { // warm up, so the measured cycles run compiled code
            ticker.advance(1, TimeUnit.MILLISECONDS);
            worker.doWork();
        }
        long expired = worker.stats().expired();
        long before = threads.getThreadAllocatedBytes(tid);
        for (int i = 0; i < 3000; i++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            worker.doWork();
        }
        long allocated = threads.getThreadAllocatedBytes(tid) - before;
        long rearms = worker.stats().expired() - expired;
        assertTrue(rearms > 1_000_000, "re-armed " + rearms);
        assertTrue(allocated < 4096, allocated + " bytes allocated for " + rearms + " re-arms");
    }

    @SuppressWarnings("unchecked")
    private static TimerWorker<TimerEntry>[] holder() {
        return (TimerWorker<TimerEntry>[]) new TimerWorker<?>[1];
    }
}
