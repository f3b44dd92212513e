/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.Locale;

/**
 * A {@link Role#SLOWREADER}'s reads as the client saw them: when it asked for one ({@link #asked}, every
 * {@link Scenario#slowReadPeriodNanos}) and when bytes came ({@link #read}), with the latest {@link #KEPT}
 * arrivals, to tell from its own side whether it drained before the server closed it. Bytes that come within
 * {@link #MERGE_NANOS} of the previous ones are one read (one {@code read()} hands on several buffers).
 * About 450 bytes, made only for slowreaders; event loop only.
 */
final class ReadLog {

    /** How many of the latest reads are kept: 4 s of them at a read every 125 ms. */
    static final int KEPT = 32;
    /** Bytes this soon after the previous ones belong to the same read. */
    static final long MERGE_NANOS = 1_000_000;

    /** The latest reads: when their first bytes came and how many came, a ring indexed by {@code count % KEPT}. */
    private final long[] at = new long[KEPT];
    private final int[] bytes = new int[KEPT];
    private long lastBytesAt;
    private int count;
    private long longestGap;
    private long askedAt;
    private long longestAskGap;

    /** The client asks for a read at {@code now}. */
    void asked(long now) {
        if (askedAt != 0) {
            longestAskGap = Math.max(longestAskGap, now - askedAt);
        }
        askedAt = now;
    }

    /** {@code n} bytes came at {@code now}. */
    void read(long now, int n) {
        if (count > 0 && now - lastBytesAt < MERGE_NANOS) {
            bytes[(count - 1) % KEPT] += n;
        } else {
            if (count > 0) {
                longestGap = Math.max(longestGap, now - at[(count - 1) % KEPT]);
            }
            at[count % KEPT] = now;
            bytes[count % KEPT] = n;
            count++;
        }
        lastBytesAt = now;
    }

    /** How many reads brought bytes. */
    int count() {
        return count;
    }

    /** The longest time between two reads that brought bytes, or from the latest to {@code now}. */
    long longestGap(long now) {
        return count == 0 ? 0 : Math.max(longestGap, now - at[(count - 1) % KEPT]);
    }

    /** The longest time between two of the client's asks for a read: its own lateness shows here. */
    long longestAskGap() {
        return longestAskGap;
    }

    /**
     * The fewest bytes that came in any {@code span} of time inside {@code [from, now]}, from the kept reads:
     * each span starts at {@code from} or just after a read (where the fewest are found) and ends by {@code now}.
     * Nothing is known before the oldest kept read once more than {@link #KEPT} came: spans start at it or
     * later then. Where no span fits, the bytes of the whole of what is known.
     */
    long leastRead(long from, long now, long span) {
        int oldest = Math.max(0, count - KEPT);
        long base = from - 1; // a span counts the bytes that came after its start, up to and at its end
        if (count > KEPT && at[oldest % KEPT] - base > 0) {
            base = at[oldest % KEPT];
        }
        long least = bytesIn(base, Math.min(now - base, span));
        for (int i = oldest; i < count; i++) {
            long t = at[i % KEPT];
            if (t - base > 0 && now - t >= span) {
                least = Math.min(least, bytesIn(t, span));
            }
        }
        return least;
    }

    /** The bytes of the kept reads after {@code start} and no later than {@code start + span}. */
    private long bytesIn(long start, long span) {
        long sum = 0;
        for (int i = Math.max(0, count - KEPT); i < count; i++) {
            long t = at[i % KEPT];
            if (t - start > 0 && t - (start + span) <= 0) {
                sum += bytes[i % KEPT];
            }
        }
        return sum;
    }

    /** The kept reads in {@code [from, now]}: each as ms before {@code now} and its bytes. */
    String describe(long from, long now) {
        StringBuilder s = new StringBuilder();
        for (int i = Math.max(0, count - KEPT); i < count; i++) {
            long t = at[i % KEPT];
            if (t - from >= 0) {
                s.append(s.length() == 0 ? "" : ", ")
                        .append(String.format(Locale.ROOT, "-%d ms: %d B", (now - t) / 1_000_000, bytes[i % KEPT]));
            }
        }
        return s.length() == 0 ? "none" : s.toString();
    }
}
