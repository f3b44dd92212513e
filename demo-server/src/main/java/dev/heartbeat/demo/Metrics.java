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
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.micrometer.HeartbeatMetrics;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.HeartbeatStats;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.util.Version;

/**
 * The demo server's meters in one Micrometer {@link PrometheusMeterRegistry}, whose scrape is
 * {@code GET /metrics}. The meters registered here read their sources when scraped (on the HTTP
 * connection's event loop), so they cost the echo connections nothing. Thread-safe.
 *
 * <ul>
 * <li>{@code demo.*}: the server's own counters ({@link DemoCounters}) and {@code demo.server.info}
 *     (the settings as tags). {@code demo.idle.events}, {@code demo.pings.sent} and
 *     {@code demo.connections.closed} mean the same for every idle impl, so an A/B run compares them:
 *     from the monitor's stats with Heartbeat, from the A/B handlers' counters with Netty's (the ping
 *     policing's closes, {@code reason="ping_abuse"}, from the monitor that counts them under either).</li>
 * <li>{@code heartbeat.*}: {@link HeartbeatMetrics}, with {@code --idle-impl heartbeat} only.</li>
 * <li>Micrometer's memory, thread, processor and file descriptor binders, and two meters no binder
 *     has: {@code jvm.gc.collection} and {@code jvm.gc.collections}, cumulative per collector from
 *     {@link GarbageCollectorMXBean} (Micrometer's {@code JvmGcMetrics} times pauses it is notified of
 *     from its binding on, not the collectors' own totals), and {@code jvm.memory.used.after.gc} per
 *     heap pool.</li>
 * </ul>
 */
final class Metrics {

    /** The Content-Type of {@link #scrape()}: the Prometheus text format the registry writes for it. */
    static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private static final double MILLIS_PER_SECOND = 1e3;

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** Held here because meters hold their sources weakly. */
    private final List<GarbageCollectorMXBean> collectors = ManagementFactory.getGarbageCollectorMXBeans();
    private final List<MemoryPoolMXBean> pools = ManagementFactory.getMemoryPoolMXBeans();
    /** The ping round trips the server measured, as its own histogram family (see {@link PingRtt}). */
    private final PingRtt pingRtt;
    /** The event loops' lag, exposed once started ({@code --loop-lag}, see {@link LoopLag}). */
    private final LoopLag loopLag;

    /**
     * @param echo the server's pipeline: its counters, its Heartbeat monitor (with {@code --idle-impl
     *     heartbeat}) and its ping round trips
     */
    Metrics(ServerConfig config, String transport, EchoPipeline echo) {
        this.pingRtt = echo.pingRtt();
        this.loopLag = echo.loopLag();
        HeartbeatMonitor monitor = echo.monitor();
        info(config, transport);
        demo(echo, monitor);
        if (monitor != null) {
            new HeartbeatMetrics(monitor).bindTo(registry);
        }
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        gc();
    }

    /** The whole exposition, current as of now. */
    String scrape() {
        return registry.scrape(CONTENT_TYPE) + pingRtt.exposition() + (loopLag.started() ? loopLag.exposition() : "");
    }

    private void info(ServerConfig config, String transport) {
        Version v = Version.identify().get("netty-common");
        Gauge.builder("demo.server.info", () -> 1)
                .description("The demo server's settings, as tags; the value is always 1")
                .tags("idle_impl", config.idleImpl().toString(),
                        "policy", config.idleImpl() == ServerConfig.IdleImpl.NONE ? "none" : config.policy().toString(),
                        "transport", transport,
                        "netty_version", v == null ? "unknown" : v.artifactVersion(),
                        "probe", config.protocol().toString(),
                        "police_pings", config.policesPings()
                                ? DurationConverter.format(config.peerPingRules().minInterval()) : "off")
                .register(registry);
    }

    private void demo(EchoPipeline echo, HeartbeatMonitor monitor) {
        DemoCounters c = echo.counters();
        Gauge.builder("demo.connections.open", c.open, a -> a.sum()).description("Echo connections open now")
                .register(registry);
        counter("demo.connections.accepted", "Echo connections accepted", Tags.empty(), c, x -> x.accepted.sum());
        counter("demo.lines.echoed", "Lines echoed back (PING lines answered PONG excluded)", Tags.empty(), c,
                x -> x.linesEchoed.sum());
        counter("demo.pongs.sent", "PING lines answered PONG", Tags.empty(), c, x -> x.pongsSent.sum());
        counter("demo.invalid.utf8.lines", "Lines that were not valid UTF-8 (echoed as they came)", Tags.empty(), c,
                x -> x.invalidUtf8Lines.sum());
        counter("demo.connection.errors", "Connections closed after an exception (I/O errors such as resets included)",
                Tags.empty(), c, x -> x.connectionErrors.sum());

        String idle = "Idle events fired (event policy), by kind";
        counter("demo.idle.events", idle, Tags.of("kind", "reader"), c, monitor, x -> x.readerIdleEvents.sum(),
                s -> s.readerIdleEvents());
        counter("demo.idle.events", idle, Tags.of("kind", "writer"), c, monitor, x -> x.writerIdleEvents.sum(),
                s -> s.writerIdleEvents());
        counter("demo.idle.events", idle, Tags.of("kind", "all"), c, monitor, x -> x.allIdleEvents.sum(),
                s -> s.allIdleEvents());
        counter("demo.pings.sent", "PING lines the server sent to silent clients (ping policy)", Tags.empty(), c,
                monitor, x -> x.pingsSent.sum(), s -> s.pingsSent());

        String closed = "Connections the server closed, by reason: idleness (close policy), unanswered pings"
                + " (ping policy), pinging too often (--police-pings), a line over --max-line, or Heartbeat's"
                + " lifecycle guards and drain (--max-age, --write-stall, --max-unwritable, POST /drain)";
        counter("demo.connections.closed", closed, Tags.of("reason", "reader_idle"), c, monitor,
                x -> x.closedReaderIdle.sum(), s -> s.closed(CloseReason.READER_IDLE));
        counter("demo.connections.closed", closed, Tags.of("reason", "writer_idle"), c, monitor,
                x -> 0, s -> s.closed(CloseReason.WRITER_IDLE));
        counter("demo.connections.closed", closed, Tags.of("reason", "all_idle"), c, monitor,
                x -> 0, s -> s.closed(CloseReason.ALL_IDLE));
        counter("demo.connections.closed", closed, Tags.of("reason", "ping_timeout"), c, monitor,
                x -> x.closedPingTimeout.sum(), s -> s.closed(CloseReason.PING_TIMEOUT));
        counter("demo.connections.closed", closed, Tags.of("reason", "ping_abuse"), echo,
                e -> e.closedFor(CloseReason.PING_ABUSE)); // the ping policing's, under every idle impl
        counter("demo.connections.closed", closed, Tags.of("reason", "max_line"), c, x -> x.closedMaxLine.sum());
        for (CloseReason lifecycle : new CloseReason[] {CloseReason.MAX_AGE, CloseReason.WRITE_STALL,
                CloseReason.UNWRITABLE, CloseReason.DRAIN}) { // Heartbeat's guards and drain: 0 with the others
            counter("demo.connections.closed", closed, Tags.of("reason", lifecycle.name().toLowerCase(Locale.ROOT)),
                    c, monitor, x -> 0, s -> s.closed(lifecycle));
        }
    }

    /** A counter the A/B handlers keep in {@link DemoCounters} and Heartbeat in its stats. */
    private void counter(String name, String description, Tags tags, DemoCounters c, HeartbeatMonitor monitor,
            ToLongFunction<DemoCounters> netty, ToLongFunction<HeartbeatStats> heartbeat) {
        if (monitor == null) {
            counter(name, description, tags, c, netty::applyAsLong);
        } else {
            counter(name, description, tags, monitor, m -> heartbeat.applyAsLong(m.stats()));
        }
    }

    private <T> void counter(String name, String description, Tags tags, T source, ToDoubleFunction<T> f) {
        FunctionCounter.builder(name, source, f).description(description).tags(tags).register(registry);
    }

    private void gc() {
        for (GarbageCollectorMXBean gc : collectors) {
            Tags tags = Tags.of("gc", gc.getName());
            if (gc.getCollectionCount() >= 0) {
                counter("jvm.gc.collections", "Garbage collections, by collector, since the JVM started", tags, gc,
                        GarbageCollectorMXBean::getCollectionCount);
            }
            if (gc.getCollectionTime() >= 0) {
                FunctionCounter.builder("jvm.gc.collection", gc, b -> b.getCollectionTime() / MILLIS_PER_SECOND)
                        .description("Time spent in garbage collection, by collector, since the JVM started")
                        .baseUnit("seconds").tags(tags).register(registry);
            }
        }
        for (MemoryPoolMXBean pool : pools) {
            if (pool.getType() == MemoryType.HEAP && pool.getCollectionUsage() != null) {
                Gauge.builder("jvm.memory.used.after.gc", pool, p -> usedAfterGc(p))
                        .description("Memory in use right after the latest collection of this pool")
                        .baseUnit("bytes").tags("area", "heap", "id", pool.getName()).register(registry);
            }
        }
    }

    private static double usedAfterGc(MemoryPoolMXBean pool) {
        MemoryUsage usage = pool.getCollectionUsage();
        return usage == null ? Double.NaN : usage.getUsed();
    }
}
