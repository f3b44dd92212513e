/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import javax.management.JMException;
import javax.management.ObjectName;

import dev.heartbeat.core.TimerStats;
import dev.heartbeat.demo.EchoPipeline;
import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.HeartbeatStats;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * One implementation's run on Netty's in-JVM local transport: the demo server's own pipeline
 * ({@link EchoPipeline}) behind a {@code LocalServerChannel}, and the same client as the TCP runs,
 * in one JVM with no sockets and no file descriptors. That isolates Heartbeat's own cost and lets a
 * million connections fit one process.
 *
 * <p>Measured in-process: the live heap (a class histogram after a full GC) before and after
 * connecting (the difference covers both ends of each in-JVM pair; compare implementations with
 * each other or with {@code none}); CPU time of the server's threads ({@code server-*}) and of Heartbeat's worker over
 * the run window. Started by the coordinator as
 * {@code java -Xmx... -cp load-test.jar dev.heartbeat.loadtest.LocalWorker SPEC_JSON},
 * one fresh JVM per implementation; it reports through {@link ParentLink}: {@code progress},
 * {@code connected}, {@code running}, {@code result}.
 */
public final class LocalWorker {

    private LocalWorker() {
    }

    /**
     * What the coordinator passes as the one argument, in JSON: the scenario, the implementation, the
     * server's and the client's event loop threads, the connect rate; the process ends by itself at
     * {@code deadlineNs}.
     */
    record Spec(Scenario.Settings scenario, String impl, int serverThreads, int clientThreads, double connectRate,
            long deadlineNs) {
    }

    public static void main(String[] args) {
        ParentLink.runChild("LocalWorker", args, Spec.class, Spec::deadlineNs, LocalWorker::run);
    }

    static ServerConfig serverConfig(Scenario s, String impl, int serverThreads) {
        return serverConfigBuilder(s, impl, serverThreads).metricsDisabled().port(0).build();
    }

    /** The settings of a server of {@code impl} for this scenario, as a builder; host and ports are the caller's. */
    static ServerConfig.Builder serverConfigBuilder(Scenario s, String impl, int serverThreads) {
        ServerConfig.Builder b = ServerConfig.builder()
                .idleImpl(ServerConfig.IdleImpl.valueOf(impl.toUpperCase(Locale.ROOT)))
                .protocol(s.protocol)
                .policy(s.serverPolicy())
                .idleTimeout(Duration.ofNanos(s.serverIdleTimeoutNanos()))
                .pingInterval(Duration.ofNanos(s.pingIntervalNanos))
                .pingTimeout(Duration.ofNanos(s.pingTimeoutNanos))
                .maxMissedPings(s.maxMissedPings)
                .maxLine(s.maxLine)
                .workerThreads(serverThreads)
                .workerHost(s.workerHost)
                .lazyHandOffs(s.lazyHandOffs)
                .policePings(s.peerPingRules())
                .lifecycle(s.lifecycle(impl));
        if (s.loopLagNanos > 0) {
            b.loopLag(Duration.ofNanos(s.loopLagNanos));
        }
        if (s.tickNanos > 0) {
            b.tick(Duration.ofNanos(s.tickNanos));
        }
        return b;
    }

    private static void run(Spec spec, ParentLink link) throws Exception {
        Scenario scenario = spec.scenario().scenario();
        EventLoopGroup boss = newGroup(1, "server-boss");
        EventLoopGroup workers = newGroup(spec.serverThreads(), "server-loop");
        ServerConfig config = serverConfig(scenario, spec.impl(), spec.serverThreads());
        EchoPipeline echo = EchoPipeline.create(config, workers.next());
        if (config.loopLag() != null) {
            echo.loopLag().start(workers, config.loopLag());
        }
        EventLoopGroup clients = newGroup(spec.clientThreads(), "client-loop");
        LocalAddress address = new LocalAddress("load-test-" + ProcessHandle.current().pid());
        try {
            Channel server = new ServerBootstrap().group(boss, workers).channel(LocalServerChannel.class)
                    .childHandler(echo.initializer()).bind(address).sync().channel();
            ClientDriver driver = new ClientDriver(scenario, spec.impl(), 0, scenario.connections, clients,
                    InOrderLocalChannel.class, i -> address, null, false);
            new Phases(spec, link, echo, driver).run();
            driver.closeAll(TimeUnit.SECONDS.toNanos(10));
            server.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        } finally {
            echo.close(Duration.ofSeconds(2)); // first: its worker's host loop is one of the workers
            clients.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /** One run's phases, in order: connect, measure the heap, run the window, collect. */
    private static final class Phases {
        private final Spec spec;
        private final ParentLink link;
        private final EchoPipeline echo;
        private final ClientDriver driver;
        private final AtomicReference<String> phase = new AtomicReference<>("connecting");
        private long heapBefore;
        private long heapAfter;
        private long connectionsAtHeap;
        private long idleClosesAtHeap;
        private long pingsAtHeap;
        private CpuSample beforeConnect;
        private CpuSample afterConnect;
        private CpuSample windowStart;
        private CpuSample windowEnd;
        private Map<String, Double> metricsAtEnd;
        private Map<String, Double> loopLagAtStart; // null: not measured
        private Map<String, Double> loopLagInWindow;
        private Long drainRequested; // null: no drain

        Phases(Spec spec, ParentLink link, EchoPipeline echo, ClientDriver driver) {
            this.spec = spec;
            this.link = link;
            this.echo = echo;
            this.driver = driver;
        }

        void run() throws Exception {
            link.sendEvery(500, () -> driver.progress().update(phase.get()));
            connect();
            measureHeap();
            ClientResult result = runWindow();
            link.send(new ChildMessage.Result(result, collect()));
        }

        private void connect() throws InterruptedException {
            heapBefore = heapAfterGc();
            beforeConnect = CpuSample.take(echo);
            driver.connectAll(spec.connectRate(), spec.deadlineNs());
            afterConnect = CpuSample.take(echo);
            link.send(new ChildMessage.Connected(driver.progress().connected.sum(), driver.progress().failed.sum(),
                    RunPlan.LOCAL));
            phase.set("connected");
        }

        private void measureHeap() {
            heapAfter = heapAfterGc();
            connectionsAtHeap = echo.counters().openConnections();
            idleClosesAtHeap = echo.idleCloses();
            pingsAtHeap = echo.pingsSent();
            link.send(new ChildMessage.HeapMeasured(connectionsAtHeap == 0 ? 0.0
                    : (heapAfter - heapBefore) / (double) connectionsAtHeap));
        }

        private ClientResult runWindow() throws Exception {
            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
            long end = start + spec.scenario().durationNs();
            driver.startRun(start, end);
            link.send(new ChildMessage.Running(start, end));
            phase.set("running");
            ParentLink.sleepUntil(start);
            windowStart = CpuSample.take(echo);
            loopLagAtStart = loopLag();
            Scenario s = spec.scenario().scenario();
            if (s.drains()) { // never before its moment: the clients judge a DRAIN goodbye before it premature
                ParentLink.sleepUntil(start + s.drainDelayNanos());
                drainRequested = (long) echo.monitor().drain(Duration.ofNanos(s.drainNanos)).get(10, TimeUnit.SECONDS);
            }
            ParentLink.sleepUntil(end);
            windowEnd = CpuSample.take(echo);
            Map<String, Double> lagAtEnd = loopLag();
            loopLagInWindow = lagAtEnd == null ? null : ServerLoopLag.window(loopLagAtStart, lagAtEnd);
            metricsAtEnd = ServerMetrics.of(echo);
            ClientResult result = driver.finish(TimeUnit.SECONDS.toNanos(30));
            phase.set("finished");
            return result;
        }

        /** The loop lag histogram's samples now, or null without {@code --loop-lag}. */
        private Map<String, Double> loopLag() {
            return echo.loopLag().started() ? ServerProbe.parseMetrics(echo.loopLag().exposition()) : null;
        }

        private ChildMessage.LocalServer collect() {
            CpuSample a = windowStart;
            CpuSample b = windowEnd;
            Map<String, Double> counters = new LinkedHashMap<>();
            counters.put(RunResult.GC_SECONDS, (b.gcMillis - a.gcMillis) / 1e3);
            if (a.timer != null && b.timer != null) {
                counters.put(RunResult.WAKEUPS, (double) (b.timer.wakeups() - a.timer.wakeups()));
                counters.put(RunResult.CYCLES, (double) (b.timer.cycles() - a.timer.cycles()));
                counters.put(RunResult.EXPIRATIONS, (double) (b.timer.expired() - a.timer.expired()));
                counters.put(RunResult.REARMS, (double) (b.timer.rearmed() - a.timer.rearmed()));
                counters.put(RunResult.STALL_RECHECKS, (double) (b.stallRechecks - a.stallRechecks));
            }
            return new ChildMessage.LocalServer(heapBefore, heapAfter, connectionsAtHeap, idleClosesAtHeap,
                    pingsAtHeap, b.serverCpu(a), echo.monitor() == null ? null : b.worker - a.worker,
                    b.process - a.process, afterConnect.serverCpu(beforeConnect), counters, echo.pingsSent(),
                    echo.idleCloses(), echo.counters().openConnections(), metricsAtEnd, drainRequested,
                    loopLagInWindow);
        }
    }

    // DefaultEventLoopGroup is deprecated in Netty 4.2 (in favour of MultiThreadIoEventLoopGroup with
    // LocalIoHandler, which 4.1 lacks); the load test builds against both.
    @SuppressWarnings("deprecation")
    private static EventLoopGroup newGroup(int threads, String name) {
        return new DefaultEventLoopGroup(threads, new DefaultThreadFactory(name, true));
    }

    /**
     * The live set: the bytes of every object still reachable, as the JVM's class histogram
     * ({@code jcmd PID GC.class_histogram}, run in-process) totals them after a full collection. Exact
     * whatever the collector; "heap used after a GC" is not (ZGC, for one, counts whole pages it did
     * not compact). Falls back to that if the diagnostic command is not available.
     */
    static long heapAfterGc() {
        try {
            Object out = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            return histogramTotalBytes(String.valueOf(out));
        } catch (JMException | RuntimeException e) {
            System.err.println("class histogram unavailable (" + e + "): heap used after System.gc() instead");
            System.gc();
            System.gc();
            return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        }
    }

    /** The bytes of the {@code Total} line of a class histogram. */
    static long histogramTotalBytes(String histogram) {
        for (String line : histogram.split("\n", -1)) {
            String l = line.trim();
            if (l.startsWith("Total")) {
                String[] f = l.split("\\s+", -1);
                return Long.parseLong(f[f.length - 1]);
            }
        }
        throw new IllegalArgumentException("no Total line in the class histogram: " + JsonCodec.abbreviate(histogram));
    }

    /**
     * CPU time so far of the server's threads, Heartbeat's worker and the whole process (nanoseconds),
     * GC time (milliseconds) and the worker's counters.
     */
    static final class CpuSample {
        final long serverThreads;
        /** The worker's own count: its thread and the cycles a server loop ran for it ({@code workerCpuNanos}). */
        final long worker;
        /** Of {@link #worker}, the cycles a server loop ran for it: already in {@link #serverThreads}. */
        final long hosted;
        final long process;
        final long gcMillis;
        final TimerStats timer; // null without Heartbeat
        final long stallRechecks;

        CpuSample(long serverThreads, long worker, long hosted, long process, long gcMillis, HeartbeatStats stats) {
            this.serverThreads = serverThreads;
            this.worker = worker;
            this.hosted = hosted;
            this.process = process;
            this.gcMillis = gcMillis;
            this.timer = stats == null ? null : stats.timer();
            this.stallRechecks = stats == null ? 0 : stats.stallRechecks();
        }

        /**
         * CPU of the server's threads and Heartbeat's worker thread since {@code earlier}, in
         * nanoseconds. The cycles the worker's host loop ran are in that loop's CPU, and counted there
         * only, not a second time in the worker's.
         */
        long serverCpu(CpuSample earlier) {
            return serverThreads - earlier.serverThreads + (worker - hosted) - (earlier.worker - earlier.hosted);
        }

        static CpuSample take(EchoPipeline echo) {
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            long server = 0;
            for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
                if (info != null && info.getThreadName().startsWith("server-")) {
                    long t = threads.getThreadCpuTime(info.getThreadId());
                    if (t > 0) {
                        server += t;
                    }
                }
            }
            HeartbeatStats stats = echo.monitor() == null ? null : echo.monitor().stats();
            long worker = stats == null ? 0 : Math.max(0, stats.workerCpuNanos());
            long hosted = worker == 0 ? 0 : stats.timer().hostedNanos(); // in workerCpuNanos when it is measured
            long process = 0;
            OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean) {
                process = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
            }
            long gc = 0;
            for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
                gc += Math.max(0, bean.getCollectionTime());
            }
            return new CpuSample(server, worker, hosted, process, gc, stats);
        }
    }
}
