/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

/**
 * The measured window of a run, {@code [start, end)} on the shared {@link System#nanoTime()} clock:
 * unknown while the connections are being opened, then fixed once by {@link #open}. Written by the
 * thread that drives the run; read by every event loop (volatile fields: a loop sees the window once
 * it is opened, and until then treats every connection as being in the connect phase).
 */
final class RunWindow {

    private volatile boolean open;
    private volatile long start;
    private volatile long end;

    /** Fixes the window; only once. */
    void open(long startNanos, long endNanos) {
        if (open) {
            throw new IllegalStateException("the run window is already open");
        }
        if (endNanos - startNanos <= 0) {
            throw new IllegalArgumentException("the run window ends before it starts: " + startNanos + ", " + endNanos);
        }
        this.start = startNanos;
        this.end = endNanos;
        this.open = true; // volatile write last: readers that see open see start and end
    }

    boolean isOpen() {
        return open;
    }

    long start() {
        return start;
    }

    long end() {
        return end;
    }

    /** Whether a moment falls in the window (false before the window is opened). */
    boolean contains(long nanos) {
        return open && nanos - start >= 0 && nanos - end < 0;
    }
}
