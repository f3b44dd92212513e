/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class SoakTest {

    @Test
    void theHeapSlopeIsTheLeastSquaresLineInBytesPerMinute() {
        RunResult r = new RunResult(Scenario.HEARTBEAT, "tcp", 1000);
        assertTrue(Double.isNaN(r.heapSlopeBytesPerMinute()), "no samples");
        r.heapSamples.add(new RunResult.HeapSample(6, 100_000_000, 1000, null, null));
        assertTrue(Double.isNaN(r.heapSlopeBytesPerMinute()), "one sample");
        // +1 MB a minute, with noise that cancels out: 100.1, 100.9, 101.9, 103.1 MB at 0, 1, 2, 3 min
        r.heapSamples.clear();
        long[] heap = {100_100_000, 100_900_000, 101_900_000, 103_100_000};
        for (int i = 0; i < heap.length; i++) {
            r.heapSamples.add(new RunResult.HeapSample(60.0 * i, heap[i], 1000, null, null));
        }
        assertEquals(1_000_000, r.heapSlopeBytesPerMinute(), 1e-3);
    }

    @Test
    void theChurnRateIsAFlagCheckedAgainstTheConnections() {
        CommandLine cmd = LoadTest.commandLine();
        cmd.parseArgs("--connections", "2000", "--churn-rate", "100");
        Scenario s = ((LoadTest) cmd.getCommand()).scenario();
        assertEquals(100, s.churnPerSecond);
        assertEquals(100, s.settings().scenario().churnPerSecond, "carried to the child processes");
        assertEquals(0, Scenario.builder().build().churnPerSecond, "off by default");
        for (double bad : new double[] {-1, 2001, Double.NaN}) {
            String message = assertThrows(IllegalArgumentException.class,
                    () -> Scenario.builder().connections(2000).churnPerSecond(bad).build()).getMessage();
            assertTrue(message.startsWith("--churn-rate must be between 0 and --connections (2000) per second: "),
                    message);
        }
    }
}
