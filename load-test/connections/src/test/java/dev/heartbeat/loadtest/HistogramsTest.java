/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class HistogramsTest {

    @Test
    void encodedFormRoundTrips() {
        Histogram h = Histograms.newMicros();
        for (long v = 1; v <= 100_000; v += 7) {
            h.recordValue(v);
        }
        Histogram back = Histograms.decode(Histograms.encode(h));
        assertEquals(h.getTotalCount(), back.getTotalCount());
        assertEquals(h.getValueAtPercentile(99), back.getValueAtPercentile(99));
        assertEquals(h.getMaxValue(), back.getMaxValue());
        assertTrue(Histograms.encode(Histograms.newMicros()).length() < 100, "an empty histogram encodes small");
    }

    @Test
    void mergingEqualsRecordingEverythingInOne() {
        Histogram a = Histograms.newMicros();
        Histogram b = Histograms.newMicros();
        Histogram all = Histograms.newMicros();
        for (int i = 0; i < 10_000; i++) {
            long v = (i * 7919L) % 50_000 + 1;
            (i % 3 == 0 ? a : b).recordValue(v);
            all.recordValue(v);
        }
        Histogram merged = Histograms.merge(List.of(Histograms.decode(Histograms.encode(a)),
                Histograms.decode(Histograms.encode(b))));
        assertEquals(all.getTotalCount(), merged.getTotalCount());
        for (double p : new double[] {50, 99, 99.9, 100}) {
            assertEquals(all.getValueAtPercentile(p), merged.getValueAtPercentile(p), "p" + p);
        }
    }

    @Test
    void recordsNanosAsMicrosClamped() {
        Histogram h = Histograms.newMicros();
        Histograms.recordNanos(h, -5);
        Histograms.recordNanos(h, 1_500_000);
        Histograms.recordNanos(h, Long.MAX_VALUE);
        assertEquals(3, h.getTotalCount());
        assertEquals(0, h.getMinValue());
        assertEquals(1500.0, (double) h.getValueAtPercentile(50), 1.0);
        assertEquals((double) Histograms.HIGHEST_MICROS, (double) h.getMaxValue(), Histograms.HIGHEST_MICROS / 1000.0);
        assertEquals(1.5, Histograms.percentileMillis(h, 50), 0.01);
        assertTrue(Double.isNaN(Histograms.percentileMillis(Histograms.newMicros(), 50)));
    }

    @Test
    void percentileSeriesRisesToTheMaximum() {
        Histogram h = Histograms.newMicros();
        for (long v = 1; v <= 10_000; v++) {
            h.recordValue(v);
        }
        List<double[]> s = Histograms.percentileSeries(h);
        assertTrue(s.size() > 10);
        for (int i = 1; i < s.size(); i++) {
            assertTrue(s.get(i)[0] >= s.get(i - 1)[0], "percentiles ascend");
            assertTrue(s.get(i)[1] >= s.get(i - 1)[1], "values ascend");
        }
        double[] last = s.get(s.size() - 1);
        assertTrue(last[0] < 100, "the last point stays left of 100%, which a log scale cannot show");
        assertEquals((double) h.getMaxValue(), last[1]);
        assertTrue(Histograms.percentileSeries(Histograms.newMicros()).isEmpty());
    }

    @Test
    void garbageIsRefusedNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Histograms.decode("bm90IGl0"));
        assertTrue(e.getMessage().contains("bm90IGl0"), e.getMessage());
    }
}
