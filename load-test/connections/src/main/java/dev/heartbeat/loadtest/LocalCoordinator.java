package dev.heartbeat.loadtest;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one implementation on the in-JVM local transport: one fresh JVM ({@link LocalWorker}) per
 * implementation, with the same flags for each, followed until it reports its result and stopped
 * whatever happens. Runs on the coordinator's one thread.
 */
final class LocalCoordinator {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private final RunPlan plan;
    private final Progress progress;

    LocalCoordinator(RunPlan plan, Progress progress) {
        this.plan = plan;
        this.progress = progress;
    }

    RunResult run(String impl) throws IOException, InterruptedException {
        Scenario s = plan.scenario;
        String label = impl + "/local";
        RunResult result = new RunResult(impl, RunPlan.LOCAL, s.connections);
        result.serverProcesses = 1;
        result.clientProcesses = 1;
        result.serverTransport = RunPlan.LOCAL;
        long started = System.nanoTime();
        long deadline = started + plan.connectBudgetNanos() + s.durationNanos + 300 * SECOND;
        Map<String, Object> spec = LocalWorker.spec(s, impl, plan.serverThreads, plan.clientThreads, plan.connectRate,
                deadline);
        List<String> cmd = new ArrayList<>();
        cmd.add(RunPlan.javaCommand());
        cmd.add("-Xmx" + plan.serverHeap);
        cmd.addAll(plan.jvmArgs);
        cmd.add("-cp");
        cmd.add(plan.loadTestJar.toString());
        cmd.add(LocalWorker.class.getName());
        cmd.add(Json.write(spec));
        ChildProcess child = ChildProcess.start(impl + "-local", cmd,
                plan.out.resolve("logs").resolve(impl + "-local.log"));
        try {
            progress.println(label + ": one JVM (-Xmx" + plan.serverHeap + "), " + plan.serverThreads
                    + " server threads, " + plan.clientThreads + " client threads");
            long phaseStart = System.nanoTime();
            long connectDeadline = phaseStart + plan.connectBudgetNanos();
            Map<String, Object> m;
            while ((m = child.messages().poll(250, TimeUnit.MILLISECONDS)) == null
                    || !"connected".equals(m.get("type"))) {
                failOnError(child, m);
                if (System.nanoTime() - connectDeadline > 0) {
                    throw child.failure("did not have its connections up within "
                            + Progress.seconds(plan.connectBudgetNanos() / 1e9));
                }
                long up = value(child, "connected");
                double rate = up / Math.max(1e-3, (System.nanoTime() - phaseStart) / 1e9);
                progress.show(String.format(Locale.ROOT, "%s connecting: %s / %s up, %s failed, %s/s, ETA %s", label,
                        Progress.count(up), Progress.count(s.connections), Progress.count(value(child, "failed")),
                        Progress.count((long) rate), Progress.seconds(rate > 0 ? (s.connections - up) / rate
                                : Double.NaN)));
            }
            progress.println(String.format(Locale.ROOT, "%s: %s / %s connections up, %s failed, in %s; measuring heap",
                    label, Progress.count(Json.getLong(m, "connected")), Progress.count(s.connections),
                    Progress.count(Json.getLong(m, "failed")), Progress.seconds((System.nanoTime() - phaseStart) / 1e9)));
            Map<String, Object> heap = child.awaitMessage("heap", 300 * SECOND);
            progress.println(label + ": heap measured: " + Report.num(Json.getDouble(heap, "bytes_per_connection"))
                    + " bytes per connection (both ends of each in-JVM pair)");
            Map<String, Object> running = child.awaitMessage("running", 300 * SECOND);
            long start = Json.getLong(running, "start_ns");
            long end = Json.getLong(running, "end_ns");
            List<Long> pids = TcpCoordinator.pids(List.of(child), List.of());
            ParentLink.sleepUntil(start);
            double machine0 = MachineCpu.machineBusySeconds();
            double ours0 = MachineCpu.processSeconds(pids);
            boolean windowEnded = false;
            while ((m = child.messages().poll(windowEnded ? 500
                    : Math.max(1, Math.min(500, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))),
                    TimeUnit.MILLISECONDS)) == null || !"result".equals(m.get("type"))) {
                if (!windowEnded && System.nanoTime() - end >= 0) {
                    windowEnded = true;
                    result.otherCpu(MachineCpu.machineBusySeconds() - machine0,
                            MachineCpu.processSeconds(pids) - ours0, (end - start) / 1e9);
                }
                failOnError(child, m);
                if (System.nanoTime() - end > 120 * SECOND) {
                    throw child.failure("sent no result within 2 minutes after the run ended");
                }
                progress.show(String.format(Locale.ROOT, "%s running %s / %s: %s closed by the server, %s premature, "
                        + "%s unexpected, %s echoes", label,
                        Progress.seconds(Math.min(end - start, Math.max(0, System.nanoTime() - start)) / 1e9),
                        Progress.seconds((end - start) / 1e9), Progress.count(value(child, "closed")),
                        Progress.count(value(child, "premature")), Progress.count(value(child, "unexpected")),
                        Progress.count(value(child, "echoes"))));
            }
            progress.println(String.format(Locale.ROOT, "%s ran %s: %s closed by the server, %s premature, %s unexpected",
                    label, Progress.seconds((end - start) / 1e9), Progress.count(value(child, "closed")),
                    Progress.count(value(child, "premature")), Progress.count(value(child, "unexpected"))));
            result.client = ClientResult.fromJson(Json.getObject(m, "result"));
            Map<String, Object> server = Json.getObject(m, "server");
            result.heapBeforeBytes = Json.getLong(server, "heap_before_bytes");
            result.heapAfterBytes = Json.getLong(server, "heap_after_bytes");
            result.connectionsAtHeap = Json.getLong(server, "connections_at_heap");
            result.serverCpuSeconds = Json.getLong(server, "server_cpu_ns") / 1e9;
            if (server.get("worker_cpu_ns") instanceof Number) {
                result.workerCpuSeconds = Json.getLong(server, "worker_cpu_ns") / 1e9;
            }
            result.processCpuSeconds = Json.getLong(server, "process_cpu_ns") / 1e9;
            result.connectServerCpuSeconds = Json.getLong(server, "connect_server_cpu_ns") / 1e9;
            Json.getObject(server, "counters").forEach((k, v) -> result.serverCounters.put(k, ((Number) v).doubleValue()));
            result.pingsSent = Json.getLong(server, "pings_sent");
            result.idleCloses = Json.getLong(server, "idle_closes");
            long closedAtHeap = Json.getLong(server, "idle_closes_at_heap");
            long pingsAtHeap = Json.getLong(server, "pings_at_heap");
            if (closedAtHeap > 0 || pingsAtHeap > 0) {
                result.notes.add("the heap was measured after " + pingsAtHeap + " pings and " + closedAtHeap
                        + " idle closes: the connect phase and the GC outlasted the first ping interval");
            }
            result.notes.add("local transport: heap per connection covers both ends of each in-JVM channel pair, "
                    + "and server CPU is the server's event loops plus Heartbeat's worker (GC and JIT excluded)");
            child.awaitExit(60 * SECOND);
        } finally {
            child.stop(5 * SECOND);
        }
        result.wallSeconds = (System.nanoTime() - started) / 1e9;
        return result;
    }

    private static void failOnError(ChildProcess child, Map<String, Object> m) {
        if (m != null && "error".equals(m.get("type"))) {
            throw child.failure("failed: " + m.get("message"));
        }
        if (m == null) {
            child.requireAlive();
        }
    }

    private static long value(ChildProcess child, String key) {
        Map<String, Object> p = child.lastProgress();
        return p != null && p.get(key) instanceof Number ? ((Number) p.get(key)).longValue() : 0;
    }
}
