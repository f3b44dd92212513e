/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * How {@link ClientLoop} counts the close of a silent, or dead dying, HTTP/2 connection told {@code MAX_AGE}:
 * the server may have closed it for {@code PING_TIMEOUT} in its grace without a way to say so, and the client
 * sees the server's grace later than it ran. Driven by hand on an {@link EmbeddedChannel}'s loop, with the moments of
 * the close given, so each case is the same every run: the flake {@code InProcessRunTest} showed once in CI
 * ("the servers counted 61 closes for PING_TIMEOUT, the clients were told PING_TIMEOUT 60 times") came from a
 * close made 81.9 ms into the server's 82 ms grace and seen 82.5 ms after the goodbye.
 */
class IdleAgeCloseTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** InProcessRunTest's aged scenario: each close due 200 ms after the last input; ages 660-990 ms, grace 82 ms. */
    private static Scenario scenario() {
        return Scenario.builder().protocol(ServerConfig.Protocol.HTTP2).connections(200)
                .mix(Mix.parse("silent=20,active=20,pong=30,dying=10,aged=20")).policy(Scenario.Policy.PING)
                .pingIntervalNanos(100 * MS).pingTimeoutNanos(50 * MS).maxMissedPings(2)
                .activePeriodNanos(20 * MS).durationNanos(3_300 * MS).build();
    }

    /**
     * The run as the client saw it: one connection of {@code role}, silent, or dying and dead (its window
     * opened 2 s ago, and every dying one dies in the first 1.1 s), connected {@code age} before its MAX_AGE
     * goodbye came and silent since its connect began, closed {@code afterGoodbye} after that goodbye; and the
     * servers' counts of the close.
     */
    private static RunResult run(Scenario s, long age, long afterGoodbye, CloseReason serverCounted) {
        return run(s, Role.DYING, age, afterGoodbye, serverCounted);
    }

    private static RunResult run(Scenario s, Role role, long age, long afterGoodbye, CloseReason serverCounted) {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            RunWindow window = new RunWindow();
            long start = System.nanoTime() - 2_000 * MS;
            window.open(start, start + s.durationNanos);
            ClientLoop loop = new ClientLoop(ch.eventLoop(), s, window, new ClientProgress());
            loop.churn(0, replaced -> { }); // the replacement a MAX_AGE goodbye opens: not needed here
            ClientConnection c = new Http2Connection(7, role, true);
            c.loop = loop;
            c.channel = ch;
            c.connectStart = System.nanoTime() - age;
            loop.connected(c, c.connectStart + MS);
            c.connectedAt = c.connectStart + MS;
            c.goodbye(CloseReason.MAX_AGE); // stamps its moment now: the connect began `age` before
            c.connectStart = c.goodbyeAt() - age;
            c.connectedAt = c.connectStart + MS;
            loop.closed(c, c.goodbyeAt() + afterGoodbye);
            RunResult run = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, 1);
            run.client = loop.finish();
            run.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\""
                    + serverCounted.name().toLowerCase(java.util.Locale.ROOT) + "\"} 1\n"));
            return run;
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aCloseForIdlenessJustBeforeTheServersGraceEndedIsSeenAfterTheClientsAndMayBeCountedForIt() {
        Scenario s = scenario();
        long graceEnd = s.maxAgeGraceNanos;
        RunResult run = run(s, 700 * MS, graceEnd + MS / 2, CloseReason.PING_TIMEOUT);
        assertEquals(List.of(), run.checkFailures(), run.client.failureSamples.toString());
        assertEquals(List.of(), run.closeReasonFailures(s), "idle due 500 ms before: the server may say either");
        assertEquals(0, run.client.idleClosesInGrace);
        assertEquals(1, run.client.idleDueAfterGrace);
        assertEquals(List.of(), run(s, 700 * MS, graceEnd + MS / 2, CloseReason.MAX_AGE).closeReasonFailures(s),
                "or the age");
    }

    @Test
    void aCloseInTheClientsGraceIsJudgedAgainstTheIdleDueMoment() {
        Scenario s = scenario();
        RunResult run = run(s, 700 * MS, 10 * MS, CloseReason.PING_TIMEOUT);
        assertEquals(List.of(), run.checkFailures(), run.client.failureSamples.toString());
        assertEquals(List.of(), run.closeReasonFailures(s));
        assertEquals(1, run.client.idleClosesInGrace);
        assertEquals(0, run.client.idleDueAfterGrace);
    }

    /**
     * A silent connection's idle close may come after the server's MAX_AGE goodbye too, on a busy server: seen in
     * a loaded run, closed for PING_TIMEOUT 500 ms after its last input (not 200), 4 ms into its grace.
     */
    @Test
    void aSilentConnectionClosedLateForIdlenessInItsGraceMayBeCountedForIt() {
        Scenario s = scenario();
        RunResult run = run(s, Role.SILENT, 700 * MS, 4 * MS, CloseReason.PING_TIMEOUT);
        assertEquals(List.of(), run.checkFailures(), run.client.failureSamples.toString());
        assertEquals(List.of(), run.closeReasonFailures(s));
        assertEquals(1, run.client.idleClosesInGrace);
    }

    /**
     * Not every close after a MAX_AGE goodbye may be an idle one: a dying connection that wrote nothing since
     * its connect began 100 ms before its close was not idle long enough; a server that counted it for
     * PING_TIMEOUT fails the run (an age of 10 ms, so that the close comes after the grace and before that).
     */
    @Test
    void aCloseBeforeTheIdleCloseWasDueMayNotBeCountedForIdleness() {
        Scenario s = Scenario.builder().protocol(ServerConfig.Protocol.HTTP2).connections(200)
                .mix(Mix.parse("silent=20,active=20,pong=30,dying=10,aged=20")).policy(Scenario.Policy.PING)
                .pingIntervalNanos(100 * MS).pingTimeoutNanos(50 * MS).maxMissedPings(2).activePeriodNanos(20 * MS)
                .durationNanos(3_300 * MS).maxAgeNanos(10 * MS).maxAgeJitter(0).maxAgeGraceNanos(82 * MS).build();
        RunResult run = run(s, 10 * MS, 90 * MS, CloseReason.PING_TIMEOUT);
        assertEquals(List.of(), run.checkFailures(), run.client.failureSamples.toString());
        assertEquals(0, run.client.idleClosesInGrace + run.client.idleDueAfterGrace);
        assertEquals(List.of("heartbeat/local: the servers counted 1 closes for PING_TIMEOUT, the clients were told "
                + "PING_TIMEOUT 0 times"), run.closeReasonFailures(s)); // (MAX_AGE: within a second's reconnects)
    }
}
