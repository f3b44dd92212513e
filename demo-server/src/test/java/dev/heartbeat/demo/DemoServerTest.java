/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static dev.heartbeat.demo.TestSupport.await;
import static dev.heartbeat.demo.TestSupport.get;
import static dev.heartbeat.demo.TestSupport.post;
import static dev.heartbeat.demo.TestSupport.sample;
import static dev.heartbeat.demo.TestSupport.testConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import dev.heartbeat.demo.TestSupport.LineClient;
import dev.heartbeat.testing.LeakDetection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The echo protocol and the HTTP endpoints, on one server (the idle timeout is far off). */
@ExtendWith(LeakDetection.class)
class DemoServerTest {

    private static DemoServer server;

    @BeforeAll
    static void start() throws Exception {
        server = DemoServer.start(testConfig().maxLine(64).build());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void bindsOsChosenPorts() {
        assertNotEquals(0, server.port());
        assertTrue(server.metricsPort() > 0);
        assertNotEquals(server.port(), server.metricsPort());
    }

    @Test
    void readyLineNamesTheBoundPortsAndSettings() {
        assertEquals("demo-server listening on 127.0.0.1:" + server.port() + " (transport=" + server.transport()
                + ", idle-impl=heartbeat, policy=close, idle-timeout=30s) metrics on :" + server.metricsPort(),
                server.readyLine());
    }

    @Test
    void echoesEveryLine() throws Exception {
        double before = sample(server, "demo_lines_echoed_total");
        try (LineClient c = new LineClient(server)) {
            c.send("hello");
            assertEquals("hello", c.readLine());
            c.send("héllo wörld ✓");
            assertEquals("héllo wörld ✓", c.readLine());
            c.sendBytes("a\r\nb\n\nc\n".getBytes(StandardCharsets.US_ASCII)); // CRLF, an empty line, a batch
            assertEquals("a", c.readLine());
            assertEquals("b", c.readLine());
            assertEquals("", c.readLine());
            assertEquals("c", c.readLine());
        }
        assertTrue(sample(server, "demo_lines_echoed_total") >= before + 6);
    }

    @Test
    void answersPingWithPong() throws Exception {
        try (LineClient c = new LineClient(server)) {
            c.send("PING");
            assertEquals("PONG", c.readLine());
            c.send("PINGS");
            assertEquals("PINGS", c.readLine());
            c.send("ping");
            assertEquals("ping", c.readLine());
        }
        assertTrue(sample(server, "demo_pongs_sent_total") >= 1);
    }

    @Test
    void overLongLineClosesTheConnectionAndIsCounted() throws Exception {
        double before = sample(server, "demo_connections_closed_total{reason=\"max_line\"}");
        try (LineClient c = new LineClient(server)) {
            c.send("x".repeat(64)); // exactly the limit: fine
            assertEquals("x".repeat(64), c.readLine());
            c.send("y".repeat(65));
            assertEquals("ERR line too long", c.readLine());
            c.expectClosed();
        }
        await("max_line close counted",
                () -> sample(server, "demo_connections_closed_total{reason=\"max_line\"}") == before + 1);
        // The server is fine.
        try (LineClient c = new LineClient(server)) {
            c.send("still here");
            assertEquals("still here", c.readLine());
        }
    }

    @Test
    void invalidUtf8IsEchoedAndCountedAndHarmsNothing() throws Exception {
        double before = sample(server, "demo_invalid_utf8_lines_total");
        byte[] bad = {'a', (byte) 0xC3, (byte) 0x28, (byte) 0xFF, 'z', '\n'};
        try (LineClient c = new LineClient(server)) {
            c.sendBytes(bad);
            String echoed = c.readLine(); // the reader decodes with replacement characters
            assertTrue(echoed.startsWith("a") && echoed.endsWith("z"), echoed);
            c.send("PING");
            assertEquals("PONG", c.readLine());
        }
        assertEquals(before + 1, sample(server, "demo_invalid_utf8_lines_total"));
    }

    @Test
    void countsConnections() throws Exception {
        double accepted = sample(server, "demo_connections_accepted_total");
        try (LineClient a = new LineClient(server); LineClient b = new LineClient(server)) {
            a.send("1");
            b.send("2");
            assertEquals("1", a.readLine());
            assertEquals("2", b.readLine());
            assertTrue(sample(server, "demo_connections_open") >= 2);
        }
        assertTrue(sample(server, "demo_connections_accepted_total") >= accepted + 2);
        await("connections closed", () -> server.counters().openConnections() == 0);
        assertEquals(0, sample(server, "demo_connections_open"));
    }

    @Test
    void healthz() throws Exception {
        HttpResponse<String> res = get(server, "/healthz");
        assertEquals(200, res.statusCode());
        assertEquals("ok", res.body());
    }

    @Test
    void metricsHaveHelpTypeAndTheExpectedNames() throws Exception {
        HttpResponse<String> res = get(server, "/metrics");
        assertEquals(200, res.statusCode());
        assertTrue(res.headers().firstValue("content-type").orElse("").startsWith("text/plain; version=0.0.4"));
        String body = res.body();
        List<String> families = List.of(
                "demo_server_info", "demo_connections_open", "demo_connections_accepted_total",
                "demo_lines_echoed_total", "demo_idle_events_total", "demo_pings_sent_total",
                "demo_connections_closed_total",
                "heartbeat_connections_tracked", "heartbeat_wheel_entries", "heartbeat_worker_queue_depth",
                "heartbeat_worker_lateness_max_seconds", "heartbeat_worker_cpu_seconds_total",
                "heartbeat_worker_expirations_total", "heartbeat_worker_rearms_total", "heartbeat_worker_wakeups_total",
                "heartbeat_worker_cycles_total", "heartbeat_stall_rechecks_total", "heartbeat_connections_closed_total",
                "jvm_memory_used_bytes", "jvm_memory_committed_bytes", "jvm_memory_used_after_gc_bytes",
                "jvm_gc_collections_total", "jvm_gc_collection_seconds_total", "jvm_threads_live_threads",
                "process_cpu_time_ns_total", "process_files_open_files");
        for (String family : families) {
            assertTrue(Pattern.compile("(?m)^# HELP " + family + " \\S").matcher(body).find(), "no HELP for " + family);
            assertTrue(Pattern.compile("(?m)^# TYPE " + family + " (counter|gauge)$").matcher(body).find(),
                    "no TYPE for " + family);
        }
        Map<String, Double> samples = TestSupport.parse(body);
        assertEquals(1.0, samples.get("demo_server_info{idle_impl=\"heartbeat\",netty_version=\""
                + io.netty.util.Version.identify().get("netty-common").artifactVersion() + "\",police_pings=\"off\","
                + "policy=\"close\",probe=\"line\",transport=\"" + server.transport() + "\"}"));
        for (String reason : List.of("reader_idle", "writer_idle", "all_idle", "ping_timeout", "ping_abuse",
                "max_line")) {
            assertTrue(samples.containsKey("demo_connections_closed_total{reason=\"" + reason + "\"}"), reason);
        }
        for (String kind : List.of("reader", "writer", "all")) {
            assertTrue(samples.containsKey("demo_idle_events_total{kind=\"" + kind + "\"}"), kind);
        }
        double heapUsed = sum(samples, "jvm_memory_used_bytes{area=\"heap\",");
        assertTrue(heapUsed > 0, "heap used, summed over the heap pools: " + heapUsed);
        assertTrue(samples.get("process_cpu_time_ns_total") > 0);
        // Every sample line is "name[{labels}] value".
        for (String line : (Iterable<String>) body.lines()::iterator) {
            assertTrue(line.startsWith("# ") || line.matches("[a-z0-9_]+(\\{.*\\})? -?[0-9.E+-]+|.* NaN"), line);
        }
    }

    @Test
    void debugGcReportsHeapAndConnections() throws Exception {
        double collections = sum(TestSupport.metrics(server), "jvm_gc_collections_total{");
        try (LineClient c = new LineClient(server)) {
            c.send("x");
            c.readLine();
            HttpResponse<String> res = post(server, "/debug/gc");
            assertEquals(200, res.statusCode());
            assertTrue(res.body().matches("\\{\"heap_used_bytes\": [1-9][0-9]*, \"connections\": [1-9][0-9]*\\}\\s*"),
                    res.body());
        }
        assertEquals(405, get(server, "/debug/gc").statusCode());
        // The GC counters are the collectors' own totals, read at each scrape.
        assertTrue(sum(TestSupport.metrics(server), "jvm_gc_collections_total{") >= collections + 2);
    }

    private static double sum(Map<String, Double> samples, String prefix) {
        return samples.entrySet().stream().filter(e -> e.getKey().startsWith(prefix))
                .mapToDouble(Map.Entry::getValue).sum();
    }

    @Test
    void unknownPathIs404() throws Exception {
        assertEquals(404, get(server, "/nope").statusCode());
    }

    @ParameterizedTest
    @EnumSource(ServerConfig.Transport.class)
    void everyTransportEchoes(ServerConfig.Transport transport) throws Exception {
        if (transport == ServerConfig.Transport.EPOLL && !io.netty.channel.epoll.Epoll.isAvailable()) {
            return; // not Linux x86_64
        }
        try (DemoServer s = DemoServer.start(testConfig().transport(transport).metricsDisabled().build());
                LineClient c = new LineClient(s)) {
            assertEquals(-1, s.metricsPort());
            c.send("over " + s.transport());
            assertEquals("over " + s.transport(), c.readLine());
            ByteArrayOutputStream big = new ByteArrayOutputStream();
            for (int i = 0; i < 2000; i++) {
                big.writeBytes(("line " + i + "\n").getBytes(StandardCharsets.US_ASCII));
            }
            c.sendBytes(big.toByteArray());
            for (int i = 0; i < 2000; i++) {
                assertEquals("line " + i, c.readLine());
            }
        }
    }
}
