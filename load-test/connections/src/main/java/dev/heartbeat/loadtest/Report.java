/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

import io.netty.util.Version;
import org.HdrHistogram.Histogram;

// Over 500 lines (listed in checkstyle.xml): the report's table, goals and their texts in three formats; a split by
// format is planned with the report rework of issue 28.
/**
 * The results of a load test, side by side: {@code report.json} (every number, the encoded
 * histograms, the goals as measured ratios), {@code report.md} (the table and the goals) and
 * {@code report.html} ({@link HtmlReport}: the same with charts). The same table is what the
 * terminal shows at the end. Built once the runs are done; one thread.
 *
 * <p>Goals are judged from the measurements of this one run, never from constants: 0 premature
 * closes; every silent and dying connection closed; p99 lateness within one wheel tick + 20 ms;
 * Heartbeat's heap per connection, echo p99 and server CPU against {@code IdleStateHandler}'s (as
 * ratios); the worker's CPU reported.
 */
final class Report {

    /** What each measurement means: the one text of report.md and report.html. */
    static final String[][] HOW_TO_READ = {
        {"Premature close", "the client saw the close before the earliest moment a correct server may close (the "
                + "client's clock read just before its last line, or before it started connecting, plus the close "
                + "window)."},
        {"Lateness", "when the client saw the server close a silent or dying connection, minus the moment it was "
                + "due, taken from the connect's completion rather than its start (a slow connect is not charged to "
                + "the idle handling; a close in between counts as 0). It includes the server's tick and dispatch, "
                + "and the client noticing the close."},
        {"Echo latency", "active connections send at a fixed rate; each line carries its intended send time, and "
                + "latency is measured from that, so a stall counts against every line it delayed (no coordinated "
                + "omission). In microseconds, in the table and the chart."},
        {"Heap per connection", "heap used after a full GC with every connection up, minus the same before "
                + "connecting, over the connections, summed over the server processes."},
        {"Server CPU", "CPU time of the server processes (tcp) or the server's threads and Heartbeat's worker "
                + "thread (local) over the run window. The cycles a server loop hosts for the worker are in that "
                + "loop's time; the Heartbeat worker CPU row counts them too, as the worker's own."},
        {"Machine split", "/proc/stat over the run window, summed over the cores (a 14 s window on 2 cores has 28 "
                + "CPU seconds): busy (user, nice, system, irq, softirq, steal) is the servers' processes, the "
                + "clients' processes (local: the client-loop threads of the one JVM), the harness (this "
                + "coordinator) and everything else: other processes, kernel threads (ksoftirqd/N shown apart: "
                + "softirq work deferred to them), processes of an earlier run still exiting, processes that "
                + "exited in the window (their whole lives' CPU, from their parents' cutime and cstime: an "
                + "estimate), and steal. The notes name the busiest other processes. \"Other processes' CPU\" is "
                + "the same everything else."},
        {"Server threads", "/proc/<pid>/task of each server process over the run window: event loops "
                + "(demo-worker-*, local: server-loop-*), Heartbeat's worker (heartbeat-monitor), GC and JIT "
                + "compiler threads, and the rest (threads that exited count as other). Wake-ups are voluntary "
                + "context switches (the thread blocked, then was woken), per second over the window; the "
                + "worker's are per server process, next to its own wake-up counter from /metrics."},
        {"Own CPU over none", "with --compare heartbeat,netty,none: each implementation's event loops + Heartbeat's "
                + "worker + GC threads (Server threads) minus none's, which carries the same connections and traffic "
                + "without idle handling: what the idle handling itself costs; the ratio is Heartbeat's over "
                + "IdleStateHandler's (\"-\" unless IdleStateHandler's is above 0). The JIT compiler threads' excess "
                + "over none is apart. Each figure is exact to about 0.01 s per thread, so a small difference is "
                + "noise."}};

    /** The lateness goal's slack above one tick. */
    static final double LATENESS_SLACK_MILLIS = 20;

    final Scenario scenario;
    final RunPlan plan;
    final List<RunResult> results;
    final String command;
    final String startedAt;
    final double wallSeconds;
    final List<String> errors;

    Report(Scenario scenario, RunPlan plan, List<RunResult> results, String command, String startedAt,
            double wallSeconds, List<String> errors) {
        this.scenario = scenario;
        this.plan = plan;
        this.results = List.copyOf(results);
        this.command = command;
        this.startedAt = startedAt;
        this.wallSeconds = wallSeconds;
        this.errors = List.copyOf(errors);
    }

    RunResult find(String impl, String transport) {
        for (RunResult r : results) {
            if (r.impl.equals(impl) && r.transport.equals(transport)) {
                return r;
            }
        }
        return null;
    }

    List<String> transports() {
        List<String> out = new ArrayList<>();
        for (RunResult r : results) {
            if (!out.contains(r.transport)) {
                out.add(r.transport);
            }
        }
        return out;
    }

    List<RunResult> of(String transport) {
        List<RunResult> out = new ArrayList<>();
        for (RunResult r : results) {
            if (r.transport.equals(transport)) {
                out.add(r);
            }
        }
        return out;
    }

    /** Every {@code --check} failure of every run, and the runs that did not complete. */
    List<String> checkFailures() {
        List<String> f = new ArrayList<>(errors);
        for (RunResult r : results) {
            f.addAll(r.checkFailures());
            f.addAll(r.closeReasonFailures(scenario));
            f.addAll(r.stormFailures(scenario));
            f.addAll(r.drainFailures(scenario));
        }
        return f;
    }

    // ------------------------------------------------------------------------------------ goals

    /**
     * One performance goal as measured: what, the value (with its ratio where it is one), the target, whether
     * it was met (null: not measurable), and the CPU seconds of other processes that disturbed the runs it
     * compares (0: none did), which make a missed goal "not judged" rather than missed.
     */
    record Goal(String goal, String measured, String target, Boolean met, double disturbedBySeconds) {

        Goal(String goal, String measured, String target, Boolean met) {
            this(goal, measured, target, met, 0);
        }

        String verdict() {
            if (met == null) {
                return "n/a";
            }
            if (met) {
                return "met";
            }
            return disturbedBySeconds > 0 ? String.format(Locale.ROOT, "not judged: disturbed by %s CPU-s of other "
                    + "processes", num(disturbedBySeconds)) : "MISSED";
        }

        /** Whether this goal was missed in an undisturbed run. */
        boolean missed() {
            return Boolean.FALSE.equals(met) && !(disturbedBySeconds > 0);
        }
    }

    /**
     * The performance goals of one transport, judged from this run's measurements: each implementation's
     * close lateness, and Heartbeat against {@code IdleStateHandler} as ratios. Correctness (premature
     * closes, closes left undone, wrong reasons) is {@link #checkFailures}, not a goal.
     */
    List<Goal> goals(String transport) {
        List<Goal> goals = new ArrayList<>();
        double tickMillis = scenario.effectiveTickNanos() / 1e6;
        for (RunResult r : of(transport)) {
            if (!r.handlesIdleness()) {
                continue;
            }
            double p99 = r.latenessMillis(99);
            goals.add(new Goal(r.impl + ": p99 lateness <= one tick + 20 ms", ms(p99),
                    "<= " + ms(tickMillis + LATENESS_SLACK_MILLIS), Double.isNaN(p99) ? null
                            : p99 <= tickMillis + LATENESS_SLACK_MILLIS, r.disturbingCpuSeconds()));
        }
        RunResult hb = find(Scenario.HEARTBEAT, transport);
        RunResult netty = find(Scenario.NETTY, transport);
        RunResult none = find(Scenario.NONE, transport);
        if (hb != null && netty != null) {
            double disturbed = hb.disturbingCpuSeconds() + netty.disturbingCpuSeconds();
            double heapRatio = hb.heapBytesPerConnection() / netty.heapBytesPerConnection();
            goals.add(new Goal("heap per connection, heartbeat / netty", ratio(heapRatio) + " ("
                    + bytes(hb.heapBytesPerConnection()) + " vs " + bytes(netty.heapBytesPerConnection()) + ")",
                    "< 1", Double.isNaN(heapRatio) ? null : heapRatio < 1, disturbed));
            if (none != null) {
                double hbOver = hb.heapBytesPerConnection() - none.heapBytesPerConnection();
                double nettyOver = netty.heapBytesPerConnection() - none.heapBytesPerConnection();
                goals.add(new Goal("idle handling's own heap per connection (minus none), heartbeat / netty",
                        ratio(hbOver / nettyOver) + " (" + bytes(hbOver) + " vs " + bytes(nettyOver) + ")", "< 1",
                        Double.isNaN(hbOver / nettyOver) ? null : hbOver < nettyOver,
                        disturbed + none.disturbingCpuSeconds()));
            }
            double echoRatio = hb.echoMicros(99) / netty.echoMicros(99);
            goals.add(new Goal("active echo p99, heartbeat / netty", ratio(echoRatio) + " (" + us(hb.echoMicros(99))
                    + " vs " + us(netty.echoMicros(99)) + ")", "<= 1",
                    Double.isNaN(echoRatio) ? null : echoRatio <= 1, disturbed));
            double cpuRatio = hb.serverCpuSeconds / netty.serverCpuSeconds;
            goals.add(new Goal("server CPU in the run, heartbeat / netty", ratio(cpuRatio) + " ("
                    + secs(hb.serverCpuSeconds) + " vs " + secs(netty.serverCpuSeconds) + ")", "<= 1",
                    Double.isNaN(cpuRatio) ? null : cpuRatio <= 1, disturbed));
        }
        MechanismCost cost = MechanismCost.of(this, transport);
        if (cost != null) {
            goals.add(new Goal("idle handling's own CPU over none (event loops + workers + GC), heartbeat / netty",
                    ratio(cost.ratio()) + " (" + secs(cost.heartbeatOverNone()) + " vs " + secs(cost.nettyOverNone())
                            + "; JIT over none apart: " + secs(cost.heartbeatJitOverNone()) + " vs "
                            + secs(cost.nettyJitOverNone()) + ")", "reported", !Double.isNaN(cost.ratio()),
                    hb.disturbingCpuSeconds() + netty.disturbingCpuSeconds() + none.disturbingCpuSeconds()));
        }
        if (hb != null) {
            goals.add(new Goal("heartbeat worker CPU reported", secs(hb.workerCpuSeconds) + " ("
                    + pct(hb.workerCpuSeconds / hb.serverCpuSeconds) + " of the server CPU)", "reported",
                    !Double.isNaN(hb.workerCpuSeconds)));
        }
        return goals;
    }

    // ------------------------------------------------------------------------------------ json

    ReportJson toJson() {
        ReportJson.ScenarioPart sc = new ReportJson.ScenarioPart(scenario.settings(),
                scenario.closeWindowNanos() / 1e6, scenario.graceNanos() / 1e6, scenario.effectiveTickNanos() / 1e6,
                1e9 / scenario.activePeriodNanos, scenario.describePolicy());
        ReportJson.SettingsPart settings = new ReportJson.SettingsPart(plan.transport, plan.impls, plan.serverHeap,
                plan.clientHeap, plan.jvmArgs, plan.serverThreads, plan.clientThreads, plan.connectRate,
                plan.maxPerProcess, plan.targets);
        Map<String, Map<String, ReportJson.Run>> byImpl = new LinkedHashMap<>();
        for (RunResult r : results) {
            byImpl.computeIfAbsent(r.impl, k -> new LinkedHashMap<>()).put(r.transport, r.toJson(scenario));
        }
        Map<String, List<Goal>> goals = new LinkedHashMap<>();
        for (String t : transports()) {
            goals.put(t, goals(t));
        }
        Map<String, ReportJson.MechanismCost> costs = new LinkedHashMap<>();
        for (String t : transports()) {
            MechanismCost c = MechanismCost.of(this, t);
            if (c != null) {
                costs.put(t, c.toJson());
            }
        }
        List<String> failures = checkFailures();
        return new ReportJson("heartbeat load-test", command, startedAt, RunResult.round(wallSeconds), machine(), sc,
                settings, byImpl, goals, costs, new ReportJson.Check(failures.isEmpty(), failures));
    }

    static ReportJson.Machine machine() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        Long memory = os instanceof com.sun.management.OperatingSystemMXBean
                ? ((com.sun.management.OperatingSystemMXBean) os).getTotalMemorySize() : null;
        Version netty = Version.identify().get("netty-common");
        return new ReportJson.Machine(Runtime.getRuntime().availableProcessors(), memory,
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"),
                netty == null ? "unknown" : netty.artifactVersion(), TcpLayout.fileLimit());
    }

    // ------------------------------------------------------------------------------------ table

    /** One row of the side-by-side table: a label and a cell per implementation, plus a ratio. */
    static final class Row {
        final String label;
        final List<String> cells;
        final String ratio;

        Row(String label, List<String> cells, String ratio) {
            this.label = label;
            this.cells = cells;
            this.ratio = ratio;
        }
    }

    /** The side-by-side rows for one transport; the ratio column is heartbeat / netty when both ran. */
    List<Row> table(String transport) {
        List<RunResult> runs = of(transport);
        RunResult hb = find(Scenario.HEARTBEAT, transport);
        RunResult netty = find(Scenario.NETTY, transport);
        boolean ratios = hb != null && netty != null;
        List<Row> rows = new ArrayList<>();
        rows.add(row("connections up", runs, r -> Progress.count(r.client.connected) + " / "
                + Progress.count(r.connections), null));
        rows.add(row("premature closes", runs, r -> Long.toString(r.client.premature), null));
        if (runs.stream().anyMatch(r -> r.client.closesWhileBehind > 0)) {
            rows.add(row("closes not judged: after a write of a client loop running behind (not a failure)", runs,
                    r -> Progress.count(r.client.closesWhileBehind), null));
        }
        rows.add(row("closes expected (silent, dying, flooder...): seen / due", runs,
                r -> Progress.count(r.client.observedCloses) + " / " + Progress.count(r.client.expectedCloses), null));
        rows.add(row("left open / unexpected closes", runs,
                r -> r.client.leftOpen + " / " + r.client.unexpected, null));
        rows.add(row("closes by reason: as told to the clients; as the servers counted them", runs,
                Report::closeReasons, null));
        rows.add(row("closes by role: reasons told", runs, Report::closeReasonsByRole, null));
        if (runs.stream().anyMatch(r -> r.client.connectedByRole[Role.FLOODER.ordinal()] > 0)) {
            rows.add(row("flooders: closed for PING_ABUSE / connected (pings sent)", runs,
                    r -> Progress.count(r.client.abuseCloses) + " / "
                            + Progress.count(r.client.connectedByRole[Role.FLOODER.ordinal()]) + " ("
                            + Progress.count(r.client.flooderPings) + ")", null));
            rows.add(row("flooders: close after their latest ping p50 / p99 / max (ms)", runs,
                    r -> num(Histograms.percentileMillis(r.client.abuseCloseTime, 50)) + " / "
                            + num(Histograms.percentileMillis(r.client.abuseCloseTime, 99)) + " / "
                            + num(Histograms.maxMillis(r.client.abuseCloseTime)), null));
        }
        if (scenario.agesConnections()) {
            rows.add(row("max age: closes / reconnects (late; idle ones closed when due: in / after the grace)",
                    runs, r -> Progress.count(r.client.ageCloses) + " / " + Progress.count(r.client.ageReconnects)
                            + " (" + r.client.late + "; " + r.client.idleClosesInGrace + " / "
                            + r.client.idleDueAfterGrace + ")", null));
            rows.add(row("max age: age at the goodbye min / p50 / max (s); allowed " + seconds(scenario.minAgeNanos())
                    + " to " + seconds(scenario.maxDrawnAgeNanos()), runs,
                    r -> r.client.ageAtGoodbye.getTotalCount() == 0 ? "-"
                            : num(r.client.ageAtGoodbye.getMinValue() / 1e6) + " / "
                            + num(Histograms.percentileMillis(r.client.ageAtGoodbye, 50) / 1e3) + " / "
                            + num(Histograms.maxMillis(r.client.ageAtGoodbye) / 1e3), null));
            rows.add(row("max age: close after the longest age + grace, max (ms; bound "
                    + num(Scenario.AGE_LATENESS_NANOS / 1e6) + ")", runs,
                    r -> num(Histograms.maxMillis(r.client.ageCloseLateness)), null));
            rows.add(row("max age: reconnects per second peak / mean (peak / mean), over s", runs,
                    r -> rate(r.client.reconnectsPerSecond), null));
        }
        if (scenario.storm) {
            rows.add(row("storm: pings + closes seen per second, peak / mean (peak / mean), over s", runs,
                    r -> rate(r.stormActions()), null));
            rows.add(row("storm: worst second of pings + closes / the budget allows", runs,
                    r -> Progress.count(r.stormActions().peak()) + " / " + (scenario.actionBudget > 0
                            && Scenario.HEARTBEAT.equals(r.impl) && r.serverProcesses > 0
                            ? Progress.count(scenario.actionsPerSecondBound(r.serverProcesses)) : "no budget"), null));
            rows.add(row("storm: a server's busiest second, as it counted / its bucket allows", runs,
                    r -> r.serverMetrics.busiestBudgetSecond < 0 ? "-"
                            : Progress.count(r.serverMetrics.busiestBudgetSecond) + " / "
                            + Progress.count(scenario.actionsPerSecondBoundPerServer(r.serverProcesses)), null));
            rows.add(row("storm: closes seen per second", runs, r -> r.client.closesPerSecond.toString(), null));
            rows.add(row("storm: actions the servers deferred; worst deferral (ms)", runs,
                    r -> r.serverMetrics.deferredActions < 0 ? "-" : Progress.count(r.serverMetrics.deferredActions)
                            + "; " + num(r.serverMetrics.worstDeferralSeconds * 1e3), null));
            rows.add(row("storm: last close's lateness / the budget's bound (ms)", runs,
                    r -> num(Histograms.maxMillis(r.client.lateness)) + " / "
                            + (r.serverProcesses > 0 && scenario.stormLatenessBoundNanos(r.serverProcesses) > 0
                            ? num(scenario.stormLatenessBoundNanos(r.serverProcesses) / 1e6) : "no budget"), null));
        }
        if (runs.stream().anyMatch(r -> r.client.connectedByRole[Role.STALLED.ordinal()] > 0)) {
            rows.add(row("stalled: closed on time / connected (KiB written before stalling; read again)", runs,
                    r -> Progress.count(r.client.stallCloses) + " / "
                            + Progress.count(r.client.connectedByRole[Role.STALLED.ordinal()]) + " ("
                            + Progress.count(r.client.stalledBytes / 1024) + "; " + r.client.stallsReadAgain + ")",
                    null));
            rows.add(row("stalled: close seen after their last write p50 / p99 / max (ms; --write-stall "
                    + Scenario.format(scenario.writeStallNanos()) + ")", runs,
                    r -> num(Histograms.percentileMillis(r.client.stallCloseTime, 50)) + " / "
                            + num(Histograms.percentileMillis(r.client.stallCloseTime, 99)) + " / "
                            + num(Histograms.maxMillis(r.client.stallCloseTime)), null));
        }
        if (runs.stream().anyMatch(r -> r.client.connectedByRole[Role.SLOWREADER.ordinal()] > 0)) {
            rows.add(row("slowreader: closed / connected (unwritable longer than the write stall; most KiB not "
                    + "read back)", runs,
                    r -> Progress.count(r.client.closedByRole[Role.SLOWREADER.ordinal()]) + " / "
                            + Progress.count(r.client.connectedByRole[Role.SLOWREADER.ordinal()]) + " ("
                            + Progress.count(r.client.slowBackedUp) + "; "
                            + Progress.count(r.client.slowMaxBacklog / 1024) + ")", null));
            rows.add(row("slowreader: closed after reading under " + Scenario.SERVER_NOTSENT_LOWAT_BYTES / 1024
                    + " KiB in a write stall (a write stall the reader's reads show; not a failure)", runs,
                    r -> Progress.count(r.client.slowStallCloses), null));
            rows.add(row("slowreader: KiB written / read; read rate KiB/s each (a read every "
                    + Scenario.format(scenario.slowReadPeriodNanos()) + ")", runs,
                    r -> Progress.count(r.client.slowBytesWritten / 1024) + " / "
                            + Progress.count(r.client.slowBytesRead / 1024) + "; "
                            + num(r.slowReadBytesPerSecond() / 1024), null));
        }
        if (scenario.drains()) {
            rows.add(row("drain over " + Scenario.format(scenario.drainNanos) + ": drained / servers draining", runs,
                    r -> Progress.count(r.client.drained) + " / "
                            + (r.drainRequested == null ? "-" : Progress.count(r.drainRequested)), null));
            rows.add(row("drain closes a second: peak / mean (peak/mean; limit)", runs,
                    r -> r.client.drainCloses.peak() + " / " + num(r.client.drainCloses.mean()) + " ("
                            + num(r.client.drainCloses.peakOverMean()) + "; " + r.drainPeakLimit(scenario) + ")",
                    null));
            rows.add(row("drain closes per second", runs, r -> r.client.drainCloses.series().toString(), null));
        }
        if (runs.stream().anyMatch(r -> r.serverMetrics.rttCount() > 0)) {
            rows.add(row("servers' ping RTT p50 / p99 / max (ms; samples)", runs, r -> r.serverMetrics.rttCount() == 0
                    ? "-" : num(r.serverMetrics.rttQuantileMillis(0.5)) + " / "
                            + num(r.serverMetrics.rttQuantileMillis(0.99)) + " / " + num(r.serverMetrics.rttMaxMillis())
                            + " (" + Progress.count(r.serverMetrics.rttCount()) + ")", null));
        }
        if (runs.stream().anyMatch(r -> r.loopLag.count() > 0)) {
            rows.add(row("servers' event-loop lag p50 / p99 / p99.9 / max (us; samples)", runs,
                    r -> r.loopLag.count() == 0 ? "-" : num(r.loopLag.quantileMicros(0.5)) + " / "
                            + num(r.loopLag.quantileMicros(0.99)) + " / " + num(r.loopLag.quantileMicros(0.999))
                            + " / " + num(r.loopLag.maxMicros()) + " (" + Progress.count(r.loopLag.count()) + ")",
                    null));
        }
        if (runs.stream().anyMatch(r -> r.client.overLongLines + r.client.floodPingsSent
                + r.client.junkLinesSent > 0)) {
            rows.add(row("over-long lines: decoder closes / sent (max ms after)", runs, r -> r.client.lineCloses
                    + " / " + r.client.overLongLines + " (" + num(r.client.lineCloseMaxNanos / 1e6) + ")", null));
            rows.add(row("ping flood: PONGs / PINGs; junk: echoed / sent", runs,
                    r -> Progress.count(r.client.floodPongs) + " / " + Progress.count(r.client.floodPingsSent) + "; "
                            + Progress.count(r.client.junkEchoes) + " / " + Progress.count(r.client.junkLinesSent),
                    null));
        }
        if (runs.stream().anyMatch(r -> r.client.churned > 0 || !r.heapSamples.isEmpty())) {
            rows.add(row("soak: churned / reopened; heap slope (bytes/min)", runs,
                    r -> Progress.count(r.client.churned) + " / " + Progress.count(r.client.reopened) + "; "
                            + num(r.heapSlopeBytesPerMinute()), null));
            rows.add(row("soak, at s into the window: heap after GC (MB) / connections / server CPU / worker CPU "
                    + "(s, cumulative)", runs, r -> heapSamples(r), null));
        }
        rows.add(row("lateness p50 / p99 / max (ms)", runs, r -> num(r.latenessMillis(50)) + " / "
                + num(r.latenessMillis(99)) + " / " + num(Histograms.maxMillis(r.client.lateness)),
                ratios ? ratio(hb.latenessMillis(99) / netty.latenessMillis(99)) + " (p99)" : null));
        rows.add(row("echo latency p50 / p99 / p99.9 (us)", runs, r -> num(r.echoMicros(50)) + " / "
                + num(r.echoMicros(99)) + " / " + num(r.echoMicros(99.9)),
                ratios ? ratio(hb.echoMicros(99) / netty.echoMicros(99)) + " (p99)" : null));
        rows.add(row("heap per connection (bytes)", runs, r -> num(r.heapBytesPerConnection()),
                ratios ? ratio(hb.heapBytesPerConnection() / netty.heapBytesPerConnection()) : null));
        rows.add(row("server CPU in the run (s)", runs, r -> num(r.serverCpuSeconds),
                ratios ? ratio(hb.serverCpuSeconds / netty.serverCpuSeconds) : null));
        rows.add(row("Heartbeat worker CPU (s)", runs, r -> Scenario.HEARTBEAT.equals(r.impl)
                ? num(r.workerCpuSeconds) : "-", null));
        rows.add(row("server GC time in the run (s)", runs, r -> num(r.serverCounter(RunResult.GC_SECONDS)),
                ratios ? ratio(hb.serverCounter(RunResult.GC_SECONDS) / netty.serverCounter(RunResult.GC_SECONDS))
                        : null));
        rows.add(row("Heartbeat worker wake-ups in the run", runs, r -> Scenario.HEARTBEAT.equals(r.impl)
                ? count(r.serverCounter(RunResult.WAKEUPS)) : "-", null));
        rows.add(row("Heartbeat checks deferred as stalled", runs, r -> Scenario.HEARTBEAT.equals(r.impl)
                ? count(r.serverCounter(RunResult.STALL_RECHECKS)) : "-", null));
        rows.add(row("server CPU while connecting (s)", runs, r -> num(r.connectServerCpuSeconds),
                ratios ? ratio(hb.connectServerCpuSeconds / netty.connectServerCpuSeconds) : null));
        rows.add(row("other processes' CPU in the run (s)", runs, r -> num(r.otherCpuSeconds), null));
        cpuRows(this, rows, transport, runs, ratios ? hb : null, netty);
        rows.add(row("connect phase (s)", runs, r -> num(r.connectSeconds()), null));
        rows.add(row("pings sent by the servers, since they started", runs,
                r -> r.pingsSent < 0 ? "-" : Progress.count(r.pingsSent), null));
        rows.add(row("pings sent by the servers in the window", runs,
                r -> r.pingsSentInWindow < 0 ? "-" : Progress.count(r.pingsSentInWindow), null));
        rows.add(row("processes (servers + clients)", runs, r -> r.serverProcesses + " + " + r.clientProcesses, null));
        return rows;
    }

    /** e.g. "1,200 / 400 (3.00), 5": a rate's peak, mean, peak over mean and span in seconds. */
    static String rate(PerSecond p) {
        return Progress.count(p.peak()) + " / " + num(p.mean()) + " (" + num(p.peakOverMean()) + "), "
                + p.span();
    }

    private static String seconds(long nanos) {
        return num(nanos / 1e9);
    }

    /** e.g. "PING_TIMEOUT 600; servers: PING_TIMEOUT 600", "none 600; servers: READER_IDLE 600" (MQTT). */
    private static String closeReasons(RunResult r) {
        List<String> told = new ArrayList<>();
        r.closeReasonsJson().toldClients().forEach((reason, n) -> told.add(reason + " " + Progress.count(n)));
        List<String> counted = new ArrayList<>();
        r.serverMetrics.closes.forEach((reason, n) -> {
            if (n > 0) {
                counted.add(reason + " " + Progress.count(n));
            }
        });
        return (told.isEmpty() ? "-" : String.join(", ", told)) + "; servers: "
                + (!r.serverMetrics.hasCloses() ? "not read" : counted.isEmpty() ? "-" : String.join(", ", counted));
    }

    /** e.g. "silent: PING_TIMEOUT 200; dying: PING_TIMEOUT 100; flooder: PING_ABUSE 100" ("none": no goodbye). */
    private static String closeReasonsByRole(RunResult r) {
        List<String> roles = new ArrayList<>();
        for (Role role : Role.values()) {
            List<String> reasons = new ArrayList<>();
            r.closeReasons(role).forEach((reason, n) -> reasons.add(reason + " " + Progress.count(n)));
            if (!reasons.isEmpty()) {
                roles.add(role + ": " + String.join(", ", reasons));
            }
        }
        return roles.isEmpty() ? "-" : String.join("; ", roles);
    }

    /** The machine's CPU split and the server threads' split over the run window ({@link CpuSplit}). */
    private static void cpuRows(Report report, List<Row> rows, String transport, List<RunResult> runs, RunResult hb,
            RunResult netty) {
        boolean ratios = hb != null && hb.cpu != null && netty.cpu != null;
        rows.add(row("machine busy = servers + clients + harness + everything else (s)", runs, r -> split(r,
                c -> num(c.busy()) + " = " + num(c.servers) + " + " + num(c.clients) + " + " + num(c.harness)
                        + " + " + num(c.everythingElse)), null));
        rows.add(row("machine user / nice / system / irq / softirq / steal / idle / iowait (s)", runs, r -> split(r,
                c -> String.join(" / ", num(CpuSplit.seconds(c.machine.user())),
                        num(CpuSplit.seconds(c.machine.nice())), num(CpuSplit.seconds(c.machine.system())),
                        num(CpuSplit.seconds(c.machine.irq())), num(CpuSplit.seconds(c.machine.softirq())),
                        num(CpuSplit.seconds(c.machine.steal())), num(CpuSplit.seconds(c.machine.idle())),
                        num(CpuSplit.seconds(c.machine.iowait())))), null));
        rows.add(row("cores x window - the sum of those states (s; off by this, machine busy is)", runs,
                r -> split(r, c -> num(c.missingSeconds)), null));
        rows.add(row("of everything else: ksoftirqd / earlier runs' processes / exited in the window (s)", runs,
                r -> split(r, c -> num(c.ksoftirqd) + " / " + num(c.previousRuns) + " / " + num(c.exitedChildren)),
                null));
        rows.add(row("server CPU from /proc (s)", runs, r -> split(r, c -> num(c.serverTotal())),
                ratios ? ratio(hb.cpu.serverTotal() / netty.cpu.serverTotal()) : null));
        rows.add(row("of which event loops / Heartbeat worker / GC / JIT / other (s)", runs, r -> split(r,
                c -> String.join(" / ", num(c.thread(MachineCpu.ThreadKind.EVENT_LOOP)),
                        num(c.thread(MachineCpu.ThreadKind.HEARTBEAT_WORKER)), num(c.thread(MachineCpu.ThreadKind.GC)),
                        num(c.thread(MachineCpu.ThreadKind.JIT)), num(c.thread(MachineCpu.ThreadKind.OTHER)))),
                ratios ? ratio(hb.cpu.thread(MachineCpu.ThreadKind.EVENT_LOOP)
                        / netty.cpu.thread(MachineCpu.ThreadKind.EVENT_LOOP)) + " (event loops)" : null));
        MechanismCost cost = MechanismCost.of(report, transport);
        if (cost != null) {
            rows.add(row("own CPU over none: event loops + workers + GC, minus none's (s)", runs,
                    r -> Scenario.NONE.equals(r.impl) ? "(" + num(cost.noneSeconds()) + ")"
                            : num(cost.overNone(r.impl)) + " (" + num(cost.mechanism(r.impl)) + " - "
                            + num(cost.noneSeconds()) + ")", ratio(cost.ratio())));
            rows.add(row("JIT compiler threads over none (s; apart from the above)", runs,
                    r -> Scenario.NONE.equals(r.impl) ? "-" : num(cost.jitOverNone(r.impl)), null));
        }
        if (RunPlan.LOCAL.equals(transport)) {
            rows.add(row("client loops in the server's JVM (s)", runs,
                    r -> split(r, c -> num(c.thread(MachineCpu.ThreadKind.CLIENT_LOOP))), null));
        }
        rows.add(row("event-loop wake-ups per second (all servers)", runs,
                r -> split(r, c -> count(c.eventLoopWakeupsPerSecond())),
                ratios ? ratio(hb.cpu.eventLoopWakeupsPerSecond() / netty.cpu.eventLoopWakeupsPerSecond()) : null));
        rows.add(row("Heartbeat worker wake-ups/s per process: ctxt switches / counter", runs,
                r -> Scenario.HEARTBEAT.equals(r.impl) ? split(r, c -> num(c.workerWakeupsPerSecondPerProcess()))
                        + " / " + num(r.workerCounterWakeupsPerSecondPerProcess()) : "-", null));
    }

    /** A cell from the run's CPU split, "-" where there is none. */
    private static String split(RunResult r, Function<CpuSplit, String> cell) {
        return r.cpu == null ? "-" : cell.apply(r.cpu);
    }

    private interface Cell {
        String of(RunResult r);
    }

    private static Row row(String label, List<RunResult> runs, Cell cell, String ratio) {
        List<String> cells = new ArrayList<>();
        for (RunResult r : runs) {
            cells.add(cell.of(r));
        }
        return new Row(label, cells, ratio);
    }

    /** The table for one transport as Markdown. */
    String markdownTable(String transport) {
        List<RunResult> runs = of(transport);
        boolean ratios = find(Scenario.HEARTBEAT, transport) != null && find(Scenario.NETTY, transport) != null;
        StringBuilder s = new StringBuilder();
        s.append("| ").append(transport).append(" |");
        for (RunResult r : runs) {
            s.append(' ').append(displayName(r.impl)).append(" |");
        }
        if (ratios) {
            s.append(" heartbeat / netty |");
        }
        s.append("\n|---|");
        for (int i = 0; i < runs.size(); i++) {
            s.append("---:|");
        }
        if (ratios) {
            s.append("---:|");
        }
        s.append('\n');
        for (Row row : table(transport)) {
            s.append("| ").append(row.label).append(" |");
            for (String c : row.cells) {
                s.append(' ').append(c).append(" |");
            }
            if (ratios) {
                s.append(' ').append(row.ratio == null ? "" : row.ratio).append(" |");
            }
            s.append('\n');
        }
        return s.toString();
    }

    /** The table for one transport in aligned columns, for the terminal: within {@link TextTable#WIDTH} columns. */
    String textTable(String transport) {
        List<RunResult> runs = of(transport);
        boolean ratios = find(Scenario.HEARTBEAT, transport) != null && find(Scenario.NETTY, transport) != null;
        List<String[]> lines = new ArrayList<>();
        List<String> header = new ArrayList<>();
        header.add(transport + " (" + Progress.count(scenario.connections) + " connections)");
        for (RunResult r : runs) {
            header.add(displayName(r.impl));
        }
        if (ratios) {
            header.add("heartbeat/netty");
        }
        lines.add(header.toArray(new String[0]));
        for (Row row : table(transport)) {
            List<String> l = new ArrayList<>();
            l.add(row.label);
            l.addAll(row.cells);
            if (ratios) {
                l.add(row.ratio == null ? "" : row.ratio);
            }
            lines.add(l.toArray(new String[0]));
        }
        return TextTable.render(lines, TextTable.WIDTH);
    }

    static String displayName(String impl) {
        switch (impl) {
            case Scenario.HEARTBEAT:
                return "heartbeat";
            case Scenario.NETTY:
                return "netty (IdleStateHandler)";
            default:
                return "none (no idle handling)";
        }
    }

    String markdown() {
        StringBuilder s = new StringBuilder();
        s.append("# Heartbeat load test\n\n");
        s.append(summary()).append("\n\n");
        s.append("Command: `").append(command).append("`\n\n");
        s.append(new ReportVerdicts(this).markdown());
        for (String t : transports()) {
            s.append("## ").append(t).append("\n\n");
            s.append(markdownTable(t)).append('\n');
            s.append("How to read it:\n\n");
            for (String[] item : HOW_TO_READ) {
                s.append("- **").append(item[0]).append("**: ").append(item[1]).append('\n');
            }
            s.append('\n');
            for (RunResult r : of(t)) {
                for (String note : r.notes) {
                    s.append("- Note (").append(r.impl).append("): ").append(note).append('\n');
                }
                for (String note : r.client.behindNotes) {
                    s.append("- Client behind (").append(r.impl).append("): ").append(note).append('\n');
                }
                for (String note : r.client.slowStallNotes) {
                    s.append("- Write stall its reads show (").append(r.impl).append("): ").append(note).append('\n');
                }
                for (String sample : r.client.failureSamples) {
                    s.append("- Failure (").append(r.impl).append("): ").append(sample).append('\n');
                }
            }
            s.append('\n');
        }
        s.append("The whole distributions, in HdrHistogram's percentile format: ");
        List<String> files = new ArrayList<>();
        for (RunResult r : results) {
            files.add(hgrmName(r, "lateness"));
            files.add(hgrmName(r, "echo-latency"));
        }
        s.append(String.join(", ", files)).append(" (lateness in ms, echo latency in us).\n");
        return s.toString();
    }

    /** One paragraph: machine, scenario, duration. */
    String summary() {
        ReportJson.Machine machine = machine();
        Scenario s = scenario;
        return String.format(Locale.ROOT, "%s connections, mix %s, %s; run window %s after every connection is up, "
                + "active lines at %s/s per connection, seed %d. Machine: %s cores, %s, %s, Netty %s. Wall time %s.",
                Progress.count(s.connections), s.mix, s.describePolicy(), Scenario.format(s.durationNanos),
                num(1e9 / s.activePeriodNanos), s.seed, machine.cores(), machine.os(), machine.java(),
                machine.netty(), Progress.seconds(wallSeconds));
    }

    /** Writes report.json, report.md and report.html into the output folder. */
    void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("report.json"), JsonCodec.writePretty(toJson()), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("report.md"), markdown(), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("report.html"), new HtmlReport(this).render(), StandardCharsets.UTF_8);
        for (RunResult r : results) {
            writeHgrm(dir.resolve(hgrmName(r, "lateness")), r.client.lateness, 1000.0);
            writeHgrm(dir.resolve(hgrmName(r, "echo-latency")), r.client.echoLatency, 1.0);
        }
    }

    static String hgrmName(RunResult r, String what) {
        return r.impl + "-" + r.transport + "-" + what + ".hgrm";
    }

    /** HdrHistogram's own percentile distribution, values divided by {@code scale} (1000: us to ms). */
    private static void writeHgrm(Path file, Histogram h, double scale) throws IOException {
        try (PrintStream out = new PrintStream(Files.newOutputStream(file), false, StandardCharsets.UTF_8)) {
            h.outputPercentileDistribution(out, 5, scale);
        }
    }

    // ------------------------------------------------------------------------------------ formats

    static String num(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "-";
        }
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (a >= 100) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    /** A count: a whole number with thousands separators; "-" if not measured. */
    static String count(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "-" : Progress.count(Math.round(v));
    }

    static String ratio(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "-" : String.format(Locale.ROOT, "%.2f", v);
    }

    static String ms(double v) {
        return num(v) + " ms";
    }

    static String us(double v) {
        return num(v) + " us";
    }

    static String secs(double v) {
        return num(v) + " s";
    }

    static String bytes(double v) {
        return num(v) + " B";
    }

    static String pct(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "-" : String.format(Locale.ROOT, "%.1f%%", v * 100);
    }

    private static String heapSamples(RunResult r) {
        StringBuilder s = new StringBuilder();
        for (RunResult.HeapSample h : r.heapSamples) {
            s.append(s.length() == 0 ? "" : ", ").append(num(h.seconds())).append(": ")
                    .append(num(h.heapBytes() / 1e6)).append(" / ").append(Progress.count(h.connections()))
                    .append(" / ").append(h.serverCpuSeconds() == null ? "-" : num(h.serverCpuSeconds()))
                    .append(" / ").append(h.workerCpuSeconds() == null ? "-" : num(h.workerCpuSeconds()));
        }
        return s.length() == 0 ? "-" : s.toString();
    }
}
