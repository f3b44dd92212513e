/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.heartbeat.demo.DemoServer;
import dev.heartbeat.demo.ServerConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every sample a tcp run reads from a demo server's {@code /metrics} ({@link TcpCoordinator}'s names)
 * is there on a real demo server, parsed as {@link ServerProbe#parseMetrics} parses it: a missing one
 * would read as 0 and fill the report with zeros.
 */
class ServerMetricNamesTest {

    @ParameterizedTest
    @EnumSource(names = {"HEARTBEAT", "NETTY"})
    void everySampleTheCoordinatorReadsIsThere(ServerConfig.IdleImpl impl) throws Exception {
        try (DemoServer server = DemoServer.start(ServerConfig.builder().host("127.0.0.1").port(0).metricsPort(0)
                .workerThreads(1).idleImpl(impl).policy(ServerConfig.Policy.PING).build())) {
            ServerProbe probe = new ServerProbe("127.0.0.1:" + server.metricsPort());
            Map<String, Double> before = probe.metrics();

            List<String> names = new ArrayList<>(List.of(TcpCoordinator.PROCESS_CPU_NANOS, TcpCoordinator.PINGS_SENT));
            if (impl == ServerConfig.IdleImpl.HEARTBEAT) {
                names.add(TcpCoordinator.WORKER_CPU_SECONDS);
                for (String[] counter : TcpCoordinator.HEARTBEAT_COUNTERS) {
                    names.add(counter[1]);
                }
            }
            for (String name : names) {
                double v = ServerProbe.value(before, name);
                assertTrue(Double.isFinite(v) && v >= 0, name + " = " + v);
            }
            assertSampled(before, TcpCoordinator.GC_SECONDS + "{gc=\"");
            assertSampled(before, TcpCoordinator.CLOSED + "{reason=\"ping_timeout\"}");
            assertSampled(before, TcpCoordinator.CLOSED + "{reason=\"max_line\"}");
            assertSampled(before, TcpCoordinator.CLOSED + "{reason=\"ping_abuse\"}");
            assertSampled(before, TcpCoordinator.CLOSED + "{reason=\"write_stall\"}");
            assertSampled(before, TcpCoordinator.CLOSED + "{reason=\"drain\"}");
            assertEquals(0, TcpCoordinator.idleCloses(before));

            Map<String, String> info = TcpCoordinator.serverInfo(before);
            assertEquals(impl.toString(), info.get("idle_impl"));
            assertEquals("ping", info.get("policy"));
            assertEquals(server.transport(), info.get("transport"));
            assertEquals("off", info.get("police_pings"), "what a check of --target servers reads");

            probe.gc(); // costs CPU: the process CPU time is cumulative, in nanoseconds
            Map<String, Double> after = probe.metrics();
            double cpuNanos = ServerProbe.value(after, TcpCoordinator.PROCESS_CPU_NANOS)
                    - ServerProbe.value(before, TcpCoordinator.PROCESS_CPU_NANOS);
            assertTrue(cpuNanos > 0 && cpuNanos < 60e9, "process CPU over a full GC: " + cpuNanos + " ns");
        }
    }

    private static void assertSampled(Map<String, Double> metrics, String prefix) {
        assertFalse(metrics.entrySet().stream()
                .filter(e -> e.getKey().startsWith(prefix) && Double.isFinite(e.getValue()))
                .findAny().isEmpty(), "no sample " + prefix + "...");
    }

    @Test
    void thePingPolicingsClosesAreNoIdleCloses() {
        assertEquals(2, TcpCoordinator.idleCloses(Map.of(TcpCoordinator.CLOSED + "{reason=\"ping_timeout\"}", 2.0,
                TcpCoordinator.CLOSED + "{reason=\"ping_abuse\"}", 3.0, TcpCoordinator.CLOSED
                        + "{reason=\"max_line\"}", 4.0, TcpCoordinator.CLOSED + "{reason=\"write_stall\"}", 5.0,
                TcpCoordinator.CLOSED + "{reason=\"drain\"}", 6.0)), "nor the guards' and the drain's");
    }
}
