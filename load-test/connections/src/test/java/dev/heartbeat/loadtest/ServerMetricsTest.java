/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import dev.heartbeat.demo.PingRtt;
import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import org.junit.jupiter.api.Test;

/** The servers' close reasons and ping round trips as the load test reads and checks them. */
class ServerMetricsTest {

    private static Map<String, Double> server(long pingTimeoutCloses, long... rttMicros) {
        PingRtt rtt = new PingRtt();
        for (long us : rttMicros) {
            rtt.record(us * 1000);
        }
        Map<String, Double> m = ServerProbe.parseMetrics(rtt.exposition()
                + "demo_connections_closed_total{reason=\"reader_idle\"} 0\n"
                + "demo_connections_closed_total{reason=\"ping_timeout\"} " + pingTimeoutCloses + "\n"
                + "demo_connections_closed_total{reason=\"max_line\"} 7\n");
        return m;
    }

    @Test
    void sumsTheServersAndReadsQuantilesFromTheBuckets() {
        long[] first = new long[100];
        for (int i = 0; i < first.length; i++) {
            first[i] = 100L + i; // 100..199 us
        }
        ServerMetrics m = new ServerMetrics().add(server(3, first)).add(server(4, 5_000));
        assertEquals(7, m.closes(CloseReason.PING_TIMEOUT), "summed; max_line is no CloseReason");
        assertEquals(0, m.closes(CloseReason.READER_IDLE));
        assertEquals(7, m.closesTotal());
        assertEquals(101, m.rttCount());
        assertEquals(5.0, m.rttMaxMillis(), 1e-9, "the largest sample of either, exactly");
        double p50 = m.rttQuantileMillis(0.5);
        assertTrue(p50 >= 0.149 / 1.19 && p50 <= 0.151 * 1.19, "within a bucket of 150 us: " + p50);
        double p999 = m.rttQuantileMillis(0.999);
        assertTrue(p999 > 4.2 && p999 <= 5.0 * 1.19, "in the bucket of 5 ms: " + p999);
        assertTrue(Double.isNaN(new ServerMetrics().rttQuantileMillis(0.5)), "no samples");
    }

    @Test
    void theServersCountsMustMatchWhatTheClientsWereTold() {
        Scenario s = Scenario.builder().protocol(ServerConfig.Protocol.WEBSOCKET).build();
        RunResult r = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, 10);
        r.client.goodbyesByRole[Role.SILENT.ordinal()][CloseReason.PING_TIMEOUT.ordinal()] = 3;
        r.client.goodbyesByRole[Role.DYING.ordinal()][CloseReason.PING_TIMEOUT.ordinal()] = 4;
        assertEquals(List.of(), r.closeReasonFailures(s), "not read: nothing to compare");
        r.serverMetrics.add(server(7));
        assertEquals(List.of(), r.closeReasonFailures(s));
        r.client.goodbyesByRole[Role.PONG.ordinal()][CloseReason.READER_IDLE.ordinal()] = 1;
        assertEquals(List.of("heartbeat/local: the servers counted 0 closes for READER_IDLE, the clients were told "
                + "READER_IDLE 1 times"), r.closeReasonFailures(s));
    }

    /**
     * HTTP/2 cannot name a ping-timeout close that comes in a max-age grace (the final GOAWAY named the
     * last stream id, and Netty's codec drops a second one): the clients count such closes of dead
     * dying connections, told MAX_AGE, and as many of them as the servers counted may move from
     * MAX_AGE to PING_TIMEOUT; not more.
     */
    @Test
    void deadConnectionsClosedInTheirGraceMayBeCountedForIdlenessByTheServers() {
        Scenario s = Scenario.builder().protocol(ServerConfig.Protocol.HTTP2)
                .mix(Mix.parse("silent=40,dying=40,aged=20")).durationNanos(200_000_000_000L).build();
        RunResult r = new RunResult(Scenario.HEARTBEAT, RunPlan.TCP, 10);
        r.client.goodbyesByRole[Role.SILENT.ordinal()][CloseReason.PING_TIMEOUT.ordinal()] = 10;
        r.client.goodbyesByRole[Role.DYING.ordinal()][CloseReason.MAX_AGE.ordinal()] = 20;
        r.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"ping_timeout\"} 12\n"
                + "demo_connections_closed_total{reason=\"max_age\"} 18\n"));
        assertEquals(List.of("heartbeat/tcp: the servers counted 12 closes for PING_TIMEOUT, the clients were told "
                + "PING_TIMEOUT 10 times", "heartbeat/tcp: the servers counted 18 closes for MAX_AGE, the clients were "
                + "told MAX_AGE 20 times"), r.closeReasonFailures(s), "no dying connection was closed in its grace");
        r.client.idleClosesInGrace = 2;
        assertEquals(List.of(), r.closeReasonFailures(s));
        r.client.idleClosesInGrace = 1;
        assertEquals(2, r.closeReasonFailures(s).size(), r.closeReasonFailures(s).toString());
    }

    /** A storm's budget is checked on the servers' own counts of their busiest second, without allowance. */
    @Test
    void aServerWhoseBudgetHandedOverMoreThanItsBucketAllowsFailsTheStorm() {
        Scenario s = Scenario.builder().connections(100_000).mix(Mix.parse("silent=100")).storm(true)
                .policy(Scenario.Policy.CLOSE).idleTimeoutNanos(10_000_000_000L).actionBudget(20_000).build();
        RunResult r = new RunResult(Scenario.HEARTBEAT, RunPlan.TCP, 10);
        r.serverProcesses = 2;
        r.serverMetrics.add(ServerProbe.parseMetrics("heartbeat_actions_busiest_second 10100\n"))
                .add(ServerProbe.parseMetrics("heartbeat_actions_busiest_second{monitor=\"m\"} 9000\n"));
        assertEquals(10_100, r.serverMetrics.busiestBudgetSecond, "the busiest of the servers");
        assertEquals(List.of(), r.stormFailures(s), "10,000 a second and a bucket of 100");
        r.serverMetrics.add(ServerProbe.parseMetrics("heartbeat_actions_busiest_second 10101\n"));
        assertEquals(List.of("heartbeat/tcp: storm: a server's budget handed over 10101 actions in one second of its "
                + "clock, more than its bucket allows (10100)"), r.stormFailures(s));
    }

    @Test
    void withoutAGoodbyeEveryServerCloseMustBeTheKeepAlivesAndSeen() {
        Scenario mqtt = Scenario.builder().protocol(ServerConfig.Protocol.MQTT).build();
        RunResult r = new RunResult(Scenario.NETTY, RunPlan.TCP, 10);
        r.client.closedByRole[Role.SILENT.ordinal()] = 5;
        r.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"reader_idle\"} 5\n"));
        assertEquals(List.of(), r.closeReasonFailures(mqtt));
        r.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"ping_timeout\"} 1\n"));
        assertEquals(List.of("netty/tcp: the servers counted 1 closes for other reasons than READER_IDLE: "
                + "{READER_IDLE=5, PING_TIMEOUT=1}"), r.closeReasonFailures(mqtt));
    }

    @Test
    void floodersMustBeClosedForPingAbuseAndNoOneElse() {
        Scenario ws = Scenario.builder().protocol(ServerConfig.Protocol.WEBSOCKET)
                .mix(Mix.parse("silent=50,flooder=50")).build();
        RunResult r = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, 10);
        r.client.goodbyesByRole[Role.SILENT.ordinal()][CloseReason.PING_TIMEOUT.ordinal()] = 5;
        r.client.goodbyesByRole[Role.FLOODER.ordinal()][CloseReason.PING_ABUSE.ordinal()] = 5;
        r.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"ping_timeout\"} 5\n"
                + "demo_connections_closed_total{reason=\"ping_abuse\"} 5\n"));
        assertEquals(List.of(), r.closeReasonFailures(ws));
        assertEquals(List.of(), r.checkFailures().stream().filter(f -> f.contains("PING_ABUSE")).toList());
        r.client.goodbyesByRole[Role.SILENT.ordinal()][CloseReason.PING_TIMEOUT.ordinal()] = 4;
        r.client.goodbyesByRole[Role.SILENT.ordinal()][CloseReason.PING_ABUSE.ordinal()] = 1;
        assertTrue(r.checkFailures().contains("heartbeat/local: 1 connections of other roles than flooder were told "
                + "PING_ABUSE"), r.checkFailures().toString());

        Scenario mqtt = Scenario.builder().protocol(ServerConfig.Protocol.MQTT)
                .mix(Mix.parse("silent=50,flooder=50")).build();
        RunResult m = new RunResult(Scenario.NETTY, RunPlan.TCP, 10);
        m.client.closedByRole[Role.SILENT.ordinal()] = 5;
        m.client.closedByRole[Role.FLOODER.ordinal()] = 2;
        m.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"reader_idle\"} 5\n"
                + "demo_connections_closed_total{reason=\"ping_abuse\"} 2\n"));
        assertEquals(List.of(), m.closeReasonFailures(mqtt), "no goodbye: the servers' counts, role by role");
        m.client.closedByRole[Role.FLOODER.ordinal()] = 3;
        assertEquals(List.of("netty/tcp: the servers counted 2 closes for PING_ABUSE, the clients saw 3 closes of "
                + "flooders"), m.closeReasonFailures(mqtt));
        m.client.closedByRole[Role.FLOODER.ordinal()] = 2;
        m.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"ping_timeout\"} 1\n"));
        assertEquals(List.of("netty/tcp: the servers counted 1 closes for other reasons than READER_IDLE and "
                + "PING_ABUSE: {READER_IDLE=5, PING_TIMEOUT=1, PING_ABUSE=2}"), m.closeReasonFailures(mqtt));
    }
}
