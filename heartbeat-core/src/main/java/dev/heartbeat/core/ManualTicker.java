/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Ticker} that moves only when told to: virtual time for tests. Thread-safe; reads and
 * moves are volatile.
 */
public final class ManualTicker implements Ticker {

    private volatile long now;

    /** A ticker that reads {@code start} until advanced. */
    public ManualTicker(long start) {
        this.now = start;
    }

    /** A ticker that starts at zero. */
    public ManualTicker() {
        this(0);
    }

    @Override
    public long nanoTime() {
        return now;
    }

    /**
     * Moves time forward.
     *
     * @throws IllegalArgumentException if {@code nanos} is negative
     */
    public synchronized ManualTicker advance(long nanos) {
        if (nanos < 0) {
            throw new IllegalArgumentException("time cannot move backwards: " + nanos + " ns");
        }
        now += nanos;
        return this;
    }

    /** Moves time forward by {@code amount} of {@code unit}. */
    public ManualTicker advance(long amount, TimeUnit unit) {
        return advance(unit.toNanos(amount));
    }

    /** Moves time forward by {@code duration}. */
    public ManualTicker advance(Duration duration) {
        return advance(duration.toNanos());
    }

    /** Sets the time, which may be before the current one only to test a misbehaving clock. */
    public void set(long nanos) {
        now = nanos;
    }
}
