/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

// Over 500 lines (listed in checkstyle.xml): one run's timeline over processes (start, measure, drive, stop whatever
// happens) reads as one sequence.
/**
 * Runs one implementation over real loopback TCP: starts fresh demo servers (or uses running ones,
 * {@code --target}) and client workers, as many of each as the per-process file limit requires,
 * measures the servers' heap and CPU through their HTTP endpoints, drives the run window, merges
 * the clients' results and stops every process it started, whatever happens.
 *
 * <p>Timeline: servers up; heap after GC; clients connect at the limited rate; heap after GC again
 * with every connection up; CPU read at the window's start and end; the clients' verdicts. Runs on
 * the coordinator's one thread.
 */
final class TcpCoordinator {

    private static final String DEMO_READY = "demo-server listening on";
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    /** Soak: heap samples per run window, the last at its end. */
    private static final int HEAP_SAMPLES = 5;

    // The samples of the servers' /metrics read here, as the demo server's Micrometer Prometheus registry
    // names them (ServerMetricsTest checks that a real demo server has each).
    /** Process CPU time, cumulative, in nanoseconds (Micrometer's ProcessorMetrics). */
    static final String PROCESS_CPU_NANOS = "process_cpu_time_ns_total";
    /** Collection time, cumulative per collector (GarbageCollectorMXBean's), in seconds. */
    static final String GC_SECONDS = "jvm_gc_collection_seconds_total";
    /** The Heartbeat worker's CPU time, cumulative, in seconds. */
    static final String WORKER_CPU_SECONDS = "heartbeat_worker_cpu_seconds_total";
    /** PING lines sent, for either idle impl. */
    static final String PINGS_SENT = "demo_pings_sent_total";
    /** By reason: {@code max_line} is not an idle close; every other reason is. */
    static final String CLOSED = ServerMetrics.CLOSED;
    /** Value 1; the server's settings are its labels. */
    static final String SERVER_INFO = "demo_server_info";
    /** Heartbeat's worker counters in the report, and the servers' metrics they come from. */
    static final String[][] HEARTBEAT_COUNTERS = {
        {RunResult.WAKEUPS, "heartbeat_worker_wakeups_total"},
        {RunResult.CYCLES, "heartbeat_worker_cycles_total"},
        {RunResult.EXPIRATIONS, "heartbeat_worker_expirations_total"},
        {RunResult.REARMS, "heartbeat_worker_rearms_total"},
        {RunResult.STALL_RECHECKS, "heartbeat_stall_rechecks_total"}};

    private final RunPlan plan;
    private final Progress progress;

    TcpCoordinator(RunPlan plan, Progress progress) {
        this.plan = plan;
        this.progress = progress;
    }

    RunResult run(String impl, int runIndex) throws IOException, InterruptedException {
        long started = System.nanoTime();
        Run run = new Run(impl, runIndex);
        boolean completed = false;
        try {
            run.startServers();
            run.measureHeapBefore();
            run.connect();
            run.measureHeapAfter();
            run.runWindow();
            run.collect();
            completed = true;
        } finally {
            run.stop(completed);
        }
        run.result.wallSeconds = (System.nanoTime() - started) / 1e9;
        return run.result;
    }

    /** One implementation's run, phase by phase: its processes, probes and samples of the servers' metrics. */
    private final class Run {
        private final String impl;
        private final int runIndex;
        private final String label;
        private final TcpLayout layout;
        private final boolean external = !plan.targets.isEmpty();
        private final RunResult result;
        private final List<ChildProcess> servers = new ArrayList<>();
        private final List<ChildProcess> clients = new ArrayList<>();
        private final List<String> echo = new ArrayList<>();
        private final List<ServerProbe> probes = new ArrayList<>();
        /** The servers' metrics before and after connecting, and at the start and end of the window. */
        private List<Map<String, Double>> beforeConnect;
        private List<Map<String, Double>> afterConnect;
        private List<Map<String, Double>> windowStart;
        private List<Map<String, Double>> windowEnd;

        Run(String impl, int runIndex) {
            this.impl = impl;
            this.runIndex = runIndex;
            this.label = impl + "/tcp";
            this.layout = TcpLayout.plan(plan.scenario.connections, plan.maxPerProcess);
            this.result = new RunResult(impl, RunPlan.TCP, plan.scenario.connections);
            result.clientProcesses = layout.clients;
        }

        /** Starts the demo servers, or takes the running --target ones. */
        void startServers() throws IOException, InterruptedException {
            List<String> http = new ArrayList<>();
            if (external) {
                echo.addAll(plan.targets);
                http.addAll(plan.targetMetrics);
                result.notes.add("servers were already running (--target): their settings must match this scenario");
            } else {
                TcpCoordinator.this.startServers(impl, runIndex, layout, servers, echo, http, label);
            }
            result.serverProcesses = echo.size();
            for (String h : http) {
                probes.add(new ServerProbe(h));
            }
            if (probes.isEmpty()) {
                result.notes.add("no server HTTP endpoints: heap and CPU were not measured");
            }
        }

        void measureHeapBefore() throws IOException, InterruptedException {
            if (!probes.isEmpty()) {
                Map<String, Double> first = probes.get(0).metrics();
                if (external) {
                    requireMatchingTarget(impl, serverInfo(first));
                }
                result.heapBeforeBytes = gc(probes, null);
                result.serverTransport = serverTransport(first);
            }
            beforeConnect = metrics(probes);
        }

        /** Starts the client processes and waits until every connection is up (or failed). */
        void connect() throws IOException, InterruptedException {
            Scenario s = plan.scenario;
            long deadline = System.nanoTime() + plan.connectBudgetNanos() + s.durationNanos + 300 * SECOND;
            for (int c = 0; c < layout.clients; c++) {
                ClientWorker.Spec spec = new ClientWorker.Spec(s.settings(), impl, layout.clientFrom(c),
                        layout.clientTo(c), echo, external ? List.of() : layout.sources(runIndex, c),
                        plan.clientThreads, plan.connectRate / layout.clients, deadline);
                List<String> cmd = new ArrayList<>(plan.childJvm(plan.clientHeap));
                cmd.add(ClientWorker.class.getName());
                cmd.add(JsonCodec.write(spec));
                clients.add(ChildProcess.start(impl + "-client-" + c, cmd,
                        plan.out.resolve("logs").resolve(impl + "-tcp-client-" + c + ".log")));
            }
            awaitConnected(label, clients, servers);
            afterConnect = metrics(probes);
        }

        void measureHeapAfter() throws IOException, InterruptedException {
            if (!probes.isEmpty()) {
                long gcStart = System.nanoTime();
                progress.show(label + ": measuring the servers' heap (full GC)...");
                long[] connections = new long[1];
                result.heapAfterBytes = gc(probes, connections);
                result.connectionsAtHeap = connections[0];
                progress.println(String.format(Locale.ROOT, "%s: heap measured in %s: %s bytes per connection", label,
                        Progress.seconds((System.nanoTime() - gcStart) / 1e9),
                        Report.num(result.heapBytesPerConnection())));
            }
            windowStart = metrics(probes);
            if (!probes.isEmpty()) {
                long closedBefore = (long) sum(windowStart, m -> idleCloses(m));
                long pingsBefore = (long) sum(windowStart, m -> ServerProbe.value(m, PINGS_SENT));
                if (closedBefore > 0 || pingsBefore > 0) {
                    result.notes.add("the heap was measured after " + pingsBefore + " pings and " + closedBefore
                            + " idle closes: the connect phase and the GCs outlasted the first ping interval");
                }
            }
        }

        /** Starts the window in every client, follows it, and measures the rest of the machine's CPU over it. */
        void runWindow() throws IOException, InterruptedException {
            long start = System.nanoTime() + SECOND / 2;
            long end = start + plan.scenario.durationNanos;
            result.windowSeconds = plan.scenario.durationNanos / 1e9;
            for (ChildProcess c : clients) {
                c.send("run " + start + " " + end);
            }
            ParentLink.sleepUntil(start);
            CpuSplit.Pids pids = new CpuSplit.Pids(pids(servers), pids(clients), ProcessHandle.current().pid(),
                    ChildProcess.started());
            CpuSplit.Snapshot cpu0 = CpuSplit.Snapshot.take(pids);
            if (plan.scenario.churnPerSecond > 0 && !probes.isEmpty()) {
                sampleHeap(start, end);
            }
            if (plan.scenario.drains()) {
                drain(start);
            }
            followRun(label, clients, servers, start, end);
            ParentLink.sleepUntil(end);
            result.cpu(CpuSplit.between(cpu0, CpuSplit.Snapshot.take(pids), pids));
            windowEnd = metrics(probes);
            if (plan.scenario.churnPerSecond > 0 && !probes.isEmpty()) {
                addHeapSample(start);
            }
        }

        /**
         * Soak: the servers' heap after a full GC at each fifth of the window (the GCs are in the window:
         * they cost the servers pauses and CPU that a run without churn does not have).
         */
        private void sampleHeap(long start, long end) throws IOException, InterruptedException {
            for (int k = 1; k < HEAP_SAMPLES; k++) {
                long at = start + (end - start) / HEAP_SAMPLES * k;
                followRun(label, clients, servers, start, at);
                addHeapSample(start);
            }
        }

        private void addHeapSample(long start) throws IOException, InterruptedException {
            List<Map<String, Double>> now = metrics(probes); // before the GC, which costs CPU of its own
            double serverCpu = serverCpuSeconds(now, windowStart);
            double workerCpu = Scenario.HEARTBEAT.equals(impl)
                    ? delta(now, windowStart, WORKER_CPU_SECONDS) : Double.NaN;
            long[] connections = new long[1];
            long heap = gc(probes, connections);
            RunResult.HeapSample h = new RunResult.HeapSample((System.nanoTime() - start) / 1e9, heap, connections[0],
                    RunResult.round(serverCpu), RunResult.round(workerCpu));
            result.heapSamples.add(h);
            progress.println(String.format(Locale.ROOT, "%s: heap after GC %s s into the window: %s MB, %s "
                    + "connections; server CPU %s s, Heartbeat worker %s s since the window started", label,
                    Report.num(h.seconds()), Report.num(heap / 1e6), Progress.count(connections[0]),
                    Report.num(serverCpu), Report.num(workerCpu)));
        }

        /**
         * {@code --drain}: at its moment, asks every server to drain over the window (never before: the
         * clients judge a DRAIN goodbye before it premature), all at once from one thread each.
         */
        private void drain(long start) throws IOException, InterruptedException {
            long at = start + plan.scenario.drainDelayNanos();
            followRun(label, clients, servers, start, at);
            ParentLink.sleepUntil(at);
            java.time.Duration window = java.time.Duration.ofNanos(plan.scenario.drainNanos);
            long draining = 0;
            for (long n : onEveryServer(probes, "POST /drain", p -> p.drain(window))) {
                draining += n;
            }
            result.drainRequested = draining;
            progress.println(String.format(Locale.ROOT, "%s: drain asked of %d servers: %s connections over %s",
                    label, probes.size(), Progress.count(draining), Scenario.format(plan.scenario.drainNanos)));
        }

        /** Merges the clients' results and the servers' CPU and counters over the window. */
        void collect() throws InterruptedException {
            for (ChildProcess c : clients) {
                result.client.add(c.awaitMessage(ChildMessage.Result.class, 60 * SECOND).result());
            }
            if (!probes.isEmpty()) {
                result.serverCpuSeconds = serverCpuSeconds(windowEnd, windowStart);
                result.connectServerCpuSeconds = serverCpuSeconds(afterConnect, beforeConnect);
                result.serverCounters.put(RunResult.GC_SECONDS,
                        delta(windowEnd, windowStart, GC_SECONDS));
                if (Scenario.HEARTBEAT.equals(impl)) {
                    result.workerCpuSeconds = delta(windowEnd, windowStart, WORKER_CPU_SECONDS);
                    for (String[] counter : HEARTBEAT_COUNTERS) {
                        result.serverCounters.put(counter[0], delta(windowEnd, windowStart, counter[1]));
                    }
                }
                result.pingsSent = (long) sum(windowEnd, m -> ServerProbe.value(m, PINGS_SENT));
                result.pingsSentInWindow = (long) delta(windowEnd, windowStart, PINGS_SENT);
                windowEnd.forEach(result.serverMetrics::add);
                for (int i = 0; i < windowEnd.size(); i++) {
                    result.loopLag.add(ServerLoopLag.window(windowStart.get(i), windowEnd.get(i)));
                }
                result.idleCloses = (long) sum(windowEnd, m -> idleCloses(m));
            }
            for (ChildProcess c : clients) {
                c.send("exit");
            }
        }

        /** Lets the clients close their connections and exit (after a completed run), and stops the servers. */
        void stop(boolean completed) throws InterruptedException {
            for (ChildProcess c : clients) {
                if (completed) {
                    c.awaitExit(15 * SECOND);
                } else {
                    c.stop(2 * SECOND);
                }
            }
            for (ChildProcess srv : servers) {
                srv.stop(8 * SECOND);
            }
        }
    }

    /** The children's pids. */
    static List<Long> pids(List<ChildProcess> children) {
        List<Long> pids = new ArrayList<>();
        for (ChildProcess c : children) {
            pids.add(c.pid());
        }
        return pids;
    }

    private void startServers(String impl, int runIndex, TcpLayout layout, List<ChildProcess> servers,
            List<String> echo, List<String> http, String label) throws IOException, InterruptedException {
        for (int i = 0; i < layout.servers; i++) {
            int port = TcpLayout.echoPort(plan.basePort, runIndex, i);
            int metricsPort = TcpLayout.metricsPort(plan.basePort, runIndex, i);
            List<String> cmd = new ArrayList<>();
            cmd.add(RunPlan.javaCommand());
            cmd.add("-Xmx" + plan.serverHeap);
            cmd.addAll(plan.jvmArgs);
            cmd.add("-jar");
            cmd.add(plan.demoServerJar.toString());
            cmd.addAll(List.of("--host", "127.0.0.1", "--port", Integer.toString(port), "--metrics-port",
                    Integer.toString(metricsPort), "--idle-impl", impl, "--worker-threads",
                    Integer.toString(plan.serverThreads), "--stop-with-parent"));
            cmd.addAll(List.of(plan.scenario.serverFlags(impl, layout.servers)));
            servers.add(ChildProcess.start(impl + "-server-" + i, cmd,
                    plan.out.resolve("logs").resolve(impl + "-tcp-server-" + i + ".log")));
            echo.add("127.0.0.1:" + port);
            http.add("127.0.0.1:" + metricsPort);
        }
        progress.show(label + ": starting " + layout.servers + " demo servers...");
        for (ChildProcess srv : servers) {
            srv.awaitLine(DEMO_READY, 60 * SECOND);
        }
        progress.println(label + ": " + layout.servers + " demo servers up (ports " + echo.get(0) + "..."
                + ", -Xmx" + plan.serverHeap + "), starting " + layout.clients + " client processes of up to "
                + Progress.count(layout.perProcess) + " connections");
    }

    private void awaitConnected(String label, List<ChildProcess> clients, List<ChildProcess> servers)
            throws InterruptedException {
        Map<ChildProcess, Boolean> done = new HashMap<>();
        long deadline = System.nanoTime() + plan.connectBudgetNanos();
        long phaseStart = System.nanoTime();
        int n = plan.scenario.connections;
        while (done.size() < clients.size()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(label + ": the connections were not up within "
                        + Progress.seconds(plan.connectBudgetNanos() / 1e9));
            }
            for (ChildProcess c : clients) {
                ChildMessage m;
                while ((m = c.messages().peek()) != null && !(m instanceof ChildMessage.Result)) {
                    c.messages().poll();
                    if (m instanceof ChildMessage.Connected) {
                        done.put(c, Boolean.TRUE);
                    } else if (m instanceof ChildMessage.Failed) {
                        throw c.failure("failed: " + ((ChildMessage.Failed) m).message());
                    }
                }
                c.requireAlive();
            }
            for (ChildProcess srv : servers) {
                srv.requireAlive();
            }
            ChildMessage.ProgressUpdate p = total(clients);
            long up = p.connected();
            long failed = p.failed();
            double elapsed = (System.nanoTime() - phaseStart) / 1e9;
            double rate = up / Math.max(elapsed, 1e-3);
            progress.show(String.format(Locale.ROOT, "%s connecting: %s / %s up, %s failed, %s/s, ETA %s",
                    label, Progress.count(up), Progress.count(n), Progress.count(failed), Progress.count((long) rate),
                    Progress.seconds(rate > 0 ? (n - up - failed) / rate : Double.NaN)));
            Thread.sleep(250);
        }
        ChildMessage.ProgressUpdate p = total(clients);
        progress.println(String.format(Locale.ROOT, "%s: %s / %s connections up, %s failed, in %s", label,
                Progress.count(p.connected()), Progress.count(n), Progress.count(p.failed()),
                Progress.seconds((System.nanoTime() - phaseStart) / 1e9)));
    }

    private void followRun(String label, List<ChildProcess> clients, List<ChildProcess> servers, long start, long end)
            throws InterruptedException {
        while (System.nanoTime() - end < 0) {
            for (ChildProcess c : clients) {
                c.requireAlive();
            }
            for (ChildProcess srv : servers) {
                srv.requireAlive();
            }
            progress.show(Progress.runLine(label, " running ", start, end, total(clients)));
            Thread.sleep(Math.max(1, Math.min(500, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
        }
        progress.println(Progress.runLine(label, " ran ", start, end, total(clients)));
    }

    /** The clients' latest progress, summed. */
    private static ChildMessage.ProgressUpdate total(List<ChildProcess> clients) {
        List<ChildMessage.ProgressUpdate> all = new ArrayList<>();
        for (ChildProcess c : clients) {
            all.add(c.lastProgress());
        }
        return ChildMessage.ProgressUpdate.sum(all);
    }

    /**
     * Runs a full GC on every server at once; returns the heap used summed, and adds the connections
     * to {@code connections[0]}.
     */
    private static long gc(List<ServerProbe> probes, long[] connections) throws IOException, InterruptedException {
        long heap = 0;
        for (ServerProbe.Heap h : onEveryServer(probes, "POST /debug/gc", ServerProbe::gc)) {
            heap += h.heapUsedBytes();
            if (connections != null) {
                connections[0] += h.connections();
            }
        }
        return heap;
    }

    /** A request to one server's HTTP endpoint. */
    private interface ProbeCall<T> {
        T on(ServerProbe p) throws IOException, InterruptedException;
    }

    /** Makes {@code call} on every server at once, one thread each (the requests may block a while), in order. */
    private static <T> List<T> onEveryServer(List<ServerProbe> probes, String what, ProbeCall<T> call)
            throws IOException, InterruptedException {
        List<CompletableFuture<T>> all = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, probes.size()));
        for (ServerProbe p : probes) {
            all.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return call.on(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }, pool));
        }
        pool.shutdown();
        List<T> out = new ArrayList<>();
        for (CompletableFuture<T> f : all) {
            try {
                out.add(f.get());
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UncheckedIOException) {
                    throw ((UncheckedIOException) e.getCause()).getCause();
                }
                throw new IOException(what + " failed", e.getCause());
            }
        }
        return out;
    }

    private static List<Map<String, Double>> metrics(List<ServerProbe> probes)
            throws IOException, InterruptedException {
        List<Map<String, Double>> out = new ArrayList<>();
        for (ServerProbe p : probes) {
            out.add(p.metrics());
        }
        return out;
    }

    private interface Metric {
        double of(Map<String, Double> m);
    }

    private static double sum(List<Map<String, Double>> samples, Metric metric) {
        double sum = 0;
        for (Map<String, Double> m : samples) {
            double v = metric.of(m);
            if (!Double.isNaN(v)) {
                sum += v;
            }
        }
        return sum;
    }

    /** The servers' CPU time between two samplings, in seconds. */
    private static double serverCpuSeconds(List<Map<String, Double>> after, List<Map<String, Double>> before) {
        return delta(after, before, PROCESS_CPU_NANOS) / SECOND;
    }

    /** The change of every sample whose key starts with {@code prefix}, summed over the servers. */
    private static double delta(List<Map<String, Double>> after, List<Map<String, Double>> before, String prefix) {
        return sum(after, m -> prefixed(m, prefix)) - sum(before, m -> prefixed(m, prefix));
    }

    private static double prefixed(Map<String, Double> m, String prefix) {
        double sum = 0;
        for (Map.Entry<String, Double> e : m.entrySet()) {
            if (e.getKey().equals(prefix) || e.getKey().startsWith(prefix + "{")) {
                sum += e.getValue();
            }
        }
        return sum;
    }

    /**
     * Connections the server closed for idleness or unanswered pings (not for over-long lines, by the
     * ping policing, by Heartbeat's lifecycle guards or by a drain).
     */
    static long idleCloses(Map<String, Double> m) {
        long sum = 0;
        for (String reason : new String[] {"reader_idle", "writer_idle", "all_idle", "ping_timeout"}) {
            sum += m.getOrDefault(CLOSED + "{reason=\"" + reason + "\"}", 0.0).longValue();
        }
        return sum;
    }

    private static String serverTransport(Map<String, Double> m) {
        return serverInfo(m).getOrDefault("transport", "");
    }

    private void requireMatchingTarget(String impl, Map<String, String> info) {
        String policy = plan.scenario.serverPolicy().toString();
        String probe = info.getOrDefault("probe", "line"); // servers from before --probe serve lines
        if (!plan.scenario.protocol.toString().equals(probe)) {
            throw new IllegalArgumentException("--target servers serve --probe " + probe + ", not "
                    + plan.scenario.protocol + ": give --probe " + probe);
        }
        if (!impl.equals(info.get("idle_impl"))) {
            throw new IllegalArgumentException("--target servers run idle-impl " + info.get("idle_impl") + ", not "
                    + impl + ": give --compare " + info.get("idle_impl"));
        }
        if (!Scenario.NONE.equals(impl) && !policy.equals(info.get("policy"))) {
            throw new IllegalArgumentException("--target servers run policy " + info.get("policy") + ", not " + policy
                    + ": give --policy " + info.get("policy") + " and the servers' timeouts");
        }
        String police = info.getOrDefault("police_pings", "off"); // servers from before --police-pings do not
        if (plan.scenario.policesPings() && "off".equals(police)) {
            throw new IllegalArgumentException("--target servers do not police pings, and the mix has flooders: "
                    + "start them with " + String.join(" ", plan.scenario.serverFlags(impl, 1)));
        }
    }

    /** The server settings as labels, for a check that running targets match the scenario. */
    static Map<String, String> serverInfo(Map<String, Double> m) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (String key : m.keySet()) {
            if (key.startsWith(SERVER_INFO + "{")) {
                for (String kv : key.substring(key.indexOf('{') + 1, key.lastIndexOf('}')).split(",", -1)) {
                    int eq = kv.indexOf('=');
                    if (eq > 0) {
                        labels.put(kv.substring(0, eq), kv.substring(eq + 1).replace("\"", ""));
                    }
                }
            }
        }
        return labels;
    }
}
