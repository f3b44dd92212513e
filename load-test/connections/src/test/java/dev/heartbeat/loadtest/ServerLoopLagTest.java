/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.heartbeat.demo.LogHistogram;
import dev.heartbeat.demo.LoopLag;
import org.junit.jupiter.api.Test;

/** The servers' loop lag in the window: end less start per server, summed, its quantiles and max. */
class ServerLoopLagTest {

    private static final long US = 1_000;
    private static final String MAX = LoopLag.NAME + "_max";

    /** Bucket k's upper bound in microseconds, as the demo server's histogram has it: 2^(k/4). */
    private static double bound(int k) {
        return Math.pow(2, k / 4.0);
    }

    private static LogHistogram histogram() {
        return new LogHistogram(LoopLag.NAME, "lag", "max lag");
    }

    private static Map<String, Double> samples(LogHistogram h) {
        return ServerProbe.parseMetrics(h.exposition());
    }

    private static void record(LogHistogram h, long nanos, int times) {
        for (int i = 0; i < times; i++) {
            h.record(nanos);
        }
    }

    @Test
    void theWindowIsEndLessStartSummedOverTheServers() {
        LogHistogram a = histogram();
        record(a, 100 * US, 10);
        record(a, 5_000 * US, 1); // before the window: its max stays a's largest
        Map<String, Double> a0 = samples(a);
        record(a, 10 * US, 98); // 2^(13/4) = 9.51 < 10 <= 2^(14/4) = 11.31 us
        record(a, 2_000 * US, 2); // 2^(43/4) = 1722 < 2000 <= 2^(44/4) = 2048 us
        Map<String, Double> windowA = ServerLoopLag.window(a0, samples(a));
        assertEquals(bound(44) / 1e6, windowA.get(MAX), 1e-12,
                "the gauge did not grow: the window's max is at most its highest bucket's bound, below the 5 ms");

        LogHistogram b = histogram();
        Map<String, Double> b0 = samples(b);
        record(b, 8_000 * US, 1); // 2^(51/4) = 6889 < 8000 <= 2^(52/4) = 8192 us
        Map<String, Double> windowB = ServerLoopLag.window(b0, samples(b));
        assertEquals(0.008, windowB.get(MAX), 1e-12, "the gauge grew in the window: it is the window's max");

        ServerLoopLag lag = new ServerLoopLag().add(windowA).add(windowB);
        assertEquals(101, lag.count(), "the 11 samples before the window left out");
        // Prometheus' interpolation: lower + (upper - lower) x (rank - below) / in bucket
        assertEquals(bound(13) + (bound(14) - bound(13)) * (0.5 * 101 / 98), lag.quantileMicros(0.5), 1e-6);
        assertEquals(bound(43) + (bound(44) - bound(43)) * ((0.99 * 101 - 98) / 2), lag.quantileMicros(0.99), 1e-6);
        assertEquals(bound(51) + (bound(52) - bound(51)) * (0.999 * 101 - 100), lag.quantileMicros(0.999), 1e-6);
        assertEquals(8_000, lag.maxMicros(), 1e-6, "the largest over the servers");
    }

    @Test
    void aWindowWithoutSamplesHasNoMaxAndNoQuantiles() {
        LogHistogram a = histogram();
        record(a, 300 * US, 5);
        Map<String, Double> window = ServerLoopLag.window(samples(a), samples(a));
        assertFalse(window.containsKey(MAX));
        ServerLoopLag lag = new ServerLoopLag().add(window).add(ServerLoopLag.window(Map.of(), Map.of()));
        assertEquals(0, lag.count());
        assertTrue(Double.isNaN(lag.quantileMicros(0.99)));
        assertTrue(Double.isNaN(lag.maxMicros()));
    }

    @Test
    void theReportShowsTheLagOfTheImplsThatMeasuredIt() throws Exception {
        RunResult hb = ReportTest.result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10);
        RunResult netty = ReportTest.result(Scenario.NETTY, 0, 0, 8, 1000, 2000, 12);
        LogHistogram h = histogram();
        Map<String, Double> start = samples(h);
        record(h, 1_024 * US, 3); // exactly 2^10 us, a bound
        hb.loopLag.add(ServerLoopLag.window(start, samples(h)));
        Report report = ReportTest.report(List.of(hb, netty));
        String text = report.textTable("tcp");
        assertTrue(text.contains("servers' event-loop lag p50 / p99")
                && text.contains("943 / 1,022 / 1,024 / 1,024 (3)"), text);
        assertTrue(report.markdownTable("tcp").contains("| servers' event-loop lag p50 / p99 / p99.9 / max (us; "
                + "samples) |"), report.markdownTable("tcp"));
        JsonNode results = new ObjectMapper().readTree(JsonCodec.writePretty(report.toJson())).get("results");
        JsonNode lag = results.get(Scenario.HEARTBEAT).get("tcp").get("loop_lag_us");
        assertEquals(3, lag.get("count").asLong());
        assertEquals(1024.0, lag.get("max").asDouble(), 1e-9);
        assertEquals(bound(39) + (bound(40) - bound(39)) * 0.5, lag.get("p50").asDouble(), 1e-3);
        JsonNode none = results.get(Scenario.NETTY).get("tcp").get("loop_lag_us");
        assertTrue(none == null || none.isNull(), "not measured: null");
        assertNull(netty.loopLagJson());
    }
}
