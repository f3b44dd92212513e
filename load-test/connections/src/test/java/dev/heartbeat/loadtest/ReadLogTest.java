/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ReadLogTest {

    private static final long MS = 1_000_000;
    /** Any start: nanoTime may be negative. */
    private static final long T = -5_000 * MS;
    private static final long STALL = 750 * MS;

    @Test
    void theLeastReadWriteStallIsFoundAmongSpansStartingJustAfterAReadInsideTheSpan() {
        ReadLog log = new ReadLog();
        for (int i = 0; i < 6; i++) { // a read every 125 ms: six windows a stall
            log.read(T + i * 125L * MS, 5552);
        }
        log.read(T + 1_100 * MS, 5552); // then late: 475 ms, 500 ms, 250 ms apart
        log.read(T + 1_600 * MS, 5552);
        log.read(T + 1_850 * MS, 5552);
        long now = T + 2_000 * MS;
        assertEquals(5552, log.leastRead(T + 500 * MS, now, STALL), "just after 625 ms: only the read at 1,100");
        assertEquals(5552, log.leastRead(T, now, STALL));
        assertEquals(8 * 5552, log.leastRead(T + 100 * MS, now, 2_000 * MS), "no span that long fits: the whole");
        assertEquals(0, log.leastRead(T + 1_850 * MS, T + 2_700 * MS, STALL), "after the latest read: none");
        assertEquals(9, log.count());
        assertEquals(500 * MS, log.longestGap(now));
        assertEquals("-400 ms: 5552 B, -150 ms: 5552 B", log.describe(T + 1_500 * MS, now));
    }

    @Test
    void withoutReadsNothingWasRead() {
        ReadLog log = new ReadLog();
        assertEquals(0, log.leastRead(T, T + 1_500 * MS, STALL));
        assertEquals("none", log.describe(T, T + 900 * MS));
        log.read(T + 800 * MS, 100);
        assertEquals(0, log.leastRead(T, T + 1_500 * MS, STALL), "the stall before it");
        assertEquals(100, log.leastRead(T + 100 * MS, T + 900 * MS, STALL), "the only stall that fits has it");
    }

    @Test
    void bytesWithinAMillisecondAreOneRead() {
        ReadLog log = new ReadLog();
        log.read(T, 2048);
        log.read(T + MS / 2, 2048);
        log.read(T + 300 * MS, 1000);
        assertEquals(2, log.count());
        assertEquals("-300 ms: 4096 B, -0 ms: 1000 B", log.describe(T, T + 300 * MS));
    }

    @Test
    void nothingIsKnownBeforeTheOldestKeptReadOnceMoreCame() {
        ReadLog log = new ReadLog();
        log.read(T, 1); // 2 s without a read, then one every 100 ms: the gap falls out of the kept ones
        for (int i = 0; i < ReadLog.KEPT; i++) {
            log.read(T + 2_000 * MS + i * 100L * MS, 1);
        }
        long now = T + 2_000 * MS + ReadLog.KEPT * 100 * MS;
        assertEquals(7, log.leastRead(T, now, STALL), "seven reads in any 750 ms after the oldest kept one");
        assertEquals(2_000 * MS, log.longestGap(now), "the longest gap of its life is known");
    }

    @Test
    void theLongestGapBetweenAsksShowsTheClientsOwnLateness() {
        ReadLog log = new ReadLog();
        log.asked(T);
        log.asked(T + 125 * MS);
        log.asked(T + 700 * MS);
        log.asked(T + 825 * MS);
        assertEquals(575 * MS, log.longestAskGap());
    }
}
