/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class PerSecondTest {

    private static final long S = 1_000_000_000L;

    @Test
    void countsBySecondAndMergesAcrossParts() {
        PerSecond a = new PerSecond();
        a.record(10 * S);
        a.record(10 * S + S - 1);
        a.record(12 * S + 5);
        PerSecond b = new PerSecond();
        b.record(12 * S);
        b.record(13 * S);
        a.add(b);
        assertEquals(List.of(2L, 0L, 2L, 1L), a.series());
        assertEquals(5, a.total());
        assertEquals(2, a.peak());
        assertEquals(4, a.span());
        assertEquals(1.25, a.mean(), 1e-12);
        assertEquals(1.6, a.peakOverMean(), 1e-12);
        assertEquals(Map.of(0L, 2L, 2L, 2L, 3L, 1L), a.relativeTo(10 * S + 7));
    }

    @Test
    void negativeClockReadingsFallInTheirOwnSecond() {
        PerSecond p = new PerSecond();
        p.record(-1);
        p.record(0);
        assertEquals(List.of(1L, 1L), p.series());
        assertEquals(Map.of(-1L, 1L, 0L, 1L), p.relativeTo(0));
    }

    @Test
    void emptyHasNoRate() {
        PerSecond p = new PerSecond();
        assertEquals(0, p.peak());
        assertEquals(0, p.mean());
        assertEquals(0, p.peakOverMean());
        assertEquals(List.of(), p.series());
    }

    @Test
    void survivesTheTripThroughJson() {
        PerSecond p = new PerSecond();
        p.record(-3 * S);
        p.record(7 * S);
        p.record(7 * S + 1);
        PerSecond back = JsonCodec.read(JsonCodec.write(p), PerSecond.class);
        assertEquals(p.counts, back.counts);
    }
}
