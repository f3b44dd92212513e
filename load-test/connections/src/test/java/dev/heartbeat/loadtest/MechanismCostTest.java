/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.heartbeat.loadtest.MachineCpu.ThreadKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The idle handling's own CPU over none ({@link MechanismCost}): its arithmetic, its rows, its JSON. */
class MechanismCostTest {

    /**
     * A CPU split of a 10 s window whose one server used these ticks (1/100 s) on its event loops, worker, GC
     * and JIT threads, from two canned /proc snapshots.
     */
    static CpuSplit split(long loops, long worker, long gc, long jit) {
        long pid = 100;
        Map<Long, MachineCpu.ThreadSample> zero = Map.of(1L, new MachineCpu.ThreadSample(ThreadKind.EVENT_LOOP, 0, 0),
                2L, new MachineCpu.ThreadSample(ThreadKind.HEARTBEAT_WORKER, 0, 0),
                3L, new MachineCpu.ThreadSample(ThreadKind.GC, 0, 0),
                4L, new MachineCpu.ThreadSample(ThreadKind.JIT, 0, 0));
        Map<Long, MachineCpu.ThreadSample> end = Map.of(1L,
                new MachineCpu.ThreadSample(ThreadKind.EVENT_LOOP, loops, 0),
                2L, new MachineCpu.ThreadSample(ThreadKind.HEARTBEAT_WORKER, worker, 0),
                3L, new MachineCpu.ThreadSample(ThreadKind.GC, gc, 0),
                4L, new MachineCpu.ThreadSample(ThreadKind.JIT, jit, 0));
        long total = loops + worker + gc + jit;
        CpuSplit.Pids pids = new CpuSplit.Pids(List.of(pid), List.of(), 300, List.of(pid));
        return CpuSplit.between(new CpuSplit.Snapshot(0, MachineCpu.parseMachine("cpu 0 0 0 0\n"),
                        Map.of(pid, new MachineCpu.Task("java", 0, 0, 0)), Map.of(pid, zero)),
                new CpuSplit.Snapshot(10_000_000_000L, MachineCpu.parseMachine("cpu " + total + " 0 0 0\n"),
                        Map.of(pid, new MachineCpu.Task("java", total, 0, 0)), Map.of(pid, end)), pids);
    }

    private static RunResult run(String impl, CpuSplit cpu) {
        RunResult r = ReportTest.result(impl, 0, 0, 5, 800, 1500, 10);
        r.cpu = cpu;
        return r;
    }

    // none: loops 4.0 + GC 0.5 = 4.5 s, JIT 0.8 s
    // heartbeat: loops 5.0 + worker 0.4 + GC 0.6 = 6.0 s (1.5 over none), JIT 1.5 s (0.7 over none)
    // netty: loops 5.6 + GC 0.9 = 6.5 s (2.0 over none), JIT 1.0 s (0.2 over none)
    private static final CpuSplit HEARTBEAT = split(500, 40, 60, 150);
    private static final CpuSplit NETTY = split(560, 0, 90, 100);
    private static final CpuSplit NONE = split(400, 0, 50, 80);

    @Test
    void eachImplementationsCostIsItsLoopsWorkerAndGcOverNonesAndTheJitApart() {
        MechanismCost c = MechanismCost.of(HEARTBEAT.serverThreads, NETTY.serverThreads, NONE.serverThreads);
        assertEquals(6.0, c.heartbeatSeconds(), 1e-9);
        assertEquals(6.5, c.nettySeconds(), 1e-9);
        assertEquals(4.5, c.noneSeconds(), 1e-9);
        assertEquals(1.5, c.heartbeatOverNone(), 1e-9);
        assertEquals(2.0, c.nettyOverNone(), 1e-9);
        assertEquals(0.75, c.ratio(), 1e-9);
        assertEquals(0.7, c.heartbeatJitOverNone(), 1e-9);
        assertEquals(0.2, c.nettyJitOverNone(), 1e-9);
        assertEquals(1.5, c.overNone(Scenario.HEARTBEAT), 1e-9);
        assertEquals(Double.NaN, c.overNone(Scenario.NONE));
    }

    @Test
    void noRatioWhenIdleStateHandlerCostsNothingOverNone() {
        MechanismCost c = MechanismCost.of(HEARTBEAT.serverThreads, NONE.serverThreads, NONE.serverThreads);
        assertEquals(0.0, c.nettyOverNone(), 1e-9);
        assertEquals(Double.NaN, c.ratio(), "a ratio over 0 (or a negative cost, noise) means nothing");
        assertNull(c.toJson().heartbeatOverNettyRatio());
    }

    @Test
    void theReportShowsTheRowsTheGoalAndTheJsonOnlyWithNoneInTheRun(@TempDir Path dir) throws Exception {
        Report report = ReportTest.report(List.of(run(Scenario.HEARTBEAT, HEARTBEAT), run(Scenario.NETTY, NETTY),
                run(Scenario.NONE, NONE)));
        report.write(dir);
        String md = Files.readString(dir.resolve("report.md"));
        assertTrue(md.contains("| own CPU over none: event loops + workers + GC, minus none's (s) | 1.50 (6.00 - 4.50) "
                + "| 2.00 (6.50 - 4.50) | (4.50) | 0.75 |"), md);
        assertTrue(md.contains("| JIT compiler threads over none (s; apart from the above) | 0.70 | 0.20 | - |"), md);
        String text = report.textTable(RunPlan.TCP);
        assertTrue(text.contains("own CPU over none:            1.50 (6.00 - 4.50)"), text);
        Report.Goal goal = report.goals(RunPlan.TCP).stream().filter(g -> g.goal().startsWith("idle handling's own "
                + "CPU over none")).findFirst().orElseThrow();
        assertEquals("0.75 (1.50 s vs 2.00 s; JIT over none apart: 0.70 s vs 0.20 s)", goal.measured());
        assertEquals("met", goal.verdict());
        assertTrue(new ReportVerdicts(report).text().contains("idle handling's own CPU over none"));
        JsonNode cost = new ObjectMapper().readTree(Files.readString(dir.resolve("report.json")))
                .get("mechanism_cost").get("tcp");
        assertEquals(1.5, cost.get("heartbeat_over_none").asDouble(), 1e-9);
        assertEquals(2.0, cost.get("netty_over_none").asDouble(), 1e-9);
        assertEquals(0.75, cost.get("heartbeat_over_netty_ratio").asDouble(), 1e-9);
        assertEquals(0.7, cost.get("heartbeat_jit_over_none").asDouble(), 1e-9);

        Report without = ReportTest.report(List.of(run(Scenario.HEARTBEAT, HEARTBEAT), run(Scenario.NETTY, NETTY)));
        assertTrue(!without.markdownTable(RunPlan.TCP).contains("own CPU over none"), "no none, no rows");
        assertTrue(new ObjectMapper().readTree(JsonCodec.writePretty(without.toJson())).get("mechanism_cost")
                .isEmpty());
    }
}
