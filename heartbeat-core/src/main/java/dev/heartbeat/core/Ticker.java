/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

/**
 * A source of monotonic nanosecond time, such as {@link System#nanoTime()}. Values may wrap: compare
 * two readings only by subtraction ({@code a - b > 0}).
 *
 * <p>Heartbeat reads time only through a ticker, so tests can replace it with a {@link ManualTicker}.
 */
@FunctionalInterface
public interface Ticker {

    /** The current time in nanoseconds, in an arbitrary but fixed origin. */
    long nanoTime();

    /** The ticker backed by {@link System#nanoTime()}. */
    static Ticker system() {
        return SystemTicker.INSTANCE;
    }
}

/** {@link System#nanoTime()}, as an enum singleton so call sites stay monomorphic. */
enum SystemTicker implements Ticker {
    INSTANCE;

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }
}
