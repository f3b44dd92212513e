/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import org.HdrHistogram.Histogram;

/**
 * Durations in microseconds, one histogram per whole second of the shared {@link System#nanoTime()}
 * clock (every process of a run is on this machine, so their seconds line up, as in {@link PerSecond}):
 * the echo latencies of the lines intended in each second, so a timeline can put a second's p99 next to
 * what the servers did in it. Two significant digits and auto-resizing, so a second costs a few KiB;
 * merged across event loops and processes by adding histograms; in JSON, each second's compressed
 * encoding in base64. Not thread-safe: one owner at a time, as {@link ClientResult}.
 */
final class PerSecondHistograms {

    private static final long SECOND = 1_000_000_000L;

    /** Histograms by second ({@code nanoTime} floor-divided by 10^9). */
    final TreeMap<Long, Histogram> seconds = new TreeMap<>();

    private static Histogram newHistogram() {
        return new Histogram(2);
    }

    /**
     * Records {@code durationNanos} (as microseconds, clamped as {@link Histograms#recordNanos} does) at
     * {@code atNanos}.
     */
    void recordNanos(long atNanos, long durationNanos) {
        Histograms.recordNanos(seconds.computeIfAbsent(Math.floorDiv(atNanos, SECOND), s -> newHistogram()),
                durationNanos);
    }

    /** Adds another part's histograms into this one. */
    PerSecondHistograms add(PerSecondHistograms o) {
        o.seconds.forEach((s, h) -> seconds.computeIfAbsent(s, k -> newHistogram()).add(h));
        return this;
    }

    /**
     * One second of the series: its start in seconds since the epoch, the values recorded in it and their
     * p50, p99 and max in microseconds.
     */
    record Second(double epochSeconds, long count, long p50Us, long p99Us, long maxUs) {
    }

    /**
     * The seconds with a value, oldest first, their starts turned into the epoch by {@code epochMinusNanoTime}
     * (the wall clock minus {@code nanoTime}, in nanoseconds, read once in the process that reports).
     */
    List<Second> series(long epochMinusNanoTime) {
        List<Second> out = new ArrayList<>();
        seconds.forEach((s, h) -> out.add(new Second(Math.round((s * SECOND + epochMinusNanoTime) / 1e6) / 1e3,
                h.getTotalCount(), h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getMaxValue())));
        return out;
    }

    /** The wall clock minus {@link System#nanoTime()} in nanoseconds, now. */
    static long epochMinusNanoTime() {
        return System.currentTimeMillis() * 1_000_000L - System.nanoTime();
    }

    @JsonValue
    Map<Long, String> toJson() {
        Map<Long, String> out = new TreeMap<>();
        seconds.forEach((s, h) -> out.put(s, Histograms.encode(h)));
        return out;
    }

    @JsonCreator
    static PerSecondHistograms fromJson(Map<Long, String> encoded) {
        PerSecondHistograms p = new PerSecondHistograms();
        encoded.forEach((s, e) -> p.seconds.computeIfAbsent(s, k -> newHistogram()).add(Histograms.decode(e)));
        return p;
    }
}
