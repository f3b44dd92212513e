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

import dev.heartbeat.demo.EchoPipeline;
import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.concurrent.GlobalEventExecutor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The client and the verdicts end to end, in this JVM on the local transport, with the demo server's
 * own pipeline (as a local run has it) and with servers that misbehave on purpose. Short timeouts:
 * PING after 100 ms, two missed pings of 50 ms, so every close is due 200 ms after the last input.
 */
class InProcessRunTest {

    private static final int CONNECTIONS = 200;

    private static Scenario scenario() {
        return scenario(ServerConfig.Protocol.LINE);
    }

    /**
     * With MQTT, whose Keep Alive is whole seconds: Keep Alive 1 s, every close due 1.5 s after the last
     * input, in a 4.8 s window.
     */
    private static Scenario scenario(ServerConfig.Protocol protocol) {
        boolean mqtt = protocol == ServerConfig.Protocol.MQTT;
        return Scenario.builder()
                .protocol(protocol)
                .connections(CONNECTIONS)
                .policy(Scenario.Policy.PING)
                .pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(mqtt ? 1_000 : 100))
                .pingTimeoutNanos(TimeUnit.MILLISECONDS.toNanos(50))
                .maxMissedPings(2)
                .activePeriodNanos(TimeUnit.MILLISECONDS.toNanos(20))
                .durationNanos(TimeUnit.MILLISECONDS.toNanos(mqtt ? 4_800 : 3_300))
                .build();
    }

    @SuppressWarnings("deprecation") // DefaultEventLoopGroup, deprecated in Netty 4.2 only
    private static EventLoopGroup newHost() {
        return new DefaultEventLoopGroup(1);
    }

    private static ClientResult run(Scenario s, String expectedImpl, ChannelHandler serverChildHandler)
            throws Exception {
        return run(s, expectedImpl, serverChildHandler, () -> { }, null);
    }

    private static ClientResult run(Scenario s, String expectedImpl, ChannelHandler serverChildHandler,
            Runnable atEnd) throws Exception {
        return run(s, expectedImpl, serverChildHandler, atEnd, null);
    }

    private static ClientResult run(Scenario s, String expectedImpl, ChannelHandler serverChildHandler,
            EchoPipeline drained) throws Exception {
        return run(s, expectedImpl, serverChildHandler, () -> { }, drained);
    }

    /**
     * A run; {@code atEnd} runs when the window ends, before the clients finish (as a local run reads its
     * server); with {@code --drain}, {@code drained}'s monitor (if not null) is drained at the moment the
     * harness would.
     */
    @SuppressWarnings("deprecation") // DefaultEventLoopGroup, deprecated in Netty 4.2 only
    private static ClientResult run(Scenario s, String expectedImpl, ChannelHandler serverChildHandler,
            Runnable atEnd, EchoPipeline drained) throws Exception {
        EventLoopGroup boss = new DefaultEventLoopGroup(1);
        EventLoopGroup workers = new DefaultEventLoopGroup(2);
        EventLoopGroup clients = new DefaultEventLoopGroup(2);
        LocalAddress address = new LocalAddress("in-process-run-" + System.nanoTime());
        // The server's ends, closed before any loop shuts down: a local channel's close hands its peer's
        // close to the peer's loop, and one that finds that loop terminated drops what is in flight.
        ChannelGroup children = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
        try {
            Channel server = new ServerBootstrap().group(boss, workers).channel(LocalServerChannel.class)
                    .childHandler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            children.add(ch);
                            ch.pipeline().addLast(serverChildHandler);
                        }
                    }).bind(address).sync().channel();
            ClientDriver driver = new ClientDriver(s, expectedImpl, 0, s.connections, clients,
                    InOrderLocalChannel.class, i -> address, null, false);
            driver.connectAll(100_000, System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
            long end = start + s.durationNanos;
            driver.startRun(start, end);
            if (drained != null) {
                ParentLink.sleepUntil(start + s.drainDelayNanos());
                drained.monitor().drain(java.time.Duration.ofNanos(s.drainNanos)).get(5, TimeUnit.SECONDS);
            }
            ParentLink.sleepUntil(end);
            atEnd.run();
            ClientResult result = driver.finish(TimeUnit.SECONDS.toNanos(5));
            driver.closeAll(TimeUnit.SECONDS.toNanos(5));
            server.close().sync();
            return result;
        } finally {
            children.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            clients.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
            workers.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
            boss.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    /** Pings each pong connection got at least: 10, or a third of the ping intervals in the window. */
    private static long pingsPerPong(Scenario s) {
        return Math.min(10, s.durationNanos / s.pingIntervalNanos / 3);
    }

    private static void assertCorrect(Scenario s, ClientResult r) {
        Map<Role, Integer> counts = s.mix.counts(s.connections);
        int mustClose = counts.get(Role.SILENT) + counts.get(Role.DYING);
        int flooders = counts.get(Role.FLOODER);
        assertEquals(s.connections, r.connected, "connected");
        assertEquals(0, r.connectFailures);
        assertEquals(0, r.premature, "premature: " + r.failureSamples);
        assertEquals(0, r.unexpected, "unexpected: " + r.failureSamples);
        assertEquals(0, r.leftOpen, "left open: " + r.failureSamples);
        assertEquals(mustClose + flooders, r.expectedCloses);
        assertEquals(mustClose + flooders, r.observedCloses);
        assertEquals(mustClose, r.lateness.getTotalCount(), "the idle closes' lateness");
        assertTrue(r.echoesRecorded > counts.get(Role.ACTIVE) * 100, "echoes measured: " + r.echoesRecorded);
        if (s.protocol.pings()) {
            assertTrue(r.pingsByRole[Role.PONG.ordinal()] >= counts.get(Role.PONG) * pingsPerPong(s),
                    "pongs were pinged");
        }
        assertEquals(0, r.closedByRole[Role.PONG.ordinal()], "answering connections stay open");
        boolean goodbyes = s.expectedGoodbye() != null;
        assertEquals(mustClose + (goodbyes ? 0 : flooders), r.goodbyes(s.expectedGoodbye()),
                "every close told why: " + s.expectedGoodbye());
        assertEquals(goodbyes ? flooders : 0, r.goodbyes(CloseReason.PING_ABUSE), "flooders told PING_ABUSE");
        assertEquals(flooders, r.abuseCloses, "every flooder closed after more pings than forgiven");
        assertEquals(flooders, r.abuseCloseTime.getTotalCount());
        assertTrue(r.flooderPings >= flooders * (long) Scenario.FLOOD_BURST, "a burst each, or more if a close "
                + "took longer than a burst period to be seen: " + r.flooderPings);
        assertEquals(0, r.wrongReason);
    }

    /** A whole run, then the servers' own close counts against what the clients were told. */
    private static void assertCorrectRun(Scenario s, String impl) throws Exception {
        EventLoopGroup host = newHost();
        try (EchoPipeline echo = EchoPipeline.create(LocalWorker.serverConfig(s, impl, 2), host.next())) {
            RunResult run = new RunResult(impl, RunPlan.LOCAL, s.connections);
            run.client = run(s, impl, echo.initializer());
            assertCorrect(s, run.client);
            run.serverMetrics.add(ServerMetrics.of(echo));
            assertEquals(List.of(), run.closeReasonFailures(s));
            if (s.protocol.matchesAnswers() || (s.protocol.pings() && Scenario.NETTY.equals(impl))) {
                long pongs = s.mix.counts(s.connections).get(Role.PONG);
                assertTrue(run.serverMetrics.rttCount() >= pongs * pingsPerPong(s),
                        "round trips of the pongs' answers: " + run.serverMetrics.rttCount());
            }
        } finally {
            host.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * Each protocol's pings and answers (Pong, PING ACK) and goodbyes (Close frame, GOAWAY) with each
     * idle impl: the same verdicts as the line protocol's, every silent and dying client told
     * PING_TIMEOUT, as many as the server counted; MQTT's keep-alive rule closes them (no goodbye),
     * PINGREQ keeps the others.
     */
    @ParameterizedTest
    @CsvSource({"WEBSOCKET, heartbeat", "WEBSOCKET, netty", "HTTP2, heartbeat", "HTTP2, netty", "MQTT, heartbeat",
        "MQTT, netty"})
    void everyProtocolClosesSilentAndDyingClientsForTheRightReason(ServerConfig.Protocol protocol, String impl)
            throws Exception {
        assertCorrectRun(scenario(protocol), impl);
    }

    /**
     * Flooders with every protocol: a mix with them makes the servers police pings, and each flooder is
     * closed for PING_ABUSE after its goodbye (MQTT: none, the servers' count), no other connection is,
     * and the servers count as many, each after one burst. PING after 600 ms (MQTT: Keep Alive 1 s), so
     * peer pings must be 100 ms (167 ms) apart; a 4 s window (MQTT: 4.8 s).
     */
    @ParameterizedTest
    @CsvSource({"LINE, heartbeat", "WEBSOCKET, heartbeat", "HTTP2, heartbeat", "MQTT, heartbeat", "WEBSOCKET, netty"})
    void everyProtocolClosesFloodersForPingAbuseAndNoOneElse(ServerConfig.Protocol protocol, String impl)
            throws Exception {
        boolean mqtt = protocol == ServerConfig.Protocol.MQTT;
        assertCorrectRun(Scenario.builder().protocol(protocol).connections(CONNECTIONS)
                .mix(Mix.parse("silent=20,active=20,pong=30,dying=10,flooder=20")).policy(Scenario.Policy.PING)
                .pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(mqtt ? 1_000 : 600))
                .pingTimeoutNanos(TimeUnit.MILLISECONDS.toNanos(50)).maxMissedPings(2)
                .activePeriodNanos(TimeUnit.MILLISECONDS.toNanos(20))
                .durationNanos(TimeUnit.MILLISECONDS.toNanos(mqtt ? 4_800 : 4_000)).build(), impl);
    }

    @Test
    void heartbeatClosesEverySilentAndDyingConnectionOnTime() throws Exception {
        Scenario s = scenario();
        EventLoopGroup host = newHost();
        try (EchoPipeline echo = EchoPipeline.create(LocalWorker.serverConfig(s, Scenario.HEARTBEAT, 2), host.next())) {
            assertCorrect(s, run(s, Scenario.HEARTBEAT, echo.initializer()));
            assertTrue(echo.monitor().stats().timer().hostedNanos() > 0, "the worker's cycles ran on the host loop");
        } finally {
            host.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    @Test
    void idleStateHandlerClosesEverySilentAndDyingConnectionOnTime() throws Exception {
        Scenario s = scenario();
        try (EchoPipeline echo = EchoPipeline.create(LocalWorker.serverConfig(s, Scenario.NETTY, 2), null)) {
            assertCorrect(s, run(s, Scenario.NETTY, echo.initializer()));
        }
    }

    @Test
    void aServerThatClosesTooEarlyIsCaughtPrematureOnEveryConnection() throws Exception {
        Scenario s = scenario();
        ChannelInitializer<Channel> hasty = new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.eventLoop().schedule(() -> ch.close(), 100, TimeUnit.MILLISECONDS); // due after 200 ms
            }
        };
        ClientResult r = run(s, Scenario.HEARTBEAT, hasty);
        assertTrue(r.connected > 0);
        assertEquals(r.connected, r.premature, "every connection that opened was closed early");
        assertEquals(0, r.leftOpen);
        assertTrue(r.earliestPrematureNanos > TimeUnit.MILLISECONDS.toNanos(50), "about 100 ms early");
        assertTrue(r.failureSamples.get(0).contains("before it was due"), r.failureSamples.get(0));
    }

    @Test
    void aServerThatNeverClosesLeavesEverySilentAndDyingConnectionOpen() throws Exception {
        Scenario s = scenario();
        try (EchoPipeline echo = EchoPipeline.create(LocalWorker.serverConfig(s, Scenario.NONE, 2), null)) {
            ClientResult r = run(s, Scenario.HEARTBEAT, echo.initializer()); // judged as if idle handling ran
            Map<Role, Integer> counts = s.mix.counts(s.connections);
            assertEquals(counts.get(Role.SILENT) + counts.get(Role.DYING), r.leftOpen);
            assertEquals(0, r.premature);
            assertEquals(0, r.observedCloses);
        }
    }

    /**
     * Aged connections (and every other, which the servers age too) on each protocol but MQTT: every max-age
     * close told MAX_AGE, none before the shortest age or after the longest plus the grace and the bound,
     * each aged connection reconnected; the idle closes as always. Default age: a quarter of the 3.3 s
     * window (660 to 990 ms), grace 82 ms.
     */
    @ParameterizedTest
    // WEBSOCKET and HTTP2 failed here before two fixes (5 of 6 and 4 of 6 runs on a loaded machine): the
    // library pinged after its WebSocket Close, which the peer's decoder drops, and closed for PING_TIMEOUT in
    // the grace (now the Close ends the pings: GuardsTest); and a dying HTTP/2 connection closed for
    // PING_TIMEOUT in its grace cannot be told so (ClientResult.idleClosesInGrace). HTTP2 failed once more in CI
    // (servers 61 PING_TIMEOUT, clients told 60), reproduced 1 in 20 with a core busy: a close made 81.9 ms into the
    // server's 82 ms grace reached the client 82.5 ms after its goodbye (ClientResult.idleDueAfterGrace).
    @CsvSource({"LINE", "WEBSOCKET", "HTTP2"})
    void agedConnectionsAreClosedAtTheirAgeAndReconnect(ServerConfig.Protocol protocol) throws Exception {
        Scenario s = Scenario.builder().protocol(protocol).connections(CONNECTIONS)
                .mix(Mix.parse("silent=20,active=20,pong=30,dying=10,aged=20")).policy(Scenario.Policy.PING)
                .pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(100))
                .pingTimeoutNanos(TimeUnit.MILLISECONDS.toNanos(50)).maxMissedPings(2)
                .activePeriodNanos(TimeUnit.MILLISECONDS.toNanos(20))
                .durationNanos(TimeUnit.MILLISECONDS.toNanos(3_300)).build();
        EventLoopGroup host = newHost();
        try (EchoPipeline echo = EchoPipeline.create(LocalWorker.serverConfig(s, Scenario.HEARTBEAT, 2), host.next())) {
            RunResult run = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, s.connections);
            run.client = run(s, Scenario.HEARTBEAT, echo.initializer(),
                    () -> run.serverMetrics.add(ServerMetrics.of(echo))); // replacements go on closing after it
            ClientResult r = run.client;
            assertEquals(List.of(), run.checkFailures(), r.failureSamples.toString());
            assertEquals(List.of(), run.closeReasonFailures(s));
            int aged = s.mix.counts(s.connections).get(Role.AGED);
            assertTrue(r.closedByRole[Role.AGED.ordinal()] >= aged, "each aged at least once: "
                    + r.closedByRole[Role.AGED.ordinal()]);
            // but those closed for their idleness right after their loop fell behind (Verdict.CLIENT_BEHIND)
            assertEquals(r.closedByRole[Role.AGED.ordinal()] - r.behindByRole[Role.AGED.ordinal()],
                    r.goodbyesByRole[Role.AGED.ordinal()][CloseReason.MAX_AGE.ordinal()], "all told MAX_AGE");
            assertTrue(r.ageReconnects >= aged, "reconnected: " + r.ageReconnects);
            assertEquals(r.ageReconnects, r.reconnectsPerSecond.total());
            assertEquals(0, r.late);
            assertEquals(r.observedCloses, r.expectedCloses, "every silent and dying one (or its replacement) closed");
        } finally {
            host.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * A small storm: 1,000 silent connections opened together, closed 300 ms later, with a budget of 1,000
     * a second: no whole second sees more than the budget and its bucket, none early, the last close
     * within the budget's bound (1 s + 1 s); the server deferred all but its bucket's worth.
     */
    @Test
    void aStormWithABudgetIsPacedAtItsRate() throws Exception {
        Scenario s = Scenario.builder().connections(1_000).mix(Mix.parse("silent=100")).storm(true)
                .policy(Scenario.Policy.CLOSE).idleTimeoutNanos(TimeUnit.MILLISECONDS.toNanos(300)).actionBudget(1_000)
                .durationNanos(TimeUnit.MILLISECONDS.toNanos(4_500)).build();
        EventLoopGroup host = newHost();
        try (EchoPipeline echo = EchoPipeline.create(LocalWorker.serverConfig(s, Scenario.HEARTBEAT, 2), host.next())) {
            RunResult run = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, s.connections);
            run.serverProcesses = 1;
            run.client = run(s, Scenario.HEARTBEAT, echo.initializer());
            run.serverMetrics.add(ServerMetrics.of(echo));
            assertEquals(List.of(), run.checkFailures(), run.client.failureSamples.toString());
            assertEquals(List.of(), run.stormFailures(s));
            assertEquals(1_000, run.client.closesPerSecond.total());
            long busiest = run.serverMetrics.busiestBudgetSecond; // the server's own count: no delivery skew
            assertTrue(busiest >= 500 && busiest <= 1_010, "busiest second " + busiest + "; the clients saw "
                    + run.client.closesPerSecond);
            assertTrue(run.serverMetrics.deferredActions >= 1_000 - 1_010 / 2, "deferred: "
                    + run.serverMetrics.deferredActions);
        } finally {
            host.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /**
     * {@code --drain 1s} late in a 4 s window: every connection still open then (active, pong, the silent
     * and dying ones not closed yet) closed told DRAIN, none before the drain, spread over the second;
     * the servers count as many DRAIN closes as the clients were told.
     */
    @Test
    void aDrainClosesEveryConnectionLeftToldDrainAndSpread() throws Exception {
        Scenario s = Scenario.builder().connections(CONNECTIONS).policy(Scenario.Policy.PING)
                .pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(100)).pingTimeoutNanos(TimeUnit.MILLISECONDS
                        .toNanos(50)).maxMissedPings(2).activePeriodNanos(TimeUnit.MILLISECONDS.toNanos(20))
                .durationNanos(TimeUnit.MILLISECONDS.toNanos(4_000)).drainNanos(TimeUnit.SECONDS.toNanos(1)).build();
        assertEquals(TimeUnit.SECONDS.toNanos(1), s.drainDelayNanos());
        EventLoopGroup host = newHost();
        try (EchoPipeline echo = EchoPipeline.create(LocalWorker.serverConfig(s, Scenario.HEARTBEAT, 2),
                host.next())) {
            RunResult run = new RunResult(Scenario.HEARTBEAT, RunPlan.LOCAL, s.connections);
            run.client = run(s, Scenario.HEARTBEAT, echo.initializer(), echo);
            run.serverMetrics.add(ServerMetrics.of(echo));
            ClientResult r = run.client;
            Map<Role, Integer> counts = s.mix.counts(s.connections);
            assertEquals(s.connections, r.connected);
            assertEquals(List.of(), run.checkFailures(), r.failureSamples.toString());
            assertEquals(List.of(), run.closeReasonFailures(s));
            assertEquals(List.of(), run.drainFailures(s));
            assertEquals(r.drained, r.goodbyes(CloseReason.DRAIN));
            assertTrue(r.drained >= counts.get(Role.ACTIVE) + counts.get(Role.PONG), "the ones that stay open, "
                    + "at least: " + r.drained);
            assertEquals(r.drained, r.drainCloses.total());
            assertEquals(s.connections, r.closedByRole[Role.ACTIVE.ordinal()] + r.closedByRole[Role.SILENT.ordinal()]
                    + r.closedByRole[Role.PONG.ordinal()] + r.closedByRole[Role.DYING.ordinal()], "none left open");
        } finally {
            host.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
