/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Echo latency per second ({@link PerSecondHistograms}): by second, merged across parts, through JSON. */
class PerSecondHistogramsTest {

    private static final long S = 1_000_000_000L;

    @Test
    void eachSecondKeepsItsOwnDistributionAcrossPartsAndThroughJson() {
        ClientResult a = new ClientResult();
        ClientResult b = new ClientResult();
        for (int i = 1; i <= 100; i++) {
            a.echoPerSecond.recordNanos(100 * S + i, i * 10_000L); // second 100: 10 us .. 1 ms
            b.echoPerSecond.recordNanos(101 * S + 999_999_999L, 50_000L); // second 101: 50 us, 100 times
        }
        b.echoPerSecond.recordNanos(100 * S + S / 2, 20_000_000L); // one 20 ms echo in second 100
        ClientResult total = new ClientResult().add(a).add(b);
        String json = JsonCodec.write(new ChildMessage.Result(total, null));
        ClientResult back = ((ChildMessage.Result) JsonCodec.read(json, ChildMessage.class)).result();

        // epoch = nanoTime + 1,000 s
        List<PerSecondHistograms.Second> series = back.echoPerSecond.series(1_000 * S);
        assertEquals(2, series.size());
        PerSecondHistograms.Second first = series.get(0);
        assertEquals(1_100.0, first.epochSeconds(), 1e-9);
        assertEquals(101, first.count());
        assertEquals(510.0, (double) first.p50Us(), 5.0, "the 51st of 101 values, within 1 % (two digits)");
        assertEquals(1_000.0, (double) first.p99Us(), 10.0, "the 100th of 101 values");
        assertEquals(20_000.0, (double) first.maxUs(), 200.0);
        PerSecondHistograms.Second second = series.get(1);
        assertEquals(1_101.0, second.epochSeconds(), 1e-9);
        assertEquals(100, second.count());
        assertEquals(50, second.p99Us());
    }
}
