/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * A close seen right after a write the client's loop made while it ran behind ({@link Verdict#CLIENT_BEHIND}):
 * the write may have come after the server had closed, so its due moment does not bind the server. Seen in
 * {@code InProcessRunTest} on a loaded machine: a client loop ticked once in 245 ms, then sent an echo, and saw
 * the server's PING_TIMEOUT close 1 ms later, "199 ms before it was due". Driven by hand on an
 * {@link EmbeddedChannel}'s loop: its ticker is started and never run, so the loop is as far behind at a
 * moment as that moment is after the ticker's first tick was due.
 */
class ClientBehindTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Every close due 200 ms after the last input. */
    private static Scenario scenario() {
        return Scenario.builder().connections(10).mix(Mix.parse("pong=100")).policy(Scenario.Policy.PING)
                .pingIntervalNanos(100 * MS).pingTimeoutNanos(50 * MS).maxMissedPings(2)
                .durationNanos(3_300 * MS).build();
    }

    /**
     * A pong connection that last wrote {@code wroteAfter} after {@code t0} and was seen closed
     * {@code closedAfter} after it, on a loop whose ticker was started just after {@code t0}.
     */
    private static ClientResult close(long wroteAfter, long closedAfter) {
        return close(new long[] {wroteAfter}, closedAfter);
    }

    /** As {@link #close(long, long)}, with writes at each of {@code wroteAfter}, in order. */
    private static ClientResult close(long[] wroteAfter, long closedAfter) {
        Scenario s = scenario();
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            RunWindow window = new RunWindow();
            long t0 = System.nanoTime();
            window.open(t0, t0 + s.durationNanos);
            ClientLoop loop = new ClientLoop(ch.eventLoop(), s, window, new ClientProgress());
            ch.runPendingTasks(); // starts the ticker: its first tick due 1 ms after now, at least 1 ms after t0
            ClientConnection c = new LineConnection(3, Role.PONG, false);
            c.loop = loop;
            c.channel = ch;
            c.connectStart = t0 - 10 * MS;
            loop.connected(c, t0);
            for (long w : wroteAfter) {
                c.stampAt(t0 + w);
            }
            loop.closed(c, t0 + closedAfter);
            return loop.finish();
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aCloseRightAfterAWriteOfALoopBehindIsNotJudged() {
        ClientResult r = close(250 * MS, 251 * MS); // the loop 250 ms behind: the close may be 250 ms old
        assertEquals(0, r.premature, r.failureSamples.toString());
        assertEquals(1, r.closesWhileBehind);
        assertTrue(r.behindNotes.get(0).startsWith("connection 3 (pong): closed told no reason 1.000 ms after its "
                + "last write, which came while its loop ran "), r.behindNotes.toString());
        RunResult run = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, 1);
        run.client = r;
        assertEquals(List.of(), run.checkFailures());
    }

    /**
     * A pong connection told MAX_AGE whose loop fell 70 ms behind (past the 50 ms ping timeout) and which was
     * closed 70 ms into its 82 ms grace, 1 ms after its last write: the server may have closed it for PING_TIMEOUT.
     */
    @Test
    void aConnectionToldMaxAgeWhoseLoopFellBehindMayBeClosedForPingTimeoutInItsGrace() {
        Scenario s = Scenario.builder().protocol(ServerConfig.Protocol.HTTP2).connections(10)
                .mix(Mix.parse("pong=80,aged=20")).policy(Scenario.Policy.PING).pingIntervalNanos(100 * MS)
                .pingTimeoutNanos(50 * MS).maxMissedPings(2).durationNanos(3_300 * MS).build();
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            RunWindow window = new RunWindow();
            long t0 = System.nanoTime();
            window.open(t0, t0 + s.durationNanos);
            ClientLoop loop = new ClientLoop(ch.eventLoop(), s, window, new ClientProgress());
            loop.churn(0, replaced -> { });
            ch.runPendingTasks();
            ClientConnection c = new Http2Connection(3, Role.PONG, false);
            c.loop = loop;
            c.channel = ch;
            loop.connected(c, t0);
            c.goodbye(CloseReason.MAX_AGE);
            c.connectStart = c.goodbyeAt() - 700 * MS;
            c.connectedAt = c.connectStart + MS;
            c.stampAt(c.goodbyeAt() + 69 * MS);
            long closedAt = c.goodbyeAt() + 70 * MS;
            assertTrue(closedAt - t0 > 60 * MS, "the loop's ticker, started at t0, is overdue by the ping timeout");
            loop.closed(c, closedAt);
            RunResult run = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, 1);
            run.client = loop.finish();
            run.serverMetrics.add(ServerProbe.parseMetrics(
                    "demo_connections_closed_total{reason=\"ping_timeout\"} 1\n"));
            assertEquals(List.of(), run.checkFailures(), run.client.failureSamples.toString());
            assertEquals(List.of(), run.closeReasonFailures(s));
            assertEquals(1, run.client.idleClosesInGrace);
            assertEquals(0, run.client.closesWhileBehind, "judged from its connect, the write before: on time");
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** A loop on time judges as before: a close 50 ms after a write is premature. */
    @Test
    void aCloseBeforeTheDueMomentOfAWriteOfALoopOnTimeIsPremature() {
        ClientResult r = close(-50 * MS, 0);
        assertEquals(1, r.premature, r.failureSamples.toString());
        assertEquals(0, r.closesWhileBehind);
    }

    /**
     * A write that may have crossed the close does not hide an early one: judged from the write before, 20 ms
     * earlier and before the close may have been made, it is premature (a server that closed every connection
     * 100 ms after its connect was caught on 197 of 200 without this).
     */
    @Test
    void aCloseEarlyForTheWriteBeforeTheCrossingOneIsPremature() {
        ClientResult r = close(new long[] {-20 * MS, 20 * MS}, 21 * MS);
        assertEquals(1, r.premature, r.behindNotes.toString());
        assertEquals(0, r.closesWhileBehind);
    }

    /** Behind, but the write came before the close can have been made: premature. */
    @Test
    void aWriteBeforeTheLoopFellBehindStillBindsTheServer() {
        ClientResult r = close(-50 * MS, 100 * MS); // behind by about 99 ms at the close: made after t0
        assertEquals(1, r.premature, r.failureSamples.toString());
        assertEquals(0, r.closesWhileBehind);
    }
}
