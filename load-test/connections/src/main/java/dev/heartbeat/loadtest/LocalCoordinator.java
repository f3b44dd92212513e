/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.ToLongFunction;

/**
 * Runs one implementation on the in-JVM local transport: one fresh JVM ({@link LocalWorker}) per
 * implementation, with the same flags for each, followed until it reports its result and stopped
 * whatever happens. Phases: start the JVM, connect, heap measured, run, collect. Runs on the
 * coordinator's one thread.
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
        RunResult result = new RunResult(impl, RunPlan.LOCAL, plan.scenario.connections);
        result.serverProcesses = 1;
        result.clientProcesses = 1;
        result.serverTransport = RunPlan.LOCAL;
        long started = System.nanoTime();
        String label = impl + "/local";
        ChildProcess child = start(impl, started);
        try {
            connect(label, child);
            ChildMessage.HeapMeasured heap = child.awaitMessage(ChildMessage.HeapMeasured.class, 300 * SECOND);
            progress.println(label + ": heap measured: " + Report.num(heap.bytesPerConnection())
                    + " bytes per connection (both ends of each in-JVM pair)");
            ChildMessage.Result done = runWindow(label, child, result);
            collect(done, result);
            child.awaitExit(60 * SECOND);
        } finally {
            child.stop(5 * SECOND);
        }
        result.wallSeconds = (System.nanoTime() - started) / 1e9;
        return result;
    }

    private ChildProcess start(String impl, long started) throws IOException {
        long deadline = started + plan.connectBudgetNanos() + plan.scenario.durationNanos + 300 * SECOND;
        LocalWorker.Spec spec = new LocalWorker.Spec(plan.scenario.settings(), impl, plan.serverThreads,
                plan.clientThreads, plan.connectRate, deadline);
        List<String> cmd = new ArrayList<>(plan.childJvm(plan.serverHeap));
        cmd.add(LocalWorker.class.getName());
        cmd.add(JsonCodec.write(spec));
        ChildProcess child = ChildProcess.start(impl + "-local", cmd,
                plan.out.resolve("logs").resolve(impl + "-local.log"));
        progress.println(impl + "/local: one JVM (-Xmx" + plan.serverHeap + "), " + plan.serverThreads
                + " server threads, " + plan.clientThreads + " client threads");
        return child;
    }

    private void connect(String label, ChildProcess child) throws InterruptedException {
        int n = plan.scenario.connections;
        long phaseStart = System.nanoTime();
        long connectDeadline = phaseStart + plan.connectBudgetNanos();
        ChildMessage m;
        while (!((m = child.messages().poll(250, TimeUnit.MILLISECONDS)) instanceof ChildMessage.Connected)) {
            failOnError(child, m);
            if (System.nanoTime() - connectDeadline > 0) {
                throw child.failure("did not have its connections up within "
                        + Progress.seconds(plan.connectBudgetNanos() / 1e9));
            }
            long up = value(child, ChildMessage.ProgressUpdate::connected);
            double rate = up / Math.max(1e-3, (System.nanoTime() - phaseStart) / 1e9);
            progress.show(String.format(Locale.ROOT, "%s connecting: %s / %s up, %s failed, %s/s, ETA %s", label,
                    Progress.count(up), Progress.count(n),
                    Progress.count(value(child, ChildMessage.ProgressUpdate::failed)), Progress.count((long) rate),
                    Progress.seconds(rate > 0 ? (n - up) / rate : Double.NaN)));
        }
        ChildMessage.Connected c = (ChildMessage.Connected) m;
        progress.println(String.format(Locale.ROOT, "%s: %s / %s connections up, %s failed, in %s; measuring heap",
                label, Progress.count(c.connected()), Progress.count(n), Progress.count(c.failed()),
                Progress.seconds((System.nanoTime() - phaseStart) / 1e9)));
    }

    /** Follows the run window, measuring the rest of the machine's CPU over it, until the result comes. */
    private ChildMessage.Result runWindow(String label, ChildProcess child, RunResult result)
            throws InterruptedException {
        ChildMessage.Running running = child.awaitMessage(ChildMessage.Running.class, 300 * SECOND);
        long start = running.startNs();
        long end = running.endNs();
        result.windowSeconds = (end - start) / 1e9;
        CpuSplit.Pids pids = new CpuSplit.Pids(List.of(child.pid()), List.of(), ProcessHandle.current().pid(),
                ChildProcess.started());
        ParentLink.sleepUntil(start);
        CpuSplit.Snapshot cpu0 = CpuSplit.Snapshot.take(pids);
        boolean windowEnded = false;
        ChildMessage m;
        while (!((m = child.messages().poll(windowEnded ? 500
                : Math.max(1, Math.min(500, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()))),
                TimeUnit.MILLISECONDS)) instanceof ChildMessage.Result)) {
            if (!windowEnded && System.nanoTime() - end >= 0) {
                windowEnded = true;
                result.cpu(CpuSplit.between(cpu0, CpuSplit.Snapshot.take(pids), pids));
            }
            failOnError(child, m);
            if (System.nanoTime() - end > 120 * SECOND) {
                throw child.failure("sent no result within 2 minutes after the run ended");
            }
            progress.show(Progress.runLine(label, " running ", start, end, child.lastProgress()));
        }
        progress.println(Progress.runLine(label, " ran ", start, end, child.lastProgress()));
        return (ChildMessage.Result) m;
    }

    private static void collect(ChildMessage.Result done, RunResult result) {
        ChildMessage.LocalServer server = done.server();
        result.client = done.result();
        result.heapBeforeBytes = server.heapBeforeBytes();
        result.heapAfterBytes = server.heapAfterBytes();
        result.connectionsAtHeap = server.connectionsAtHeap();
        result.serverCpuSeconds = server.serverCpuNs() / 1e9;
        if (server.workerCpuNs() != null) {
            result.workerCpuSeconds = server.workerCpuNs() / 1e9;
        }
        result.processCpuSeconds = server.processCpuNs() / 1e9;
        result.connectServerCpuSeconds = server.connectServerCpuNs() / 1e9;
        result.serverCounters.putAll(server.counters());
        result.serverMetrics.add(server.metricsAtEnd());
        if (server.loopLagInWindow() != null) {
            result.loopLag.add(server.loopLagInWindow());
        }
        result.pingsSent = server.pingsSent();
        result.idleCloses = server.idleCloses();
        result.drainRequested = server.drainRequested();
        if (server.idleClosesAtHeap() > 0 || server.pingsAtHeap() > 0) {
            result.notes.add("the heap was measured after " + server.pingsAtHeap() + " pings and "
                    + server.idleClosesAtHeap()
                    + " idle closes: the connect phase and the GC outlasted the first ping interval");
        }
        result.notes.add("local transport: heap per connection covers both ends of each in-JVM channel pair, "
                + "and server CPU is the server's event loops plus Heartbeat's worker (GC and JIT excluded)");
    }

    private static void failOnError(ChildProcess child, ChildMessage m) {
        if (m instanceof ChildMessage.Failed) {
            throw child.failure("failed: " + ((ChildMessage.Failed) m).message());
        }
        if (m == null) {
            child.requireAlive();
        }
    }

    private static long value(ChildProcess child, ToLongFunction<ChildMessage.ProgressUpdate> field) {
        ChildMessage.ProgressUpdate p = child.lastProgress();
        return p == null ? 0 : field.applyAsLong(p);
    }
}
