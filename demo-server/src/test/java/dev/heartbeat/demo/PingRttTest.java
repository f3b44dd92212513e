/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import dev.heartbeat.netty.Rtt;
import org.junit.jupiter.api.Test;

/** The round-trip histogram of /metrics, and the samples recovered from Heartbeat's RTT estimate. */
class PingRttTest {

    private static Rtt rtt(long smoothedNanos, long variationNanos) {
        return new Rtt(Duration.ofNanos(smoothedNanos), Duration.ofNanos(variationNanos));
    }

    @Test
    void eachSampleIsRecoveredFromTheEstimatesChange() {
        assertEquals(7_000_000, RttSampler.sample(null, rtt(7_000_000, 3_500_000)), "the first: SRTT = R");
        // RFC 6298 after R = 3 ms: SRTT' = 7 + (3 - 7) / 8 = 6.5 ms
        assertEquals(3_000_000, RttSampler.sample(rtt(7_000_000, 3_500_000), rtt(6_500_000, 3_625_000)));
        // a sample of 1 ms more than SRTT moves it by 125 us; integer truncation loses < 8 ns
        long r = RttSampler.sample(rtt(1_000_003, 0), rtt(1_000_003 + (2_000_017 - 1_000_003) / 8, 1));
        assertTrue(Math.abs(r - 2_000_017) < 8, "within 7 ns: " + r);
        assertEquals(-1, RttSampler.sample(rtt(5, 1), rtt(5, 1)), "unchanged: no sample (a late answer)");
        assertEquals(-1, RttSampler.sample(null, null), "no estimate yet");
    }

    @Test
    void bucketsAreAQuarterOctaveWideAndCumulative() {
        assertEquals(0, PingRtt.bucket(0));
        assertEquals(0, PingRtt.bucket(1_000), "1 us: the first bound");
        assertEquals(1, PingRtt.bucket(1_001));
        assertEquals(4, PingRtt.bucket(2_000), "2 us: exactly a bound");
        assertEquals(40, PingRtt.bucket(1_024_000), "2^10 us");
        assertEquals(97, PingRtt.bucket(Long.MAX_VALUE), "past 2^24 us: +Inf");

        PingRtt rtt = new PingRtt();
        rtt.record(1_500);
        rtt.record(1_024_000);
        rtt.record(-5);
        assertEquals(3, rtt.count());
        Map<String, Double> m = TestSupport.parse(rtt.exposition());
        assertEquals(1, m.get("demo_ping_rtt_seconds_bucket{le=\"1.00000000e-06\"}"), "the negative one, as 0");
        assertEquals(2, m.get("demo_ping_rtt_seconds_bucket{le=\"1.68179283e-06\"}"), "2^(3/4) us: and 1.5 us");
        assertEquals(3, m.get("demo_ping_rtt_seconds_bucket{le=\"0.00102400000\"}"), "2^10 us: and 1.024 ms");
        assertEquals(3, m.get("demo_ping_rtt_seconds_bucket{le=\"+Inf\"}"));
        assertEquals(3, m.get("demo_ping_rtt_seconds_count"));
        assertEquals(0.001024, m.get("demo_ping_rtt_seconds_max"), 1e-12);
        assertEquals(0.0010255, m.get("demo_ping_rtt_seconds_sum"), 1e-12);
    }
}
