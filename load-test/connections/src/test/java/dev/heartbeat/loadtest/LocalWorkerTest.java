/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.demo.ServerConfig;
import org.junit.jupiter.api.Test;

class LocalWorkerTest {

    @Test
    void readsTheTotalOfAClassHistogram() {
        String histogram = " num     #instances         #bytes  class name (module)\n"
                + "-------------------------------------------------------\n"
                + "   1:         12345        1234560  [B (java.base@17.0.15)\n"
                + "   2:          2000          64000  java.lang.String (java.base@17.0.15)\n"
                + "Total         14345        1298560\n";
        assertEquals(1_298_560L, LocalWorker.histogramTotalBytes(histogram));
        assertThrows(IllegalArgumentException.class, () -> LocalWorker.histogramTotalBytes("nothing"));
    }

    @Test
    void measuresTheLiveHeapOfThisJvm() {
        long live = LocalWorker.heapAfterGc();
        assertTrue(live > 100_000 && live < Runtime.getRuntime().maxMemory(), "live heap " + live);
    }

    @Test
    void theLocalServerRunsTheScenariosIdleSettings() {
        Scenario s = Scenario.builder().tickNanos(1L << 22).build();
        ServerConfig c = LocalWorker.serverConfig(s, Scenario.NETTY, 3);
        assertEquals(ServerConfig.IdleImpl.NETTY, c.idleImpl());
        assertEquals(ServerConfig.Policy.PING, c.policy());
        assertEquals(s.pingIntervalNanos, c.pingInterval().toNanos());
        assertEquals(s.pingTimeoutNanos, c.pingTimeout().toNanos());
        assertEquals(s.maxMissedPings, c.maxMissedPings());
        assertEquals(3, c.workerThreads());
        assertEquals(1L << 22, c.tick().toNanos());
    }

    @Test
    void theServersCpuCountsTheHostedCyclesOnceInTheLoopThatRanThem() {
        // the worker thread ran 2 units, and the server loop that hosts its cycles ran 30 of its 100 for it
        LocalWorker.CpuSample before = new LocalWorker.CpuSample(1_000, 500, 400, 0, 0, null);
        LocalWorker.CpuSample after = new LocalWorker.CpuSample(1_100, 532, 430, 0, 0, null);
        assertEquals(102, after.serverCpu(before), "the loops' 100 (hosted cycles included) and the thread's 2");
    }
}
