/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** Whole-wheel work on the worker's cycle: {@code execute}, {@code forEachScheduled}, {@code move}. */
class WorkerTaskTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 50 * MS); // wraps during tests
    private final List<TimerEntry> fired = new ArrayList<>();

    private TimerWorker<TimerEntry> worker() {
        return TimerWorker.builder((TimerEntry e, long now) -> {
            assertTrue(e.deadline() - now <= 0, "early");
            fired.add(e);
        }).ticker(ticker).build();
    }

    @Test
    void aTaskRunsOnTheNextCycleAfterTheRequestsBeforeItAndCanVisitAndMoveEveryEntry() {
        TimerWorker<TimerEntry> worker = worker();
        List<TimerEntry> entries = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            TimerEntry e = new TimerEntry();
            entries.add(e);
            worker.schedule(e, ticker.nanoTime() + (i + 1) * 1000L * MS);
        }
        Set<TimerEntry> seen = new HashSet<>();
        assertTrue(worker.execute(() -> {
            worker.forEachScheduled(seen::add);
            for (TimerEntry e : seen) {
                assertTrue(worker.move(e, ticker.nanoTime() + 10 * MS));
            }
        }));
        assertTrue(seen.isEmpty(), "not before the worker's cycle");
        worker.doWork();
        assertEquals(new HashSet<>(entries), seen, "the task saw the entries scheduled by the requests before it");
        ticker.advance(9 * MS);
        worker.doWork();
        assertTrue(fired.isEmpty(), "moved to 10 ms: not early");
        ticker.advance(3 * MS);
        worker.doWork();
        assertEquals(100, fired.size(), "all moved from up to 100 s to 10 ms");
    }

    @Test
    void visitingAndMovingOutsideTheCycleAreRefusedAndACancelledEntryIsNotMoved() {
        TimerWorker<TimerEntry> worker = worker();
        TimerEntry e = new TimerEntry();
        worker.schedule(e, ticker.nanoTime() + 1000 * MS);
        worker.doWork();
        assertThrows(IllegalStateException.class, () -> worker.forEachScheduled(x -> { }));
        assertThrows(IllegalStateException.class, () -> worker.move(e, ticker.nanoTime()));
        worker.cancel(e);
        boolean[] moved = {true};
        worker.execute(() -> moved[0] = worker.move(e, ticker.nanoTime()));
        worker.doWork();
        assertFalse(moved[0], "cancelled by the request before the task: nothing to move");
    }

    @Test
    void aThrowingTaskIsCountedAndTheWorkerGoesOn() {
        TimerWorker<TimerEntry> worker = worker();
        worker.execute(() -> {
            throw new IllegalStateException("boom (expected by the test)");
        });
        boolean[] ran = {false};
        worker.execute(() -> ran[0] = true);
        worker.doWork();
        assertTrue(ran[0]);
        assertEquals(1, worker.stats().callbackFailures());
    }

    @Test
    void aTaskWakesAParkedWorkerAndIsRefusedOnceClosed() throws InterruptedException {
        TimerWorker<TimerEntry> worker = TimerWorker.builder((TimerEntry e, long now) -> { }).build();
        worker.start();
        try {
            CountDownLatch ran = new CountDownLatch(1);
            assertTrue(worker.execute(ran::countDown));
            assertTrue(ran.await(10, TimeUnit.SECONDS), "the parked worker (empty wheel: parked for good) woke");
        } finally {
            worker.close();
        }
        assertFalse(worker.execute(() -> { }));
    }
}
