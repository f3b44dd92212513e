/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.annotation.JsonAutoDetect;

/**
 * Events counted per whole second of the shared {@link System#nanoTime()} clock (every process of a
 * run is on this machine, so their seconds line up): a rate over time that merges across event loops
 * and processes by adding counts. For rates whose shape matters, not only their total: closes spread by
 * a drain, reconnects spread by max-age jitter, the worst one-second burst of a storm. Sparse (a
 * second with no event has no entry); not thread-safe: one owner at a time, as {@link ClientResult}.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY, getterVisibility = JsonAutoDetect.Visibility.NONE,
        isGetterVisibility = JsonAutoDetect.Visibility.NONE)
final class PerSecond {

    private static final long SECOND = 1_000_000_000L;

    /** Events by second ({@code nanoTime} floor-divided by 10^9). */
    final TreeMap<Long, Long> counts = new TreeMap<>();

    /** Counts one event at {@code nanos} (a {@link System#nanoTime()} reading). */
    void record(long nanos) {
        counts.merge(Math.floorDiv(nanos, SECOND), 1L, Long::sum);
    }

    /** Adds another part's counts into this one. */
    PerSecond add(PerSecond o) {
        o.counts.forEach((s, n) -> counts.merge(s, n, Long::sum));
        return this;
    }

    long total() {
        long n = 0;
        for (long c : counts.values()) {
            n += c;
        }
        return n;
    }

    /** The most events in one second (0: none). */
    long peak() {
        long p = 0;
        for (long c : counts.values()) {
            p = Math.max(p, c);
        }
        return p;
    }

    /**
     * The mean per second over the span from the first second with an event to the last, both
     * included, empty seconds between counted as 0 (0: none).
     */
    double mean() {
        return counts.isEmpty() ? 0 : (double) total() / span();
    }

    /** Seconds from the first with an event to the last, both included (0: none). */
    long span() {
        return counts.isEmpty() ? 0 : counts.lastKey() - counts.firstKey() + 1;
    }

    /** The peak over the mean: 1 for a perfectly even rate, the span for everything in one second. */
    double peakOverMean() {
        return counts.isEmpty() ? 0 : peak() / mean();
    }

    /** The counts from the first second with an event to the last, empty seconds as 0. */
    List<Long> series() {
        List<Long> out = new ArrayList<>();
        if (counts.isEmpty()) {
            return out;
        }
        long first = counts.firstKey();
        for (long s = first; s <= counts.lastKey(); s++) {
            out.add(counts.getOrDefault(s, 0L));
        }
        return out;
    }

    @Override
    public String toString() {
        return series().toString();
    }

    /** For tests and reports: the entries as seconds after {@code originNanos}. */
    Map<Long, Long> relativeTo(long originNanos) {
        long origin = Math.floorDiv(originNanos, SECOND);
        TreeMap<Long, Long> out = new TreeMap<>();
        counts.forEach((s, n) -> out.put(s - origin, n));
        return out;
    }
}
