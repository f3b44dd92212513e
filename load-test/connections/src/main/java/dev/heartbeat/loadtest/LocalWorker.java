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
import io.netty.channel.local.LocalChannel;
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

    static Map<String, Object> spec(Scenario scenario, String impl, int serverThreads, int clientThreads,
            double connectRate, long deadlineNanos) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario.toJson());
        m.put("impl", impl);
        m.put("server_threads", (long) serverThreads);
        m.put("client_threads", (long) clientThreads);
        m.put("connect_rate", connectRate);
        m.put("deadline_ns", deadlineNanos);
        return m;
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: LocalWorker SPEC_JSON (started by the load test, not by hand)");
            System.exit(2);
        }
        Map<String, Object> spec = Json.parseObject(args[0]);
        ParentLink link = ParentLink.start(Json.getLong(spec, "deadline_ns"));
        try {
            run(spec, link);
            System.exit(0);
        } catch (Throwable t) {
            t.printStackTrace();
            link.sendError(t);
            System.exit(1);
        }
    }

    static ServerConfig serverConfig(Scenario s, String impl, int serverThreads) {
        ServerConfig.Builder b = ServerConfig.builder()
                .idleImpl(ServerConfig.IdleImpl.valueOf(impl.toUpperCase(Locale.ROOT)))
                .policy(s.policy == Scenario.Policy.CLOSE ? ServerConfig.Policy.CLOSE : ServerConfig.Policy.PING)
                .idleTimeout(Duration.ofNanos(s.idleTimeoutNanos))
                .pingInterval(Duration.ofNanos(s.pingIntervalNanos))
                .pingTimeout(Duration.ofNanos(s.pingTimeoutNanos))
                .maxMissedPings(s.maxMissedPings)
                .metricsDisabled()
                .port(0)
                .workerThreads(serverThreads);
        if (s.tickNanos > 0) {
            b.tick(Duration.ofNanos(s.tickNanos));
        }
        return b.build();
    }

    private static void run(Map<String, Object> spec, ParentLink link) throws Exception {
        Scenario scenario = Scenario.fromJson(Json.getObject(spec, "scenario"));
        String impl = Json.getString(spec, "impl");
        int serverThreads = (int) Json.getLong(spec, "server_threads");
        int clientThreads = (int) Json.getLong(spec, "client_threads");
        double rate = Json.getDouble(spec, "connect_rate");
        long deadline = Json.getLong(spec, "deadline_ns");

        EchoPipeline echo = EchoPipeline.create(serverConfig(scenario, impl, serverThreads));
        EventLoopGroup boss = newGroup(1, "server-boss");
        EventLoopGroup workers = newGroup(serverThreads, "server-loop");
        EventLoopGroup clients = newGroup(clientThreads, "client-loop");
        LocalAddress address = new LocalAddress("load-test-" + ProcessHandle.current().pid());
        try {
            Channel server = new ServerBootstrap().group(boss, workers).channel(LocalServerChannel.class)
                    .childHandler(echo.initializer()).bind(address).sync().channel();
            ClientDriver driver = new ClientDriver(scenario, impl, 0, scenario.connections, clients, LocalChannel.class,
                    i -> address, null, false);
            AtomicReference<String> phase = new AtomicReference<>("connecting");
            link.sendEvery(500, () -> driver.progress().toJson(phase.get()));

            long heapBefore = heapAfterGc();
            CpuSample cpu0 = CpuSample.take(echo);
            driver.connectAll(rate, deadline);
            CpuSample cpu1 = CpuSample.take(echo);
            Map<String, Object> connected = new LinkedHashMap<>();
            connected.put("connected", driver.progress().connected.sum());
            connected.put("failed", driver.progress().failed.sum());
            link.send("connected", connected);
            phase.set("connected");

            long heapAfter = heapAfterGc();
            long connectionsAtHeap = echo.counters().openConnections();
            long idleClosesAtHeap = echo.idleCloses();
            long pingsAtHeap = echo.pingsSent();
            Map<String, Object> heapMeasured = new LinkedHashMap<>();
            heapMeasured.put("bytes_per_connection", connectionsAtHeap == 0 ? 0.0
                    : (heapAfter - heapBefore) / (double) connectionsAtHeap);
            link.send("heap", heapMeasured);

            long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
            long end = start + scenario.durationNanos;
            driver.startRun(start, end);
            Map<String, Object> running = new LinkedHashMap<>();
            running.put("start_ns", start);
            running.put("end_ns", end);
            link.send("running", running);
            phase.set("running");
            ParentLink.sleepUntil(start);
            CpuSample cpu2 = CpuSample.take(echo);
            ParentLink.sleepUntil(end);
            CpuSample cpu3 = CpuSample.take(echo);
            ClientResult result = driver.finish(TimeUnit.SECONDS.toNanos(30));
            phase.set("finished");

            Map<String, Object> measured = new LinkedHashMap<>();
            measured.put("heap_before_bytes", heapBefore);
            measured.put("heap_after_bytes", heapAfter);
            measured.put("connections_at_heap", connectionsAtHeap);
            measured.put("idle_closes_at_heap", idleClosesAtHeap);
            measured.put("pings_at_heap", pingsAtHeap);
            measured.put("server_cpu_ns", cpu3.serverThreads - cpu2.serverThreads + (cpu3.worker - cpu2.worker));
            measured.put("worker_cpu_ns", echo.monitor() == null ? null : cpu3.worker - cpu2.worker);
            measured.put("process_cpu_ns", cpu3.process - cpu2.process);
            measured.put("connect_server_cpu_ns", cpu1.serverThreads - cpu0.serverThreads + (cpu1.worker - cpu0.worker));
            Map<String, Object> counters = new LinkedHashMap<>();
            counters.put(RunResult.GC_SECONDS, (cpu3.gcMillis - cpu2.gcMillis) / 1e3);
            if (cpu2.timer != null && cpu3.timer != null) {
                counters.put(RunResult.WAKEUPS, (double) (cpu3.timer.wakeups() - cpu2.timer.wakeups()));
                counters.put(RunResult.CYCLES, (double) (cpu3.timer.cycles() - cpu2.timer.cycles()));
                counters.put(RunResult.EXPIRATIONS, (double) (cpu3.timer.expired() - cpu2.timer.expired()));
                counters.put(RunResult.REARMS, (double) (cpu3.timer.rearmed() - cpu2.timer.rearmed()));
                counters.put(RunResult.STALL_RECHECKS, (double) (cpu3.stallRechecks - cpu2.stallRechecks));
            }
            measured.put("counters", counters);
            measured.put("pings_sent", echo.pingsSent());
            measured.put("idle_closes", echo.idleCloses());
            measured.put("open_at_end", echo.counters().openConnections());
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("result", result.toJson());
            fields.put("server", measured);
            link.send("result", fields);

            driver.closeAll(TimeUnit.SECONDS.toNanos(10));
            server.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        } finally {
            clients.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            echo.close(Duration.ofSeconds(2));
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
        for (String line : histogram.split("\n")) {
            String l = line.trim();
            if (l.startsWith("Total")) {
                String[] f = l.split("\\s+");
                return Long.parseLong(f[f.length - 1]);
            }
        }
        throw new IllegalArgumentException("no Total line in the class histogram: " + Json.abbreviate(histogram));
    }

    /**
     * CPU time so far of the server's threads, Heartbeat's worker and the whole process (nanoseconds),
     * GC time (milliseconds) and the worker's counters.
     */
    private static final class CpuSample {
        final long serverThreads;
        final long worker;
        final long process;
        final long gcMillis;
        final TimerStats timer; // null without Heartbeat
        final long stallRechecks;

        private CpuSample(long serverThreads, long worker, long process, long gcMillis, HeartbeatStats stats) {
            this.serverThreads = serverThreads;
            this.worker = worker;
            this.process = process;
            this.gcMillis = gcMillis;
            this.timer = stats == null ? null : stats.timer();
            this.stallRechecks = stats == null ? 0 : stats.stallRechecks();
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
            long process = 0;
            OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
            if (os instanceof com.sun.management.OperatingSystemMXBean) {
                process = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
            }
            long gc = 0;
            for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
                gc += Math.max(0, bean.getCollectionTime());
            }
            return new CpuSample(server, worker, process, gc, stats);
        }
    }
}
