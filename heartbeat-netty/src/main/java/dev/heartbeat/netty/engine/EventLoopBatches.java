/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.util.IdentityHashMap;

import io.netty.util.concurrent.EventExecutor;

/**
 * The worker's registry of {@link EventLoopBatch}es, one per event loop it has handed actions to.
 * It forgets what it no longer uses: when its array is full it first drops the batches of event
 * loops that terminated or that received nothing since the previous such sweep (and hold nothing
 * now), and grows only if the rest still fill more than half of it. So event loops that never report
 * termination ({@code EmbeddedEventLoop}, one per test channel) are not kept for the life of the
 * monitor, and a server's fixed set of event loops costs one sweep per doubling, not one per cycle.
 * A forgotten event loop that comes back gets a new batch.
 *
 * <p>Worker only.
 */
public final class EventLoopBatches {

    /** The smallest array, and so the fewest batches between sweeps. */
    public static final int MIN_CAPACITY = 16;

    private final IdentityHashMap<EventExecutor, EventLoopBatch> byExecutor = new IdentityHashMap<>();
    private final MonitorEngine monitor;
    private EventLoopBatch[] batches = new EventLoopBatch[MIN_CAPACITY];
    private int size;
    /** Incremented by each sweep; a batch records the epoch it was last used in. */
    private int epoch;
    /** See {@link #anyWaiting}. */
    private boolean waiting;
    /** See {@link #earliestWaiting}. */
    private long earliestWaiting;

    EventLoopBatches(MonitorEngine monitor) {
        this.monitor = monitor;
    }

    /** The batch of {@code executor}, made on first use. */
    EventLoopBatch of(EventExecutor executor) {
        EventLoopBatch batch = byExecutor.get(executor);
        if (batch == null) {
            batch = add(executor);
        }
        batch.usedInEpoch = epoch;
        return batch;
    }

    /**
     * Submits every batch that has actions (see {@link EventLoopBatch#submitIfNeeded}), at the end of
     * a worker cycle at {@code now}.
     *
     * @param lazy whether batches whose actions can all wait may be queued without waking their loop
     * @param until until when a batch queued lazily now may wait
     * @return how many event loops refused their batch (they are shutting down; those batches are dropped)
     */
    int submitAll(boolean lazy, long now, long until) {
        int rejected = 0;
        boolean anyWaiting = false;
        long earliest = 0;
        for (int i = 0; i < size; i++) {
            EventLoopBatch batch = batches[i];
            try {
                int outcome = batch.submitIfNeeded(lazy, now, until);
                if (outcome == EventLoopBatch.REJECTED) {
                    rejected++;
                    remove(i--);
                } else if (outcome == EventLoopBatch.WAITING) {
                    long u = batch.lazyUntil();
                    earliest = !anyWaiting || u - earliest < 0 ? u : earliest;
                    anyWaiting = true;
                }
            } catch (RuntimeException | Error e) { // one event loop's failure must not hold up the others
                monitor.dispatchFailed(batch, e);
            }
        }
        waiting = anyWaiting;
        earliestWaiting = earliest;
        return rejected;
    }

    /** Whether the latest {@link #submitAll} left a batch queued lazily that its event loop has not run yet. */
    boolean anyWaiting() {
        return waiting;
    }

    /** With {@link #anyWaiting}: the earliest time one of those batches may wait until. */
    long earliestWaiting() {
        return earliestWaiting;
    }

    /** How many batches are remembered now. */
    int size() {
        return size;
    }

    private EventLoopBatch add(EventExecutor executor) {
        if (size == batches.length) {
            sweep();
            if (size > batches.length / 2) {
                EventLoopBatch[] grown = new EventLoopBatch[batches.length * 2];
                System.arraycopy(batches, 0, grown, 0, size);
                batches = grown;
            }
        }
        EventLoopBatch batch = new EventLoopBatch(executor, monitor);
        byExecutor.put(executor, batch);
        batches[size++] = batch;
        return batch;
    }

    private void sweep() {
        for (int i = 0; i < size; i++) {
            EventLoopBatch b = batches[i];
            if (b.executor.isTerminated() || (b.usedInEpoch != epoch && b.isIdle())) {
                remove(i--);
            }
        }
        epoch++;
    }

    /** Drops batch {@code i} (and its pending actions: {@link EventLoopBatch#discard}); the last one moves there. */
    private void remove(int i) {
        EventLoopBatch b = batches[i];
        b.discard();
        byExecutor.remove(b.executor);
        batches[i] = batches[--size];
        batches[size] = null;
    }
}
