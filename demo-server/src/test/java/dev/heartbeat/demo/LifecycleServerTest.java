/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static dev.heartbeat.demo.TestSupport.get;
import static dev.heartbeat.demo.TestSupport.post;
import static dev.heartbeat.demo.TestSupport.sample;
import static dev.heartbeat.demo.TestSupport.testConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.heartbeat.demo.TestSupport.LineClient;
import dev.heartbeat.netty.JitterMode;
import org.junit.jupiter.api.Test;

/** The demo server's lifecycle flags and POST /drain, over real loopback sockets. */
class LifecycleServerTest {

    private static ServerConfig.Lifecycle maxAge(Duration age) {
        return new ServerConfig.Lifecycle(age, 0, JitterMode.SYMMETRIC, Duration.ZERO, Duration.ZERO, Duration.ZERO, 0);
    }

    @Test
    void maxAgeClosesATalkingConnectionAtItsAgeAndSaysWhy() throws Exception {
        try (DemoServer s = DemoServer.start(testConfig().lifecycle(maxAge(Duration.ofMillis(300))).build());
                LineClient c = new LineClient(s)) {
            long start = System.nanoTime();
            c.send("still here");
            assertEquals("still here", c.readLine());
            assertEquals("BYE MAX_AGE", c.readLine());
            assertNull(c.readLine(), "closed");
            assertTrue(System.nanoTime() - start >= Duration.ofMillis(250).toNanos(), "not before its age");
            TestSupport.await("counted", () -> sample(s, "heartbeat_connections_closed_total{reason=\"max_age\"}")
                    == 1.0);
        }
    }

    @Test
    void withAGraceTheGoodbyeComesAtTheAgeAndTheCloseAfterTheGrace() throws Exception {
        ServerConfig.Lifecycle graced = new ServerConfig.Lifecycle(Duration.ofMillis(300), 0, JitterMode.SYMMETRIC,
                Duration.ofMillis(700), Duration.ZERO, Duration.ZERO, 0);
        try (DemoServer s = DemoServer.start(testConfig().lifecycle(graced).build());
                LineClient c = new LineClient(s)) {
            long start = System.nanoTime();
            assertEquals("BYE MAX_AGE", c.readLine());
            long told = System.nanoTime() - start;
            assertTrue(told >= Duration.ofMillis(250).toNanos(), "not before its age: " + told);
            assertTrue(told < Duration.ofMillis(800).toNanos(), "at its age, not at the close a grace later: " + told);
            c.send("finishing up");
            assertEquals("finishing up", c.readLine(), "served during the grace");
            assertNull(c.readLine(), "closed after the grace, with no second goodbye");
            assertTrue(System.nanoTime() - start >= Duration.ofMillis(950).toNanos(), "not before age + grace");
        }
    }

    @Test
    void drainClosesEveryConnectionAndAnswersHowMany() throws Exception {
        try (DemoServer s = DemoServer.start(testConfig().build())) {
            List<LineClient> clients = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                LineClient c = new LineClient(s);
                c.send("hi");
                assertEquals("hi", c.readLine());
                clients.add(c);
            }
            HttpResponse<String> res = post(s, "/drain?window=0s");
            assertEquals(200, res.statusCode(), res.body());
            assertTrue(res.body().startsWith("{\"draining\": 3, \"window_ms\": 0}"), res.body());
            for (LineClient c : clients) {
                assertEquals("BYE DRAIN", c.readLine());
                assertNull(c.readLine());
                c.close();
            }
            TestSupport.await("counted as the load test reads it", () -> sample(s,
                    "demo_connections_closed_total{reason=\"drain\"}") == 3.0);
            assertEquals(400, post(s, "/drain").statusCode(), "a window is required");
            assertEquals(400, post(s, "/drain?window=soon").statusCode());
            assertEquals(405, get(s, "/drain").statusCode());
        }
    }

    @Test
    void lifecycleFlagsParseAndBadOnesAreRefused() {
        picocli.CommandLine cmd = DemoCommand.commandLine();
        cmd.parseArgs("--max-age", "30m", "--max-age-jitter", "0.1",
                "--max-age-jitter-mode", "down_only", "--max-age-grace", "30s", "--write-stall", "20s",
                "--max-unwritable", "1m", "--action-budget", "5000");
        ServerConfig cfg = ((DemoCommand) cmd.getCommand()).toConfig();
        assertEquals(new ServerConfig.Lifecycle(Duration.ofMinutes(30), 0.1, JitterMode.DOWN_ONLY,
                Duration.ofSeconds(30), Duration.ofSeconds(20), Duration.ofMinutes(1), 5000), cfg.lifecycle());
        assertTrue(cfg.idleSummary().contains("max-age=30m jitter 0.1 down_only grace 30s, write-stall=20s, "
                + "max-unwritable=1m, action-budget=5000/s"), cfg.idleSummary());
        assertThrows(IllegalArgumentException.class, () -> testConfig().idleImpl(ServerConfig.IdleImpl.NETTY)
                .lifecycle(maxAge(Duration.ofMinutes(1))).build());
        assertThrows(IllegalArgumentException.class, () -> testConfig().lifecycle(new ServerConfig.Lifecycle(
                Duration.ZERO, 0, JitterMode.SYMMETRIC, Duration.ofSeconds(1), Duration.ZERO, Duration.ZERO, 0))
                .build(), "grace without an age");
        assertThrows(IllegalArgumentException.class, () -> testConfig().lifecycle(new ServerConfig.Lifecycle(
                Duration.ofMinutes(1), 1.0, JitterMode.SYMMETRIC, Duration.ZERO, Duration.ZERO, Duration.ZERO, 0))
                .build(), "jitter 1");
    }
}
