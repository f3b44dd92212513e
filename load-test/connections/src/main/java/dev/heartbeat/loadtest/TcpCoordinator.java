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

    private final RunPlan plan;
    private final Progress progress;

    TcpCoordinator(RunPlan plan, Progress progress) {
        this.plan = plan;
        this.progress = progress;
    }

    RunResult run(String impl, int runIndex) throws IOException, InterruptedException {
        Scenario s = plan.scenario;
        TcpLayout layout = TcpLayout.plan(s.connections, plan.maxPerProcess);
        boolean external = !plan.targets.isEmpty();
        RunResult result = new RunResult(impl, RunPlan.TCP, s.connections);
        result.clientProcesses = layout.clients;
        long started = System.nanoTime();
        String label = impl + "/tcp";
        List<ChildProcess> servers = new ArrayList<>();
        List<ChildProcess> clients = new ArrayList<>();
        boolean completed = false;
        try {
            List<String> echo = new ArrayList<>();
            List<String> http = new ArrayList<>();
            if (external) {
                echo.addAll(plan.targets);
                http.addAll(plan.targetMetrics);
                result.serverProcesses = echo.size();
                result.notes.add("servers were already running (--target): their settings must match this scenario");
            } else {
                startServers(impl, runIndex, layout, servers, echo, http, label);
                result.serverProcesses = servers.size();
            }
            List<ServerProbe> probes = new ArrayList<>();
            for (String h : http) {
                probes.add(new ServerProbe(h));
            }
            if (probes.isEmpty()) {
                result.notes.add("no server HTTP endpoints: heap and CPU were not measured");
            }
            if (!probes.isEmpty()) {
                Map<String, Double> first = probes.get(0).metrics();
                if (external) {
                    requireMatchingTarget(impl, serverInfo(first));
                }
                result.heapBeforeBytes = gc(probes, null);
                result.serverTransport = serverTransport(first);
            }
            List<Map<String, Double>> cpu0 = metrics(probes);

            long deadline = System.nanoTime() + plan.connectBudgetNanos() + s.durationNanos + 300 * SECOND;
            for (int c = 0; c < layout.clients; c++) {
                Map<String, Object> spec = ClientWorker.spec(s, impl, layout.clientFrom(c), layout.clientTo(c), echo,
                        external ? List.of() : layout.sources(runIndex, c), plan.clientThreads,
                        plan.connectRate / layout.clients, deadline);
                List<String> cmd = new ArrayList<>();
                cmd.add(RunPlan.javaCommand());
                cmd.add("-Xmx" + plan.clientHeap);
                cmd.addAll(plan.jvmArgs);
                cmd.add("-cp");
                cmd.add(plan.loadTestJar.toString());
                cmd.add(ClientWorker.class.getName());
                cmd.add(Json.write(spec));
                clients.add(ChildProcess.start(impl + "-client-" + c, cmd,
                        plan.out.resolve("logs").resolve(impl + "-tcp-client-" + c + ".log")));
            }
            awaitConnected(label, clients, servers, started);
            List<Map<String, Double>> cpu1 = metrics(probes);
            if (!probes.isEmpty()) {
                long gcStart = System.nanoTime();
                progress.show(label + ": measuring the servers' heap (full GC)...");
                long[] connections = new long[1];
                result.heapAfterBytes = gc(probes, connections);
                result.connectionsAtHeap = connections[0];
                progress.println(String.format(Locale.ROOT, "%s: heap measured in %s: %s bytes per connection", label,
                        Progress.seconds((System.nanoTime() - gcStart) / 1e9), Report.num(result.heapBytesPerConnection())));
            }
            List<Map<String, Double>> cpu2 = metrics(probes);
            if (!probes.isEmpty()) {
                long closedBefore = (long) sum(cpu2, m -> idleCloses(m));
                long pingsBefore = (long) sum(cpu2, m -> ServerProbe.value(m, "demo_pings_sent_total"));
                if (closedBefore > 0 || pingsBefore > 0) {
                    result.notes.add("the heap was measured after " + pingsBefore + " pings and " + closedBefore
                            + " idle closes: the connect phase and the GCs outlasted the first ping interval");
                }
            }
            long start = System.nanoTime() + SECOND / 2;
            long end = start + s.durationNanos;
            for (ChildProcess c : clients) {
                c.send("run " + start + " " + end);
            }
            ParentLink.sleepUntil(start);
            List<Long> pids = pids(servers, clients);
            double machine0 = MachineCpu.machineBusySeconds();
            double ours0 = MachineCpu.processSeconds(pids);
            followRun(label, clients, servers, start, end);
            ParentLink.sleepUntil(end);
            result.otherCpu(MachineCpu.machineBusySeconds() - machine0, MachineCpu.processSeconds(pids) - ours0,
                    s.durationNanos / 1e9);
            List<Map<String, Double>> cpu3 = metrics(probes);
            for (ChildProcess c : clients) {
                Map<String, Object> m = c.awaitMessage("result", 60 * SECOND);
                result.client.add(ClientResult.fromJson(Json.getObject(m, "result")));
            }
            if (!probes.isEmpty()) {
                result.serverCpuSeconds = sum(cpu3, TcpCoordinator::cpu) - sum(cpu2, TcpCoordinator::cpu);
                result.connectServerCpuSeconds = sum(cpu1, TcpCoordinator::cpu) - sum(cpu0, TcpCoordinator::cpu);
                if (Scenario.HEARTBEAT.equals(impl)) {
                    result.workerCpuSeconds = sum(cpu3, TcpCoordinator::workerCpu) - sum(cpu2, TcpCoordinator::workerCpu);
                }
                result.serverCounters.put(RunResult.GC_SECONDS, delta(cpu3, cpu2, "jvm_gc_collection_seconds_total"));
                if (Scenario.HEARTBEAT.equals(impl)) {
                    result.serverCounters.put(RunResult.WAKEUPS, delta(cpu3, cpu2, "heartbeat_wakeups_total"));
                    result.serverCounters.put(RunResult.CYCLES, delta(cpu3, cpu2, "heartbeat_cycles_total"));
                    result.serverCounters.put(RunResult.EXPIRATIONS, delta(cpu3, cpu2, "heartbeat_expirations_total"));
                    result.serverCounters.put(RunResult.REARMS, delta(cpu3, cpu2, "heartbeat_rearms_total"));
                    result.serverCounters.put(RunResult.STALL_RECHECKS,
                            delta(cpu3, cpu2, "heartbeat_stall_rechecks_total"));
                }
                result.pingsSent = (long) sum(cpu3, m -> ServerProbe.value(m, "demo_pings_sent_total"));
                result.idleCloses = (long) sum(cpu3, m -> idleCloses(m));
            }
            for (ChildProcess c : clients) {
                c.send("exit");
            }
            completed = true;
        } finally {
            for (ChildProcess c : clients) {
                if (completed) {
                    c.awaitExit(15 * SECOND); // closing its connections, then exiting
                } else {
                    c.stop(2 * SECOND);
                }
            }
            for (ChildProcess srv : servers) {
                srv.stop(8 * SECOND);
            }
        }
        result.wallSeconds = (System.nanoTime() - started) / 1e9;
        return result;
    }

    /** This process and its children. */
    static List<Long> pids(List<ChildProcess> a, List<ChildProcess> b) {
        List<Long> pids = new ArrayList<>();
        pids.add(ProcessHandle.current().pid());
        for (ChildProcess c : a) {
            pids.add(c.pid());
        }
        for (ChildProcess c : b) {
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
            cmd.addAll(List.of(plan.scenario.serverFlags()));
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

    private void awaitConnected(String label, List<ChildProcess> clients, List<ChildProcess> servers, long started)
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
                Map<String, Object> m;
                while ((m = c.messages().peek()) != null && !"result".equals(m.get("type"))) {
                    c.messages().poll();
                    if ("connected".equals(m.get("type"))) {
                        done.put(c, Boolean.TRUE);
                    } else if ("error".equals(m.get("type"))) {
                        throw c.failure("failed: " + m.get("message"));
                    }
                }
                c.requireAlive();
            }
            for (ChildProcess srv : servers) {
                srv.requireAlive();
            }
            long up = total(clients, "connected");
            long failed = total(clients, "failed");
            double elapsed = (System.nanoTime() - phaseStart) / 1e9;
            double rate = up / Math.max(elapsed, 1e-3);
            progress.show(String.format(Locale.ROOT, "%s connecting: %s / %s up, %s failed, %s/s, ETA %s",
                    label, Progress.count(up), Progress.count(n), Progress.count(failed), Progress.count((long) rate),
                    Progress.seconds(rate > 0 ? (n - up - failed) / rate : Double.NaN)));
            Thread.sleep(250);
        }
        long up = total(clients, "connected");
        progress.println(String.format(Locale.ROOT, "%s: %s / %s connections up, %s failed, in %s", label,
                Progress.count(up), Progress.count(n), Progress.count(total(clients, "failed")),
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
            progress.show(runLine(label, clients, start, end));
            Thread.sleep(Math.max(1, Math.min(500, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))));
        }
        progress.println(runLine(label, clients, start, end).replace(" running ", " ran "));
    }

    private String runLine(String label, List<ChildProcess> clients, long start, long end) {
        double elapsed = Math.max(0, (System.nanoTime() - start) / 1e9);
        return String.format(Locale.ROOT, "%s running %s / %s: %s closed by the server, %s premature, "
                + "%s unexpected, %s echoes", label, Progress.seconds(Math.min(elapsed, (end - start) / 1e9)),
                Progress.seconds((end - start) / 1e9), Progress.count(total(clients, "closed")),
                Progress.count(total(clients, "premature")), Progress.count(total(clients, "unexpected")),
                Progress.count(total(clients, "echoes")));
    }

    private static long total(List<ChildProcess> clients, String key) {
        long sum = 0;
        for (ChildProcess c : clients) {
            Map<String, Object> p = c.lastProgress();
            if (p != null && p.get(key) instanceof Number) {
                sum += ((Number) p.get(key)).longValue();
            }
        }
        return sum;
    }

    /**
     * Runs a full GC on every server at once; returns the heap used summed, and adds the connections
     * to {@code connections[0]}.
     */
    private static long gc(List<ServerProbe> probes, long[] connections) throws IOException, InterruptedException {
        List<CompletableFuture<ServerProbe.Heap>> all = new ArrayList<>();
        // One thread per server: the requests block while the servers collect.
        ExecutorService pool = Executors.newFixedThreadPool(probes.size());
        for (ServerProbe p : probes) {
            all.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return p.gc();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }, pool));
        }
        pool.shutdown();
        long heap = 0;
        for (CompletableFuture<ServerProbe.Heap> f : all) {
            ServerProbe.Heap h;
            try {
                h = f.get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UncheckedIOException) {
                    throw ((UncheckedIOException) e.getCause()).getCause();
                }
                throw new IOException("POST /debug/gc failed", e.getCause());
            }
            heap += h.usedBytes;
            if (connections != null) {
                connections[0] += h.connections;
            }
        }
        return heap;
    }

    private static List<Map<String, Double>> metrics(List<ServerProbe> probes) throws IOException, InterruptedException {
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

    private static double cpu(Map<String, Double> m) {
        return ServerProbe.value(m, "process_cpu_seconds_total");
    }

    private static double workerCpu(Map<String, Double> m) {
        return ServerProbe.value(m, "heartbeat_worker_cpu_seconds_total");
    }

    /** Connections the server closed for idleness or unanswered pings (not for over-long lines). */
    static long idleCloses(Map<String, Double> m) {
        long sum = 0;
        for (Map.Entry<String, Double> e : m.entrySet()) {
            if (e.getKey().startsWith("demo_connections_closed_total{") && !e.getKey().contains("max_line")) {
                sum += e.getValue().longValue();
            }
        }
        return sum;
    }

    private static String serverTransport(Map<String, Double> m) {
        for (String key : m.keySet()) {
            if (key.startsWith("demo_server_info{")) {
                int i = key.indexOf("transport=\"");
                if (i >= 0) {
                    int j = key.indexOf('"', i + 11);
                    return key.substring(i + 11, j);
                }
            }
        }
        return "";
    }

    private void requireMatchingTarget(String impl, Map<String, String> info) {
        String policy = plan.scenario.policy.toString();
        if (!impl.equals(info.get("idle_impl"))) {
            throw new IllegalArgumentException("--target servers run idle-impl " + info.get("idle_impl") + ", not "
                    + impl + ": give --compare " + info.get("idle_impl"));
        }
        if (!Scenario.NONE.equals(impl) && !policy.equals(info.get("policy"))) {
            throw new IllegalArgumentException("--target servers run policy " + info.get("policy") + ", not " + policy
                    + ": give --policy " + info.get("policy") + " and the servers' timeouts");
        }
    }

    /** The server settings as labels, for a check that running targets match the scenario. */
    static Map<String, String> serverInfo(Map<String, Double> m) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (String key : m.keySet()) {
            if (key.startsWith("demo_server_info{")) {
                for (String kv : key.substring(key.indexOf('{') + 1, key.lastIndexOf('}')).split(",")) {
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
