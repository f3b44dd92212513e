/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.lang.management.OperatingSystemMXBean;

import dev.heartbeat.core.TimerStats;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.HeartbeatStats;
import io.netty.util.Version;

/**
 * Renders the Prometheus text exposition format (version 0.0.4): every family with its
 * {@code # HELP} and {@code # TYPE} lines. The idle counters ({@code demo_idle_events_total},
 * {@code demo_pings_sent_total}, {@code demo_connections_closed_total}) have the same names for
 * every idle impl; the {@code heartbeat_*} families exist only with {@code --idle-impl heartbeat}.
 */
final class Metrics {

    /** The Content-Type of {@link #render()}. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static final double NANOS_PER_SECOND = 1e9;

    private final ServerConfig config;
    private final String transport;
    private final DemoCounters counters;
    private final HeartbeatMonitor monitor; // null unless --idle-impl heartbeat
    private final String nettyVersion;
    private final PingRtt pingRtt;

    Metrics(ServerConfig config, String transport, DemoCounters counters, HeartbeatMonitor monitor, PingRtt pingRtt) {
        this.config = config;
        this.pingRtt = pingRtt;
        this.transport = transport;
        this.counters = counters;
        this.monitor = monitor;
        Version v = Version.identify().get("netty-common");
        this.nettyVersion = v == null ? "unknown" : v.artifactVersion();
    }

    /** The whole exposition, current as of now. */
    String render() {
        Text t = new Text();
        t.family("demo_server_info", "gauge", "The demo server's settings, as labels; the value is always 1.");
        t.sample("demo_server_info", 1, "idle_impl", config.idleImpl().toString(),
                "policy", config.idleImpl() == ServerConfig.IdleImpl.NONE ? "none" : config.policy().toString(),
                "transport", transport, "netty_version", nettyVersion, "probe", config.protocol().toString());

        t.gauge("demo_connections_open", "Echo connections open now.", counters.open.sum());
        t.counter("demo_connections_accepted_total", "Echo connections accepted since start.",
                counters.accepted.sum());
        t.counter("demo_lines_echoed_total", "Lines echoed back (PING lines answered PONG excluded).",
                counters.linesEchoed.sum());
        t.counter("demo_pongs_sent_total", "PING lines answered PONG.", counters.pongsSent.sum());
        t.counter("demo_invalid_utf8_lines_total", "Lines that were not valid UTF-8 (echoed as they came).",
                counters.invalidUtf8Lines.sum());
        t.counter("demo_connection_errors_total",
                "Connections closed after an exception (I/O errors such as resets included).",
                counters.connectionErrors.sum());

        HeartbeatStats hb = monitor == null ? null : monitor.stats();
        long readerEvents = hb == null ? counters.readerIdleEvents.sum() : hb.readerIdleEvents();
        long writerEvents = hb == null ? counters.writerIdleEvents.sum() : hb.writerIdleEvents();
        long allEvents = hb == null ? counters.allIdleEvents.sum() : hb.allIdleEvents();
        t.family("demo_idle_events_total", "counter", "Idle events fired (event policy), by kind.");
        t.sample("demo_idle_events_total", readerEvents, "kind", "reader");
        t.sample("demo_idle_events_total", writerEvents, "kind", "writer");
        t.sample("demo_idle_events_total", allEvents, "kind", "all");

        t.counter("demo_pings_sent_total", "PING lines the server sent to silent clients (ping policy).",
                hb == null ? counters.pingsSent.sum() : hb.pingsSent());

        t.family("demo_connections_closed_total", "counter",
                "Connections the server closed, by reason: idleness (close policy), unanswered pings (ping policy)"
                        + " or a line over --max-line.");
        t.sample("demo_connections_closed_total", hb == null ? counters.closedReaderIdle.sum() : hb.closedReaderIdle(),
                "reason", "reader_idle");
        t.sample("demo_connections_closed_total", hb == null ? 0 : hb.closedWriterIdle(), "reason", "writer_idle");
        t.sample("demo_connections_closed_total", hb == null ? 0 : hb.closedAllIdle(), "reason", "all_idle");
        t.sample("demo_connections_closed_total",
                hb == null ? counters.closedPingTimeout.sum() : hb.closedPingTimeout(), "reason", "ping_timeout");
        t.sample("demo_connections_closed_total", counters.closedMaxLine.sum(), "reason", "max_line");

        if (hb != null) {
            heartbeat(t, hb);
        }
        jvm(t);
        return t.toString() + pingRtt.exposition();
    }

    private static void heartbeat(Text t, HeartbeatStats hb) {
        TimerStats w = hb.timer();
        t.gauge("heartbeat_channels", "Channels whose Heartbeat handler is active.", hb.channels());
        t.gauge("heartbeat_registered_entries", "Entries in the timing wheel at the end of the worker's latest cycle.",
                w.entries());
        t.gauge("heartbeat_queue_depth", "Schedule and cancel requests waiting for the worker.", w.queueDepth());
        t.gauge("heartbeat_worker_worst_lateness_seconds",
                "The largest delay seen between a deadline and the worker acting on it.",
                w.worstLatenessNanos() / NANOS_PER_SECOND);
        if (hb.workerCpuNanos() >= 0) {
            t.counter("heartbeat_worker_cpu_seconds_total", "CPU time of the Heartbeat worker thread.",
                    hb.workerCpuNanos() / NANOS_PER_SECOND);
        }
        t.counter("heartbeat_expirations_total", "Checks that came due (wheel entries expired).", w.expired());
        t.counter("heartbeat_rearms_total", "Lazy re-arms: entries moved to their next check by the worker.",
                w.rearmed());
        t.counter("heartbeat_wakeups_total", "Times the worker woke from a park.", w.wakeups());
        t.counter("heartbeat_cycles_total", "Worker duty cycles.", w.cycles());
        t.counter("heartbeat_scheduled_total", "Schedule requests applied (registrations and moves).", w.scheduled());
        t.counter("heartbeat_cancelled_total", "Cancel requests that removed an entry.", w.cancelled());
        t.counter("heartbeat_requests_rejected_total", "Requests refused because the worker was closed.",
                w.rejected());
        t.counter("heartbeat_callback_failures_total", "Worker expiry callbacks that threw.", w.callbackFailures());
        t.counter("heartbeat_stall_rechecks_total",
                "Checks deferred because the worker was late past the stall threshold.",
                hb.stallRechecks());
        t.counter("heartbeat_action_failures_total", "Idle actions that threw on an event loop.", hb.actionFailures());
        t.counter("heartbeat_dispatch_rejected_total", "Action batches refused by a shutting-down event loop.",
                hb.dispatchRejected());
        t.counter("heartbeat_dispatch_failures_total",
                "Action batch hand-offs whose executor threw otherwise; retried after the next cycle.",
                hb.dispatchFailures());
        t.counter("heartbeat_ping_write_failures_total",
                "Pings whose factory threw or whose write failed (neither sent nor missed).", hb.pingWriteFailures());
        t.counter("heartbeat_stale_verdicts_total",
                "Actions dropped because the channel was reconfigured after they were decided.", hb.staleVerdicts());
        t.counter("heartbeat_unmonitored_channels_total",
                "Channels activated or reconfigured after the monitor was closed.", hb.unmonitoredChannels());
    }

    private static void jvm(Text t) {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        t.gauge("jvm_memory_heap_used_bytes", "JVM heap in use now (live and not yet collected objects).",
                heap.getUsed());
        t.gauge("jvm_memory_heap_committed_bytes", "JVM heap committed.", heap.getCommitted());
        t.gauge("jvm_memory_heap_used_after_gc_bytes",
                "Heap in use right after the latest collection of each heap pool, summed over the pools.",
                heapUsedAfterGc());

        t.family("jvm_gc_collections_total", "counter", "Garbage collections, by collector.");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc.getCollectionCount() >= 0) {
                t.sample("jvm_gc_collections_total", gc.getCollectionCount(), "gc", gc.getName());
            }
        }
        t.family("jvm_gc_collection_seconds_total", "counter", "Time spent in garbage collection, by collector.");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc.getCollectionTime() >= 0) {
                t.sample("jvm_gc_collection_seconds_total", gc.getCollectionTime() / 1e3, "gc", gc.getName());
            }
        }
        t.gauge("jvm_threads_live", "Live JVM threads.", ManagementFactory.getThreadMXBean().getThreadCount());

        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean) {
            long cpu = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
            if (cpu >= 0) {
                t.counter("process_cpu_seconds_total", "CPU time of the whole process, user and system.",
                        cpu / NANOS_PER_SECOND);
            }
        }
        if (os instanceof com.sun.management.UnixOperatingSystemMXBean) {
            t.gauge("process_open_fds", "Open file descriptors (sockets included).",
                    ((com.sun.management.UnixOperatingSystemMXBean) os).getOpenFileDescriptorCount());
        }
    }

    /** Heap used after the latest GC: getCollectionUsage summed over the heap pools. */
    static long heapUsedAfterGc() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                MemoryUsage usage = pool.getCollectionUsage();
                if (usage != null) {
                    sum += usage.getUsed();
                }
            }
        }
        return sum;
    }

    /** A tiny writer of the text format. */
    private static final class Text {
        private final StringBuilder out = new StringBuilder(8192);

        void family(String name, String type, String help) {
            out.append("# HELP ").append(name).append(' ').append(escapeHelp(help)).append('\n');
            out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        }

        void counter(String name, String help, double value) {
            metric(name, "counter", help, format(value));
        }

        void gauge(String name, String help, double value) {
            metric(name, "gauge", help, format(value));
        }

        /** Counts and sizes are longs: written exactly, never through a double. */
        void counter(String name, String help, long value) {
            metric(name, "counter", help, Long.toString(value));
        }

        void gauge(String name, String help, long value) {
            metric(name, "gauge", help, Long.toString(value));
        }

        private void metric(String name, String type, String help, String value) {
            family(name, type, help);
            sample(name, value);
        }

        void sample(String name, long value, String... labels) {
            sample(name, Long.toString(value), labels);
        }

        void sample(String name, double value, String... labels) {
            sample(name, format(value), labels);
        }

        private void sample(String name, String value, String... labels) {
            out.append(name);
            if (labels.length > 0) {
                out.append('{');
                for (int i = 0; i < labels.length; i += 2) {
                    if (i > 0) {
                        out.append(',');
                    }
                    out.append(labels[i]).append("=\"").append(escapeLabel(labels[i + 1])).append('"');
                }
                out.append('}');
            }
            out.append(' ').append(value).append('\n');
        }

        private static String format(double v) {
            if (v == Math.rint(v) && Math.abs(v) < 1e15) {
                return Long.toString((long) v); // integers without ".0"
            }
            if (Double.isNaN(v)) {
                return "NaN";
            }
            if (Double.isInfinite(v)) {
                return v > 0 ? "+Inf" : "-Inf";
            }
            return Double.toString(v);
        }

        private static String escapeHelp(String s) {
            return s.replace("\\", "\\\\").replace("\n", "\\n");
        }

        private static String escapeLabel(String s) {
            return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
        }

        @Override
        public String toString() {
            return out.toString();
        }
    }
}
