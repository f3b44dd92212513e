/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.heartbeat.demo.PingRtt;
import dev.heartbeat.netty.CloseReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportTest {

    private static final String[] REQUIRED = {"connections", "premature_closes", "expected_closes",
        "observed_closes", "lateness_ms", "echo_latency_us", "heap_bytes_per_connection", "server_cpu_seconds",
        "worker_cpu_seconds", "connect_seconds", "wrong_reason_closes", "close_reasons", "ping_rtt_ms"};

    static RunResult result(String impl, long premature, long leftOpen, double latenessMs, double echoUs,
            double heapPerConnection, double cpu) {
        RunResult r = new RunResult(impl, RunPlan.TCP, 1000);
        ClientResult c = r.client;
        c.assigned = 1000;
        c.connected = 1000;
        c.expectedCloses = 300;
        c.observedCloses = 300 - leftOpen;
        c.onTime = c.observedCloses - premature;
        c.premature = premature;
        c.earliestPrematureNanos = premature > 0 ? 2_500_000 : 0;
        c.leftOpen = leftOpen;
        c.connectStartNanos = 1_000_000_000L;
        c.connectEndNanos = 3_000_000_000L;
        for (int i = 0; i < 300; i++) {
            Histograms.recordNanos(c.lateness, (long) (latenessMs * 1e6 * (i + 1) / 300));
        }
        for (int i = 0; i < 10_000; i++) {
            Histograms.recordNanos(c.echoLatency, (long) (echoUs * 1e3 * (i + 1) / 10_000));
        }
        r.heapBeforeBytes = 10_000_000;
        r.heapAfterBytes = 10_000_000 + (long) (heapPerConnection * 1000);
        r.connectionsAtHeap = 1000;
        r.serverCpuSeconds = cpu;
        r.connectServerCpuSeconds = cpu / 2;
        if (impl.equals(Scenario.HEARTBEAT)) {
            r.workerCpuSeconds = cpu / 10;
        }
        r.serverProcesses = 1;
        r.clientProcesses = 1;
        c.goodbyesByRole[Role.SILENT.ordinal()][CloseReason.PING_TIMEOUT.ordinal()] = c.observedCloses;
        PingRtt rtt = new PingRtt();
        for (int i = 1; i <= 100; i++) {
            rtt.record(i * 10_000L); // 10 us .. 1 ms
        }
        r.serverMetrics.add(ServerProbe.parseMetrics(rtt.exposition()
                + "demo_connections_closed_total{reason=\"ping_timeout\"} " + c.observedCloses + "\n"));
        return r;
    }

    static Report report(List<RunResult> results) {
        return report(Scenario.builder().connections(1000).build(), results);
    }

    static Report report(Scenario s, List<RunResult> results) {
        RunPlan plan = new RunPlan(s, RunPlan.TCP, List.of(Scenario.HEARTBEAT, Scenario.NETTY), Path.of("out"), "512m",
                "512m", List.of(), 2, 1, 5000, 18000, 20000, List.of(), List.of(), null, null);
        return new Report(s, plan, results, "java -jar load-test.jar --connections 1000", "2026-01-01T00:00:00Z", 60,
                List.of());
    }

    @Test
    void reportJsonHoldsEveryRequiredFieldPerImplementationAndTransport() throws Exception {
        Report report = report(List.of(result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10),
                result(Scenario.NETTY, 0, 0, 8, 1000, 2000, 12)));
        JsonNode json = new ObjectMapper().readTree(JsonCodec.writePretty(report.toJson()));
        JsonNode results = json.get("results");
        for (String impl : new String[] {Scenario.HEARTBEAT, Scenario.NETTY}) {
            JsonNode r = results.get(impl).get("tcp");
            for (String key : REQUIRED) {
                assertTrue(r.has(key), impl + " lacks " + key);
            }
            assertEquals(1000L, r.get("connections").asLong());
            assertEquals(0L, r.get("premature_closes").asLong());
            JsonNode lateness = r.get("lateness_ms");
            assertTrue(lateness.has("p50") && lateness.has("p99") && lateness.has("max"));
            JsonNode echo = r.get("echo_latency_us");
            assertTrue(echo.has("p50") && echo.has("p99") && echo.has("p999"));
            // the encoded histograms give the same percentiles back
            JsonNode hist = r.get("histograms");
            assertEquals(lateness.get("p99").asDouble(),
                    Histograms.percentileMillis(Histograms.decode(hist.get("lateness_us").asText()), 99), 1e-3);
        }
        JsonNode hb = results.get(Scenario.HEARTBEAT).get("tcp");
        assertEquals(1500.0, hb.get("heap_bytes_per_connection").asDouble(), 1e-9);
        assertEquals(1.0, hb.get("worker_cpu_seconds").asDouble(), 1e-9);
        assertEquals(2.0, hb.get("connect_seconds").asDouble(), 1e-9);
        assertTrue(results.get(Scenario.NETTY).get("tcp").get("worker_cpu_seconds").isNull(), "no worker: null, not 0");
        assertEquals(300, hb.get("close_reasons").get("told_clients").get("PING_TIMEOUT").asLong());
        assertEquals(300, hb.get("close_reasons").get("counted_by_servers").get("PING_TIMEOUT").asLong());
        assertEquals(300, hb.get("by_role").get("silent").get("close_reasons").get("PING_TIMEOUT").asLong());
        JsonNode rtt = hb.get("ping_rtt_ms");
        assertEquals(100, rtt.get("count").asLong());
        assertEquals(1.0, rtt.get("max").asDouble(), 1e-9);
        assertTrue(rtt.get("p50").asDouble() > 0.5 / 1.19 && rtt.get("p50").asDouble() < 0.5 * 1.19, rtt.toString());
        assertTrue(json.get("check").get("passed").asBoolean());
    }

    @Test
    void goalsAreJudgedFromTheMeasuredRatios() {
        Report report = report(List.of(result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10),
                result(Scenario.NETTY, 0, 0, 30, 1000, 2000, 8)));
        java.util.Map<String, Report.Goal> goals = new java.util.HashMap<>();
        for (Report.Goal g : report.goals("tcp")) {
            goals.put(g.goal(), g);
        }
        assertFalse(goals.containsKey("heartbeat: 0 premature closes"), "correctness is the check's, not a goal");
        assertEquals(Boolean.TRUE, goals.get("heartbeat: p99 lateness <= one tick + 20 ms").met());
        assertEquals(Boolean.FALSE, goals.get("netty: p99 lateness <= one tick + 20 ms").met());
        Report.Goal heap = goals.get("heap per connection, heartbeat / netty");
        assertEquals(Boolean.TRUE, heap.met());
        assertTrue(heap.measured().startsWith("0.75"), heap.measured());
        Report.Goal cpu = goals.get("server CPU in the run, heartbeat / netty");
        assertEquals(Boolean.FALSE, cpu.met(), "10 s vs 8 s: missed, and reported so");
        assertTrue(cpu.measured().startsWith("1.25"), cpu.measured());
        assertTrue(goals.containsKey("heartbeat worker CPU reported"));
    }

    /** A CPU split of a 14 s window on 2 cores in which other processes took {@code other} CPU seconds. */
    private static void disturb(RunResult r, double other) {
        r.windowSeconds = 14;
        r.otherCpuSeconds = other;
    }

    /** The top of a report: correctness (the check) and performance (the goals), apart and in that order. */
    @Test
    void theReportOpensWithTwoSeparateVerdictsCorrectnessThenPerformance(@TempDir Path dir) throws Exception {
        Report report = report(List.of(result(Scenario.HEARTBEAT, 2, 0, 5, 800, 1500, 10),
                result(Scenario.NETTY, 0, 0, 8, 1000, 2000, 8)));
        report.write(dir);
        String html = Files.readString(dir.resolve("report.html"));
        int correctness = html.indexOf("<section class=\"verdict\" id=\"correctness\">");
        int performance = html.indexOf("<section class=\"verdict\" id=\"performance\">");
        assertTrue(correctness > 0 && performance > correctness, html);
        assertTrue(performance < html.indexOf("<table>"), "both verdicts before the first table");
        String top = html.substring(correctness, html.indexOf("<table>"));
        assertTrue(top.contains("Correctness <small>what --check judges</small>: <span class=\"missed\">FAILED (1 "
                + "failure)</span>"), top);
        assertTrue(top.contains("<li>no premature close</li>"), "what was checked: " + top);
        assertTrue(top.contains("<li class=\"missed\">heartbeat/tcp: 2 premature closes"), "what failed: " + top);
        assertTrue(top.contains("Performance <small>goals, from this run's measurements</small>: 5 met, 1 MISSED"),
                top);
        assertTrue(top.contains("<span class=\"missed\">MISSED</span>: server CPU in the run, heartbeat / netty: "
                + "1.25 (10.0 s vs 8.00 s) (target &lt;= 1)"), "each goal with its ratio: " + top);
        assertFalse(html.contains("<h2>Check</h2>"), "no check at the bottom any more");
        String md = Files.readString(dir.resolve("report.md"));
        int mdCorrectness = md.indexOf("## Correctness (what --check judges): FAILED (1 failure)");
        assertTrue(mdCorrectness > 0 && mdCorrectness < md.indexOf("## Performance"), md);
        assertTrue(md.indexOf("## Performance") < md.indexOf("| tcp |"), md);
        String console = new ReportVerdicts(report).text();
        assertTrue(console.startsWith("CORRECTNESS (what --check judges): FAILED (1 failure)\n  checked: no premature "
                + "close; "), console);
        assertTrue(console.contains("\nPERFORMANCE (goals, from this run's measurements): 5 met, 1 MISSED\n"), console);
        assertTrue(console.contains("  tcp  MISSED  server CPU in the run, heartbeat / netty: 1.25 (10.0 s vs 8.00 s)"),
                console);
        assertTrue(console.lines().allMatch(l -> l.length() <= 120), console);
        Report passed = report(List.of(result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10)));
        assertTrue(new ReportVerdicts(passed).text().startsWith("CORRECTNESS (what --check judges): PASSED\n"));
    }

    /** A run that other processes disturbed has its missed goals "not judged", not MISSED; met goals stay met. */
    @Test
    void aDisturbedRunsMissedGoalsAreNotJudged(@TempDir Path dir) throws Exception {
        RunResult hb = result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10);
        RunResult netty = result(Scenario.NETTY, 0, 0, 30, 1000, 2000, 8);
        disturb(hb, 6.5);
        disturb(netty, 0.5); // 0.5 of 14 s: under a tenth of a core, not disturbed
        Report report = report(List.of(hb, netty));
        java.util.Map<String, Report.Goal> goals = new java.util.HashMap<>();
        for (Report.Goal g : report.goals("tcp")) {
            goals.put(g.goal(), g);
        }
        assertEquals("not judged: disturbed by 6.50 CPU-s of other processes",
                goals.get("server CPU in the run, heartbeat / netty").verdict());
        assertEquals("MISSED", goals.get("netty: p99 lateness <= one tick + 20 ms").verdict(),
                "netty's own run was quiet: its goal is judged");
        assertEquals("met", goals.get("heap per connection, heartbeat / netty").verdict());
        report.write(dir);
        String html = Files.readString(dir.resolve("report.html"));
        assertTrue(html.contains("not judged: disturbed by 6.50 CPU-s of other processes</span>: server CPU in the "
                + "run, heartbeat / netty: 1.25"), html);
        assertTrue(html.contains("4 met, 1 MISSED, 1 not judged (the run was disturbed by other processes)"), html);
        assertTrue(new ReportVerdicts(report).text().contains("tcp  not judged: disturbed by 6.50 CPU-s of other "
                + "processes  server CPU in the run"), new ReportVerdicts(report).text());
    }

    /** How to read the table is beside it, in the same block, not at the end of the page. */
    @Test
    void howToReadItIsBesideTheTableItExplains(@TempDir Path dir) throws Exception {
        Report report = report(List.of(result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10),
                result(Scenario.NETTY, 0, 0, 8, 1000, 2000, 12)));
        report.write(dir);
        String html = Files.readString(dir.resolve("report.html"));
        int block = html.indexOf("<div class=\"explained\">");
        int tableEnd = html.indexOf("</table>", block);
        assertTrue(block > 0 && html.indexOf("<table>", block) == block + "<div class=\"explained\">\n".length(), html);
        assertEquals(tableEnd + "</table>\n".length(), html.indexOf("<aside>\n<h3>How to read it</h3>", block), html);
        assertTrue(html.indexOf("Premature close", tableEnd) < html.indexOf("</div>", tableEnd), html);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.indexOf("How to read it:") > md.indexOf("| processes (servers + clients) |"), md);
    }

    /** The console table keeps within 120 columns, its long cells wrapped, every row still there. */
    @Test
    void theConsoleTableIsWithin120Columns() {
        RunResult hb = result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10);
        RunResult netty = result(Scenario.NETTY, 0, 0, 8, 1000, 2000, 12);
        RunResult none = result(Scenario.NONE, 0, 0, 8, 1000, 1000, 12);
        Report report = report(List.of(hb, netty, none));
        String table = report.textTable("tcp");
        int widest = table.lines().mapToInt(String::length).max().orElse(0);
        assertTrue(widest <= 120, "widest line " + widest + ":\n" + table);
        assertTrue(table.lines().anyMatch(l -> l.startsWith("premature closes")), table);
        for (Report.Row row : report.table("tcp")) {
            assertTrue(table.lines().anyMatch(l -> l.startsWith(TextTable.wrap(row.label, 8).get(0))), row.label);
        }
        assertTrue(table.lines().count() > report.table("tcp").size(), "long cells wrapped onto more lines");
        assertEquals(List.of("a b c", "defghijklm", "no"), TextTable.wrap("a b c defghijklmno", 10));
    }

    @Test
    void checkFailsOnPrematureOrLeftOpenConnections() {
        Report report = report(List.of(result(Scenario.HEARTBEAT, 2, 0, 5, 800, 1500, 10),
                result(Scenario.NETTY, 0, 3, 8, 1000, 2000, 12)));
        List<String> failures = report.checkFailures();
        assertEquals(2, failures.size(), failures.toString());
        assertTrue(failures.get(0).contains("heartbeat/tcp: 2 premature closes (the earliest 2.5 ms before"),
                failures.get(0));
        assertTrue(failures.get(1).contains("netty/tcp: 3 connections due to be closed (silent, dying, half-open, "
                + "flooders, stalled, over-long lines, every one with --drain) left open"), failures.get(1));
        assertFalse(report(List.of(result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10))).checkFailures().iterator()
                .hasNext());
    }

    @Test
    void writesMarkdownAndASelfContainedHtmlPage(@TempDir Path dir) throws Exception {
        Report report = report(List.of(result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10),
                result(Scenario.NETTY, 0, 0, 8, 1000, 2000, 12)));
        report.write(dir);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| tcp | heartbeat | netty (IdleStateHandler) | heartbeat / netty |"), md);
        assertTrue(md.contains("| heap per connection (bytes) | 1,500 | 2,000 | 0.75 |"), md);
        assertTrue(md.contains("| closes by reason: as told to the clients; as the servers counted them | "
                + "PING_TIMEOUT 300; servers: PING_TIMEOUT 300 | PING_TIMEOUT 300; servers: PING_TIMEOUT 300 |"), md);
        assertTrue(md.contains("| servers' ping RTT p50 / p99 / max (ms; samples) |"), md);
        String html = Files.readString(dir.resolve("report.html"));
        assertTrue(html.contains("<svg"), "charts are inline SVG");
        assertEquals(4, html.split("<svg", -1).length - 1, "lateness, echo latency, heap, CPU");
        assertFalse(html.contains("<script"), "no script");
        assertFalse(html.replace("http://www.w3.org/2000/svg", "").contains("http"), "nothing fetched");
        assertTrue(Files.size(dir.resolve("report.json")) > 1000);
        String table = report.textTable("tcp");
        assertTrue(table.lines().anyMatch(l -> l.startsWith("premature closes")), table);
    }

    @Test
    void thePingsTheServersSentAreShownSinceTheyStartedAndInTheWindow(@TempDir Path dir) throws Exception {
        RunResult hb = result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10);
        hb.pingsSent = 186_664;
        hb.pingsSentInWindow = 170_000;
        Report report = report(List.of(hb));
        report.write(dir);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| pings sent by the servers, since they started | 186,664 |"), md);
        assertTrue(md.contains("| pings sent by the servers in the window | 170,000 |"), md);
        JsonNode server = new ObjectMapper().readTree(JsonCodec.writePretty(report.toJson())).get("results")
                .get(Scenario.HEARTBEAT).get("tcp").get("server");
        assertEquals(186_664, server.get("pings_sent").asLong());
        assertEquals(170_000, server.get("pings_sent_in_window").asLong());
    }

    @Test
    void chartHelpers() {
        assertEquals(1, SvgChart.niceCeiling(0));
        assertEquals(2.5, SvgChart.niceCeiling(2.1), 1e-12);
        assertEquals(500, SvgChart.niceCeiling(420), 1e-9);
        assertEquals(1000, SvgChart.niceCeiling(1000), 1e-9);
        assertEquals("90%", SvgChart.percentLabel(1));
        assertEquals("99%", SvgChart.percentLabel(2));
        assertEquals("99.99%", SvgChart.percentLabel(4));
        assertEquals(2, SvgChart.nines(99), 1e-9);
        assertEquals(0, SvgChart.nines(0), 1e-9);
    }

    /** 100 flooders, each closed after 3 pings with PING_ABUSE named, 1 to 100 ms after its latest ping. */
    private static RunResult withFlooders(RunResult r) {
        ClientResult c = r.client;
        int f = Role.FLOODER.ordinal();
        c.connectedByRole[f] = 100;
        c.closedByRole[f] = 100;
        c.expectedCloses += 100;
        c.observedCloses += 100;
        c.onTime += 100;
        c.abuseCloses = 100;
        c.flooderPings = 300;
        c.goodbyesByRole[f][CloseReason.PING_ABUSE.ordinal()] = 100;
        for (int i = 1; i <= 100; i++) {
            Histograms.recordNanos(c.abuseCloseTime, i * 1_000_000L);
        }
        r.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"ping_abuse\"} 100\n"));
        return r;
    }

    @Test
    void theFloodersCloseReasonsAndTimesAreInTheJsonAndTheTable(@TempDir Path dir) throws Exception {
        Report report = report(List.of(withFlooders(result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10))));
        JsonNode hb = new ObjectMapper().readTree(JsonCodec.writePretty(report.toJson())).get("results")
                .get(Scenario.HEARTBEAT).get("tcp");
        assertEquals(100, hb.get("by_role").get("flooder").get("close_reasons").get("PING_ABUSE").asLong());
        assertEquals(100, hb.get("close_reasons").get("counted_by_servers").get("PING_ABUSE").asLong());
        JsonNode flooders = hb.get("flooders");
        assertEquals(100, flooders.get("connected").asLong());
        assertEquals(300, flooders.get("pings_sent").asLong());
        assertEquals(100, flooders.get("closed_for_ping_abuse").asLong());
        JsonNode after = flooders.get("close_after_last_ping_ms");
        assertEquals(100, after.get("count").asLong());
        assertEquals(100.0, after.get("max").asDouble(), 0.1);
        assertEquals(List.of(), report.checkFailures());
        report.write(dir);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| closes by role: reasons told | silent: PING_TIMEOUT 300; flooder: PING_ABUSE 100 |"),
                md);
        assertTrue(md.contains("| flooders: closed for PING_ABUSE / connected (pings sent) | 100 / 100 (300) |"), md);
        assertTrue(md.contains("| flooders: close after their latest ping p50 / p99 / max (ms) | 50.0 / 99.0 / 100 |"),
                md);
    }

    @Test
    void theDrainsCloseRateAndTheStalledClosesAreInTheJsonAndTheTableAndABurstFailsTheCheck(@TempDir Path dir)
            throws Exception {
        long sec = 1_000_000_000L;
        Scenario s = Scenario.builder().connections(1000).mix(Mix.parse("silent=30,active=60,stalled=10"))
                .drainNanos(4 * sec).build();
        RunResult r = result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10);
        ClientResult c = r.client;
        int st = Role.STALLED.ordinal();
        c.connectedByRole[st] = 100;
        c.closedByRole[st] = 100;
        c.stallCloses = 100;
        c.stalledBytes = 100 * 160 * 1024;
        c.goodbyesByRole[st][ClientResult.goodbyeIndex(null)] = 100;
        for (int i = 1; i <= 100; i++) {
            Histograms.recordNanos(c.stallCloseTime, (long) (s.writeStallNanos() * (1 + i / 400.0)));
        }
        r.drainRequested = 600L;
        c.drained = 600;
        c.goodbyesByRole[Role.ACTIVE.ordinal()][CloseReason.DRAIN.ordinal()] = 600;
        long[] perSecond = {60, 150, 150, 150, 90};
        for (int i = 0; i < perSecond.length; i++) {
            for (long n = 0; n < perSecond[i]; n++) {
                c.drainCloses.record(100 * sec + i * sec + n);
            }
        }
        r.serverMetrics.add(ServerProbe.parseMetrics("demo_connections_closed_total{reason=\"write_stall\"} 100\n"
                + "demo_connections_closed_total{reason=\"drain\"} 600\n"));
        Report report = report(s, List.of(r));
        assertEquals(List.of(), report.checkFailures());
        JsonNode hb = new ObjectMapper().readTree(JsonCodec.writePretty(report.toJson())).get("results")
                .get(Scenario.HEARTBEAT).get("tcp");
        JsonNode drain = hb.get("drain");
        assertEquals(4000.0, drain.get("window_ms").asDouble(), 1e-9);
        assertEquals(600, drain.get("drained").asLong());
        assertEquals(600, drain.get("draining").asLong());
        assertEquals("[60,150,150,150,90]", drain.get("per_second").toString());
        assertEquals(150, drain.get("peak").asLong());
        assertEquals(120.0, drain.get("mean").asDouble(), 1e-9, "over the 5 seconds it touched");
        assertEquals(226, drain.get("check_peak_limit").asLong(), "1.5 x 600 / 4 s, plus one");
        JsonNode stalled = hb.get("stalled");
        assertEquals(100, stalled.get("closed_on_time").asLong());
        assertEquals(100, stalled.get("close_after_last_write_ms").get("count").asLong());
        assertEquals(100, hb.get("close_reasons").get("counted_by_servers").get("WRITE_STALL").asLong());
        report.write(dir);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| drain over 4s: drained / servers draining | 600 / 600 |"), md);
        assertTrue(md.contains("| drain closes a second: peak / mean (peak/mean; limit) | 150 / 120 (1.25; 226) |"),
                md);
        assertTrue(md.contains("| stalled: closed on time / connected (KiB written before stalling; read again) "
                + "| 100 / 100 (16,000; 0) |"), md);

        for (long n = 0; n < 400; n++) {
            c.drainCloses.record(100 * sec + 2 * sec + n); // a herd: 550 in one second
        }
        assertTrue(report.checkFailures().contains("heartbeat/tcp: the drain closed 550 connections in one second, "
                + "more than 226 (1.5 x its mean over the 4s window, plus one): [60, 150, 550, 150, 90] a second"),
                report.checkFailures().toString());
        c.goodbyesByRole[Role.SLOWREADER.ordinal()][CloseReason.WRITE_STALL.ordinal()] = 1; // judged by its reads
        assertTrue(report.checkFailures().stream().noneMatch(f -> f.contains("other roles")),
                report.checkFailures().toString());
        c.goodbyesByRole[Role.ACTIVE.ordinal()][CloseReason.WRITE_STALL.ordinal()] = 1;
        assertTrue(report.checkFailures().contains("heartbeat/tcp: 1 connections of other roles than stalled and "
                + "slowreader were told WRITE_STALL"), report.checkFailures().toString());
    }

    @Test
    void theSlowReadersBytesAndRateAreReportedAndTheCheckFailsUnlessOneBackedUp(@TempDir Path dir) throws Exception {
        Scenario s = Scenario.builder().connections(1000).mix(Mix.parse("silent=30,active=60,slowreader=10"))
                .build();
        RunResult r = result(Scenario.HEARTBEAT, 0, 0, 5, 800, 1500, 10);
        ClientResult c = r.client;
        c.connectedByRole[Role.SLOWREADER.ordinal()] = 100;
        c.slowBytesWritten = 100 * 4096 * 1024L;
        c.slowBytesRead = 100 * 1024 * 1024L;
        c.slowReadNanos = 100 * 4_000_000_000L; // 4 s each: 256 KiB/s
        c.slowBackedUp = 90;
        c.slowMaxBacklog = 600 * 1024;
        c.slowLongestUnwritableNanos = 2_500_000_000L;
        c.closedByRole[Role.SLOWREADER.ordinal()] = 3;
        c.slowStallCloses = 3; // closed after reading too little in a write stall: not failures
        c.slowStallNotes.add("connection 7 (slowreader): closed 1200.000 ms after its connect; in the last ...");
        Report report = report(s, List.of(r));
        assertEquals(List.of(), report.checkFailures());
        JsonNode slow = new ObjectMapper().readTree(JsonCodec.writePretty(report.toJson())).get("results")
                .get(Scenario.HEARTBEAT).get("tcp").get("slow_readers");
        assertEquals(100, slow.get("connected").asLong());
        assertEquals(3, slow.get("closed").asLong());
        assertEquals(3, slow.get("closed_reads_stalled").asLong());
        assertEquals(c.slowBytesRead, slow.get("bytes_read").asLong());
        assertEquals(256 * 1024.0, slow.get("read_bytes_per_second").asDouble(), 1e-9);
        assertEquals(90, slow.get("backed_up").asLong());
        assertEquals(2_500.0, slow.get("longest_unwritable_ms").asDouble(), 1e-9);
        report.write(dir);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| slowreader: closed / connected (unwritable longer than the write stall; most KiB "
                + "not read back) | 3 / 100 (90; 600) |"), md);
        assertTrue(md.contains("| slowreader: closed after reading under 16 KiB in a write stall (a write stall the "
                + "reader's reads show; not a failure) | 3 |"), md);
        assertTrue(md.contains("- Write stall its reads show (heartbeat): connection 7 (slowreader): closed "
                + "1200.000 ms"), md);
        assertTrue(md.contains("| 409,600 / 102,400; 256 |"), md);

        c.slowBackedUp = 0;
        c.slowLongestUnwritableNanos = 600_000_000L;
        assertTrue(report.checkFailures().contains("heartbeat/tcp: none of the 100 slowreaders stayed unwritable for "
                + "longer than the write stall (the longest: 600 ms): the servers' echoes never backed up behind one "
                + "for that long"),
                report.checkFailures().toString());
    }
}
