/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static dev.heartbeat.demo.TestSupport.await;
import static dev.heartbeat.demo.TestSupport.sample;
import static dev.heartbeat.demo.TestSupport.testConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import dev.heartbeat.demo.TestSupport.LineClient;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.testing.LeakDetection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The idle policies, the same for Heartbeat and the Netty A/B impl. Short timeouts and blocking
 * reads with a bounded wait; nothing sleeps for a timer.
 */
@ExtendWith(LeakDetection.class)
class IdlePolicyTest {

    private static final String READER_IDLE_CLOSES = "demo_connections_closed_total{reason=\"reader_idle\"}";
    private static final String PING_TIMEOUT_CLOSES = "demo_connections_closed_total{reason=\"ping_timeout\"}";

    @ParameterizedTest
    @EnumSource(names = {"HEARTBEAT", "NETTY"})
    void closePolicyClosesASilentClient(ServerConfig.IdleImpl impl) throws Exception {
        Duration timeout = Duration.ofMillis(300);
        try (DemoServer server = DemoServer.start(testConfig().idleImpl(impl)
                .policy(ServerConfig.Policy.CLOSE).idleTimeout(timeout).build())) {
            long start = System.nanoTime(); // before the connection: its idleness starts later
            try (LineClient silent = new LineClient(server); LineClient talker = new LineClient(server)) {
                talker.send("hi");
                assertEquals("hi", talker.readLine());
                silent.expectGoodbye(CloseReason.READER_IDLE);
                long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(elapsedMillis >= timeout.toMillis(), "closed after only " + elapsedMillis + " ms");
                talker.expectGoodbye(CloseReason.READER_IDLE); // silent since its line, so closed too
            }
            await("two reader-idle closes counted", () -> sample(server, READER_IDLE_CLOSES) == 2);
            await("no connection open", () -> sample(server, "demo_connections_open") == 0);
            assertEquals(0, sample(server, PING_TIMEOUT_CLOSES));
            if (impl == ServerConfig.IdleImpl.HEARTBEAT) {
                await("wheel empty", () -> server.monitor().stats().channels() == 0);
            } else {
                assertTrue(Double.isNaN(sample(server, "heartbeat_wheel_entries")), "no heartbeat_* without it");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(names = {"HEARTBEAT", "NETTY"})
    void pingPolicyPingsAndClosesAfterMissedPings(ServerConfig.IdleImpl impl) throws Exception {
        try (DemoServer server = DemoServer.start(testConfig().idleImpl(impl).policy(ServerConfig.Policy.PING)
                .pingInterval(Duration.ofMillis(150)).pingTimeout(Duration.ofMillis(250)).maxMissedPings(2)
                .build())) {
            try (LineClient silent = new LineClient(server)) {
                assertEquals("PING", silent.readLine());
                assertEquals("PING", silent.readLine()); // first one missed
                silent.expectGoodbye(CloseReason.PING_TIMEOUT); // second one missed
            }
            await("ping-timeout close counted", () -> sample(server, PING_TIMEOUT_CLOSES) == 1);
            assertEquals(2, sample(server, "demo_pings_sent_total"));

            try (LineClient answering = new LineClient(server)) {
                assertEquals("PING", answering.readLine());
                answering.send("PONG"); // any line answers (within the 250 ms timeout), and is echoed
                assertEquals("PONG", answering.readLine());
                // Answered: a fresh round, again two pings before the close.
                assertEquals("PING", answering.readLine());
                assertEquals("PING", answering.readLine());
                answering.expectGoodbye(CloseReason.PING_TIMEOUT);
            }
            await("second ping-timeout close counted", () -> sample(server, PING_TIMEOUT_CLOSES) == 2);
            assertEquals(5, sample(server, "demo_pings_sent_total"));
            assertEquals(0, sample(server, READER_IDLE_CLOSES));
        }
    }

    @ParameterizedTest
    @EnumSource(names = {"HEARTBEAT", "NETTY"})
    void eventPolicyOnlyCounts(ServerConfig.IdleImpl impl) throws Exception {
        try (DemoServer server = DemoServer.start(testConfig().idleImpl(impl).policy(ServerConfig.Policy.EVENT)
                .idleTimeout(Duration.ofMillis(50)).build());
                LineClient c = new LineClient(server)) {
            c.send("hi");
            assertEquals("hi", c.readLine());
            await("reader-idle events", () -> sample(server, "demo_idle_events_total{kind=\"reader\"}") >= 2);
            c.send("still open");
            assertEquals("still open", c.readLine());
            assertEquals(0, sample(server, READER_IDLE_CLOSES));
            assertEquals(0, sample(server, "demo_idle_events_total{kind=\"writer\"}"));
        }
    }

    @ParameterizedTest
    @EnumSource(names = {"HEARTBEAT", "NETTY"})
    void infoMetricNamesTheImpl(ServerConfig.IdleImpl impl) throws Exception {
        try (DemoServer server = DemoServer.start(
                testConfig().idleImpl(impl).policy(ServerConfig.Policy.PING).build())) {
            String metrics = server.renderMetrics();
            assertTrue(metrics.contains("demo_server_info{idle_impl=\"" + impl + "\",netty_version="), metrics);
            assertTrue(metrics.contains(",policy=\"ping\",probe=\"line\",transport="), metrics);
            assertEquals(impl == ServerConfig.IdleImpl.HEARTBEAT, metrics.contains("heartbeat_worker_wakeups_total"));
        }
    }

    @Test
    void noneHasNoIdleHandling() throws Exception {
        try (DemoServer server = DemoServer.start(testConfig().idleImpl(ServerConfig.IdleImpl.NONE)
                .idleTimeout(Duration.ofMillis(1)).build());
                LineClient c = new LineClient(server)) {
            assertFalse(server.readyLine().contains("idle-timeout"), server.readyLine());
            c.send("hi");
            assertEquals("hi", c.readLine());
            assertEquals(0, sample(server, READER_IDLE_CLOSES));
        }
    }
}
