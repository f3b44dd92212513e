/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.demo.DemoServer;
import dev.heartbeat.netty.CloseReason;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The stalled role end to end over real loopback sockets (the local transport has no socket buffers to
 * fill), against a demo server in this JVM started with the scenario's settings: PING after 1 s, two
 * missed pings of 250 ms (every idle close due 1.5 s after the last input), so Heartbeat's servers get
 * {@code --write-stall} 250 ms. Heartbeat must close every stalled connection for WRITE_STALL between
 * the write stall after its first line and the close window after its last, and count them so; IdleStateHandler,
 * with no write-stall deadline, closes them for idleness from their last write, as a silent connection.
 * Slowreaders beside them back the server's echoes up as well but keep reading: Heartbeat must close none.
 */
class StalledTcpTest {

    private static final int CONNECTIONS = 60;

    private static Scenario scenario() {
        return scenario("silent=20,active=40,stalled=40");
    }

    private static Scenario scenario(String mix) {
        return Scenario.builder().connections(CONNECTIONS).mix(Mix.parse(mix))
                .policy(Scenario.Policy.PING).pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(1_000))
                .pingTimeoutNanos(TimeUnit.MILLISECONDS.toNanos(250)).maxMissedPings(2)
                .activePeriodNanos(TimeUnit.MILLISECONDS.toNanos(20))
                .durationNanos(TimeUnit.MILLISECONDS.toNanos(4_500)).build();
    }

    // EpollEventLoopGroup and NioEventLoopGroup are deprecated in Netty 4.2 only; the clients use epoll if they can
    @SuppressWarnings("deprecation")
    private static RunResult run(Scenario s, String impl) throws Exception {
        boolean epoll = Epoll.isAvailable();
        EventLoopGroup clients = epoll ? new EpollEventLoopGroup(1) : new NioEventLoopGroup(1);
        Class<? extends Channel> channel = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        try (DemoServer server = DemoServer.start(LocalWorker.serverConfigBuilder(s, impl, 1).host("127.0.0.1")
                .port(0).metricsPort(0).build())) {
            ClientDriver driver = new ClientDriver(s, impl, 0, s.connections, clients, channel,
                    i -> server.address(), null, true);
            driver.connectAll(10_000, System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            long end = start + s.durationNanos;
            driver.startRun(start, end);
            ParentLink.sleepUntil(end);
            RunResult r = new RunResult(impl, RunPlan.TCP, s.connections);
            r.client = driver.finish(TimeUnit.SECONDS.toNanos(5));
            Map<String, Double> metrics = new ServerProbe("127.0.0.1:" + server.metricsPort()).metrics();
            r.serverMetrics.add(metrics);
            driver.closeAll(TimeUnit.SECONDS.toNanos(5));
            return r;
        } finally {
            clients.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {Scenario.HEARTBEAT, Scenario.NETTY})
    void everyStalledConnectionIsClosedInTimeAndCountedForItsReason(String impl) throws Exception {
        Scenario s = scenario();
        RunResult r = run(s, impl);
        ClientResult c = r.client;
        int stalled = s.mix.counts(s.connections).get(Role.STALLED);
        assertEquals(s.connections, c.connected, "connected");
        assertEquals(List.of(), r.checkFailures(), c.failureSamples + "; servers: " + r.serverMetrics.closes);
        assertEquals(List.of(), r.closeReasonFailures(s));
        assertEquals(stalled, c.closedByRole[Role.STALLED.ordinal()], "every stalled connection closed");
        assertEquals(stalled, c.goodbyesByRole[Role.STALLED.ordinal()][ClientResult.goodbyeIndex(null)],
                "none of them told why: they do not read");
        assertTrue(c.stalledBytes > stalled * 16_384L, "each wrote past its own high water mark: " + c.stalledBytes);
        boolean heartbeat = Scenario.HEARTBEAT.equals(impl);
        assertEquals(heartbeat ? stalled : 0, r.serverMetrics.closes(CloseReason.WRITE_STALL));
        assertEquals(heartbeat ? stalled : 0, c.stallCloses);
        assertEquals(heartbeat ? stalled : 0, c.stallCloseTime.getTotalCount());
        assertEquals(0, c.goodbyes(CloseReason.WRITE_STALL), "no other connection told WRITE_STALL");
        assertEquals(0, c.closedByRole[Role.ACTIVE.ordinal()], "active ones read their echoes: never stalled");
    }

    /**
     * The write-stall guard's contract: a slow reader that still drains is never closed. It failed (every
     * slowreader closed for WRITE_STALL) until the demo server set TCP_NOTSENT_LOWAT with a write stall: the
     * server's kernel had woken its writer only once a third of an autotuned send buffer was free, so the
     * outbound buffer the guard watches did not move for a whole stall (see {@link Scenario#SLOW_READS_PER_STALL}).
     */
    @Test
    void slowReadersBesideStalledOnesAreNeverClosedThoughTheirEchoesBackUp() throws Exception {
        // A write stall of 750 ms, as the README's run has (a read every 250 ms): with the 250 ms of scenario(), a
        // client loop that stalled for a quarter of a second on a loaded CI machine got 3 of 18 closed.
        Scenario s = Scenario.builder().connections(CONNECTIONS)
                .mix(Mix.parse("silent=10,active=30,stalled=30,slowreader=30")).policy(Scenario.Policy.PING)
                .pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(3_000))
                .pingTimeoutNanos(TimeUnit.MILLISECONDS.toNanos(250)).maxMissedPings(2)
                .activePeriodNanos(TimeUnit.MILLISECONDS.toNanos(20))
                .durationNanos(TimeUnit.MILLISECONDS.toNanos(6_500)).build();
        RunResult r = run(s, Scenario.HEARTBEAT);
        ClientResult c = r.client;
        int stalled = s.mix.counts(s.connections).get(Role.STALLED);
        long slow = s.mix.counts(s.connections).get(Role.SLOWREADER);
        String seen = c.failureSamples + "; servers: " + r.serverMetrics.closes;
        assertEquals(List.of(), r.checkFailures(), seen);
        assertEquals(List.of(), r.closeReasonFailures(s), "the servers closed no slowreader after the end either");
        assertEquals(slow, c.connectedByRole[Role.SLOWREADER.ordinal()]);
        assertEquals(0, c.closedByRole[Role.SLOWREADER.ordinal()], "never closed: " + seen);
        assertEquals(stalled, c.closedByRole[Role.STALLED.ordinal()], "every stalled connection closed");
        assertEquals(stalled, r.serverMetrics.closes(CloseReason.WRITE_STALL), "for WRITE_STALL, and only they");
        assertTrue(c.slowBackedUp > 0 && c.slowLongestUnwritableNanos > s.writeStallNanos(),
                "their echoes backed up: " + c.slowBackedUp + " of " + slow + " unwritable for longer than the stall, "
                + "the longest " + c.slowLongestUnwritableNanos / 1_000_000 + " ms");
        assertTrue(c.slowBytesRead > 0 && c.slowBytesRead < c.slowBytesWritten,
                "they read, less than they wrote: " + c.slowBytesRead + " of " + c.slowBytesWritten);
        assertTrue(r.slowReadBytesPerSecond() > 0, "a read rate");
    }
}
