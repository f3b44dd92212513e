/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

/**
 * Receives the entries whose deadline has passed, on the thread that advances the wheel.
 *
 * @param <E> the entry type
 */
@FunctionalInterface
public interface ExpiryHandler<E extends TimerEntry> {

    /**
     * Called once per expiry, with the entry already removed from the wheel. May schedule the entry
     * again (see {@link TimerWorker#rearm}) or any other.
     *
     * @param entry the expired entry
     * @param now the time the wheel was advanced to; {@code now - entry.deadline()} is the lateness
     */
    void onExpired(E entry, long now);

    /**
     * Called by a {@link TimerWorker} after each cycle in which at least one entry expired, so that a
     * handler can hand out in one batch what it collected. {@link TimingWheel} never calls it.
     */
    default void onCycleEnd() {
    }
}
