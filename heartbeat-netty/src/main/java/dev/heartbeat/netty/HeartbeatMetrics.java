/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Binds a {@link HeartbeatMonitor}'s counters to a Micrometer {@link MeterRegistry}: channels, idle
 * events by kind, closes by {@link CloseReason}, pings sent and failed, stale verdicts, the worker's
 * wake-ups, expirations and CPU time. Every meter reads {@link HeartbeatMonitor#stats()} when the
 * registry polls it, so binding costs nothing on the event loops or the worker.
 *
 * <pre>{@code
 * new HeartbeatMetrics(monitor).bindTo(registry);                 // or Tags.of("server", "gateway")
 * }</pre>
 *
 * <p>Needs {@code io.micrometer:micrometer-core} on the class path (an optional dependency of
 * heartbeat-netty). Meter names start with {@code heartbeat.}.
 */
public final class HeartbeatMetrics implements MeterBinder {

    private final HeartbeatMonitor monitor;
    private final Tags tags;

    /** Binds {@code monitor}'s counters, with no extra tags. */
    public HeartbeatMetrics(HeartbeatMonitor monitor) {
        this(monitor, Tags.empty());
    }

    /** Binds {@code monitor}'s counters, each with {@code tags} (to tell several monitors apart). */
    public HeartbeatMetrics(HeartbeatMonitor monitor, Iterable<io.micrometer.core.instrument.Tag> tags) {
        this.monitor = Objects.requireNonNull(monitor, "monitor");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "heartbeat.channels", "Channels whose Heartbeat handler is active", s -> s.channels());
        gauge(registry, "heartbeat.wheel.entries", "Entries in the timing wheel", s -> s.timer().entries());
        gauge(registry, "heartbeat.queue.depth", "Requests waiting for the worker", s -> s.timer().queueDepth());
        counter(registry, "heartbeat.idle.events", "Idle events fired", Tags.of("kind", "reader"),
                s -> s.readerIdleEvents());
        counter(registry, "heartbeat.idle.events", "Idle events fired", Tags.of("kind", "writer"),
                s -> s.writerIdleEvents());
        counter(registry, "heartbeat.idle.events", "Idle events fired", Tags.of("kind", "all"), s -> s.allIdleEvents());
        for (CloseReason reason : CloseReason.values()) {
            counter(registry, "heartbeat.closes", "Channels Heartbeat closed, by reason",
                    Tags.of("reason", reason.name().toLowerCase(java.util.Locale.ROOT)), s -> s.closed(reason));
        }
        counter(registry, "heartbeat.pings.sent", "Pings written", Tags.empty(), s -> s.pingsSent());
        counter(registry, "heartbeat.pings.failed", "Pings whose factory threw or whose write failed", Tags.empty(),
                s -> s.pingWriteFailures());
        counter(registry, "heartbeat.verdicts.stale", "Actions dropped: decided under an older configuration",
                Tags.empty(), s -> s.staleVerdicts());
        counter(registry, "heartbeat.stall.rechecks", "Checks deferred because the worker stalled", Tags.empty(),
                s -> s.stallRechecks());
        counter(registry, "heartbeat.action.failures", "Actions that threw on an event loop", Tags.empty(),
                s -> s.actionFailures());
        counter(registry, "heartbeat.worker.wakeups", "Times the worker woke from a park", Tags.empty(),
                s -> s.timer().wakeups());
        counter(registry, "heartbeat.worker.expirations", "Checks that came due", Tags.empty(),
                s -> s.timer().expired());
        FunctionCounter.builder("heartbeat.worker.cpu", monitor,
                        m -> Math.max(0, m.stats().workerCpuNanos()) / (double) TimeUnit.SECONDS.toNanos(1))
                .description("CPU time of the worker thread").baseUnit("seconds").tags(tags).register(registry);
    }

    private void gauge(MeterRegistry registry, String name, String description, ToDoubleFunction<HeartbeatStats> f) {
        Gauge.builder(name, monitor, m -> f.applyAsDouble(m.stats())).description(description).tags(tags)
                .register(registry);
    }

    private void counter(MeterRegistry registry, String name, String description, Tags extra,
            ToDoubleFunction<HeartbeatStats> f) {
        FunctionCounter.builder(name, monitor, m -> f.applyAsDouble(m.stats())).description(description)
                .tags(tags.and(extra)).register(registry);
    }
}
