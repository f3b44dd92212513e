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
 * About 250 bytes, made only for slowreaders; event loop only.
 */
final class ReadLog {

    /** How many of the latest reads are kept: 4 s of them at a read every 250 ms. */
    static final int KEPT = 16;
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
    /** Since when the client waits for bytes it asked for: its first ask after the latest bytes; 0: not waiting. */
    private long waitingSince;

    /** The client asks for a read at {@code now}. */
    void asked(long now) {
        if (askedAt != 0) {
            longestAskGap = Math.max(longestAskGap, now - askedAt);
        }
        askedAt = now;
        if (waitingSince == 0) {
            waitingSince = now;
        }
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
        waitingSince = 0;
    }

    /**
     * How long the client has waited, as of {@code now}, for bytes it asked for, 0 if it is not waiting: its
     * receive buffer was empty and its window open all that time, so no byte reached the server's socket for it.
     */
    long waiting(long now) {
        return waitingSince == 0 ? 0 : now - waitingSince;
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
     * The longest time in {@code [from, now]} in which no bytes came, from the kept reads: the gaps between
     * two of them, and from the latest to {@code now}, each cut to the span. Before the oldest kept read only
     * what is known counts (nothing, once more than {@link #KEPT} reads came); before the first read, the
     * whole span up to it.
     */
    long longestQuiet(long from, long now) {
        if (count == 0) {
            return now - from;
        }
        int oldest = Math.max(0, count - KEPT);
        long quiet = count <= KEPT ? Math.max(0, at[0] - from) : 0;
        for (int i = oldest + 1; i <= count; i++) {
            long end = i == count ? now : at[i % KEPT];
            long start = Math.max(from, at[(i - 1) % KEPT]);
            quiet = Math.max(quiet, end - start);
        }
        return quiet;
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
