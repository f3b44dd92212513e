/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.micrometer;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToDoubleFunction;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.HeartbeatStats;
import dev.heartbeat.netty.PingCounters;
import dev.heartbeat.netty.SampleSink;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Binds a {@link HeartbeatMonitor}'s counters to a Micrometer {@link MeterRegistry}, with Micrometer's
 * naming (dots; a Prometheus registry renders {@code heartbeat_connections_closed_total} and so on).
 * No meter has a per-connection tag.
 *
 * <table>
 * <caption>Meters</caption>
 * <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 * <tr><td>heartbeat.connections.tracked</td><td>gauge</td><td></td><td>channels whose handler is active</td></tr>
 * <tr><td>heartbeat.connections.closed</td><td>counter</td><td>reason</td><td>closes Heartbeat made, by
 *     {@link CloseReason} (lower case)</td></tr>
 * <tr><td>heartbeat.idle.events</td><td>counter</td><td>state</td><td>idle events fired: reader_idle,
 *     writer_idle, all_idle</td></tr>
 * <tr><td>heartbeat.pings.sent / .acked / .timeouts / .failed</td><td>counter</td><td>probe</td><td>pings
 *     written; answered in time; unanswered for their timeout; whose probe threw or write failed</td></tr>
 * <tr><td>heartbeat.ping.rtt</td><td>timer</td><td>probe</td><td>round-trip time of matched answers
 *     (probes that match answers only), with a percentile histogram</td></tr>
 * <tr><td>heartbeat.worker.lateness</td><td>timer (count and total)</td><td></td><td>per worker cycle with
 *     checks due, how late the worker ran them (now minus the earliest due deadline)</td></tr>
 * <tr><td>heartbeat.worker.lateness.max</td><td>gauge (seconds)</td><td></td><td>the largest such lateness
 *     since the registry last read this gauge</td></tr>
 * <tr><td>heartbeat.worker.wakeups / .cycles / .expirations / .rearms</td><td>counter</td><td></td><td>the
 *     worker's wake-ups from a park, duty cycles, checks that came due, lazy re-arms</td></tr>
 * <tr><td>heartbeat.worker.queue.depth</td><td>gauge</td><td></td><td>requests waiting for the
 *     worker</td></tr>
 * <tr><td>heartbeat.worker.cpu</td><td>counter (seconds)</td><td></td><td>CPU time of the worker thread
 *     and of the cycles it ran on a host event loop (one hosted cycle in 16 is timed; each counts the
 *     latest timed one's cost)</td></tr>
 * <tr><td>heartbeat.wheel.entries</td><td>gauge</td><td></td><td>entries in the timing wheel</td></tr>
 * <tr><td>heartbeat.verdicts.stale, heartbeat.stall.rechecks, heartbeat.coarse.clock.late,
 *     heartbeat.action.failures, heartbeat.dispatch.failures, heartbeat.worker.callback.failures,
 *     heartbeat.unmonitored.channels</td>
 *     <td>counter</td><td></td><td>see {@link HeartbeatStats}; the last three should stay at zero: alert on
 *     them</td></tr>
 * </table>
 *
 * <p>Counters and gauges read the monitor's own counters when the registry polls them. The RTT timer is
 * recorded as answers come, on their event loops. The worker's lateness is not a Micrometer timer: a
 * cycle with work only adds to a count, a total and a maximum (plain fields, one writer at a time),
 * which the registry reads when it polls, because recording into a timer with a percentile histogram
 * took about a fifth of a hosted cycle's CPU (async-profiler, 100k tcp; load-test/docs/results.md).
 *
 * <pre>{@code
 * new HeartbeatMetrics(monitor).bindTo(registry);                 // or Tags.of("server", "gateway")
 * }</pre>
 *
 * <p>Needs {@code io.micrometer:micrometer-core} on the class path (an optional dependency of
 * heartbeat-netty).
 *
 * @since 0.2 (before, {@code dev.heartbeat.netty.HeartbeatMetrics}, now deprecated)
 */
public final class HeartbeatMetrics implements MeterBinder {

    private static final Duration MIN_RTT = Duration.ofMillis(1);
    private static final Duration MAX_RTT = Duration.ofSeconds(30);

    private final HeartbeatMonitor monitor;
    private final Tags tags;

    /** Binds {@code monitor}'s counters, with no extra tags. */
    public HeartbeatMetrics(HeartbeatMonitor monitor) {
        this(monitor, Tags.empty());
    }

    /** Binds {@code monitor}'s counters, each with {@code tags} (to tell several monitors apart). */
    public HeartbeatMetrics(HeartbeatMonitor monitor, Iterable<Tag> tags) {
        this.monitor = Objects.requireNonNull(monitor, "monitor");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        gauge(registry, "heartbeat.connections.tracked", "Channels whose Heartbeat handler is active",
                s -> s.channels());
        for (CloseReason reason : CloseReason.values()) {
            counter(registry, "heartbeat.connections.closed", "Channels Heartbeat closed, by reason",
                    Tags.of("reason", reason.name().toLowerCase(Locale.ROOT)), s -> s.closed(reason));
        }
        counter(registry, "heartbeat.idle.events", "Idle events fired", Tags.of("state", "reader_idle"),
                s -> s.readerIdleEvents());
        counter(registry, "heartbeat.idle.events", "Idle events fired", Tags.of("state", "writer_idle"),
                s -> s.writerIdleEvents());
        counter(registry, "heartbeat.idle.events", "Idle events fired", Tags.of("state", "all_idle"),
                s -> s.allIdleEvents());
        counter(registry, "heartbeat.verdicts.stale", "Actions dropped: decided under an older configuration",
                Tags.empty(), s -> s.staleVerdicts());
        counter(registry, "heartbeat.stall.rechecks", "Checks deferred because the worker stalled", Tags.empty(),
                s -> s.stallRechecks());
        counter(registry, "heartbeat.coarse.clock.late", "Times the worker published the coarse write clock late",
                Tags.empty(), s -> s.coarseClockLateSpells());
        counter(registry, "heartbeat.action.failures", "Actions that threw on an event loop", Tags.empty(),
                s -> s.actionFailures());
        counter(registry, "heartbeat.dispatch.failures", "Action batches an event loop refused or whose hand-off threw",
                Tags.empty(), s -> s.dispatchRejected() + s.dispatchFailures());
        counter(registry, "heartbeat.worker.callback.failures", "Worker expiry callbacks that threw", Tags.empty(),
                s -> s.timer().callbackFailures());
        counter(registry, "heartbeat.unmonitored.channels",
                "Channels activated or reconfigured after the monitor was closed, or activated on a monitor not "
                + "started (nor manual): they have no idle detection",
                Tags.empty(), s -> s.unmonitoredChannels());
        gauge(registry, "heartbeat.wheel.entries", "Entries in the timing wheel", s -> s.timer().entries());
        gauge(registry, "heartbeat.worker.queue.depth", "Requests waiting for the worker",
                s -> s.timer().queueDepth());
        counter(registry, "heartbeat.worker.wakeups", "Times the worker woke from a park", Tags.empty(),
                s -> s.timer().wakeups());
        counter(registry, "heartbeat.worker.cycles", "Duty cycles the worker ran", Tags.empty(),
                s -> s.timer().cycles());
        counter(registry, "heartbeat.worker.expirations", "Checks that came due", Tags.empty(),
                s -> s.timer().expired());
        counter(registry, "heartbeat.worker.rearms", "Entries moved to their next check", Tags.empty(),
                s -> s.timer().rearmed());
        monitorCounter(registry, "heartbeat.actions.deferred",
                "Actions that waited for the monitor's action budget (storm control)", m -> m.deferredActions());
        Gauge.builder("heartbeat.actions.deferral.worst", monitor, m -> m.worstDeferral().toNanos() / 1e9)
                .description("The longest an action waited for the action budget").baseUnit("seconds")
                .tags(tags).register(registry);
        Gauge.builder("heartbeat.actions.busiest.second", monitor, m -> m.busiestBudgetSecond())
                .description("The most actions the action budget handed over in one whole second")
                .tags(tags).register(registry);
        monitorCounter(registry, "heartbeat.closes.held", "Closes a close veto held for a while",
                m -> m.closesHeld());
        monitorCounter(registry, "heartbeat.closes.hold.expired",
                "Closes made without asking the close veto again: their holds reached maxCloseHold",
                m -> m.closeHoldsExpired());
        monitorCounter(registry, "heartbeat.pings.backoffs",
                "Times a channel doubled its ping interval because its peer said too_many_pings",
                m -> m.pingBackoffs());
        monitorCounter(registry, "heartbeat.overload.closes",
                "Closes made because reduceIdleTimeouts lowered the idle timeouts", m -> m.overloadCloses());
        Gauge.builder("heartbeat.overload.factor", monitor, m -> m.idleTimeoutFactor())
                .description("The factor closeWhenIdle timeouts are scaled by (1: not reduced)")
                .tags(tags).register(registry);
        FunctionCounter.builder("heartbeat.worker.cpu", monitor,
                        m -> Math.max(0, m.stats().workerCpuNanos()) / (double) TimeUnit.SECONDS.toNanos(1))
                .description("CPU time of the worker thread and of the cycles it ran on a host event loop")
                .baseUnit("seconds").tags(tags).register(registry);
        SampleSink.addTo(monitor, new Sink(registry));
    }

    private void gauge(MeterRegistry registry, String name, String description, ToDoubleFunction<HeartbeatStats> f) {
        Gauge.builder(name, monitor, m -> f.applyAsDouble(m.stats())).description(description).tags(tags)
                .register(registry);
    }

    private void monitorCounter(MeterRegistry registry, String name, String description,
            ToDoubleFunction<HeartbeatMonitor> f) {
        FunctionCounter.builder(name, monitor, f).description(description).tags(tags).register(registry);
    }

    private void counter(MeterRegistry registry, String name, String description, Tags extra,
            ToDoubleFunction<HeartbeatStats> f) {
        FunctionCounter.builder(name, monitor, m -> f.applyAsDouble(m.stats())).description(description)
                .tags(tags.and(extra)).register(registry);
    }

    /** The meters of one registry that are fed as samples come, and those of each probe name. */
    private final class Sink implements SampleSink {
        private final MeterRegistry registry;
        /**
         * Cycles with work, their total and their largest lateness since the gauge's last read. Written by
         * the thread running the worker's cycles (one at a time, handed over with a happens-before edge):
         * read, then a release store, no read-modify-write; read by the registry. A read that resets the
         * maximum while a cycle stores a larger one leaves that one for the next read: never lost.
         */
        private final AtomicLong latenessCount = new AtomicLong();
        private final AtomicLong latenessTotal = new AtomicLong();
        private final AtomicLong latenessMax = new AtomicLong();
        /** The RTT timer of each probe's counters; read without allocation on the event loops. */
        private final Map<PingCounters, Timer> rtt = new ConcurrentHashMap<>();

        Sink(MeterRegistry registry) {
            this.registry = registry;
            FunctionTimer.builder("heartbeat.worker.lateness", this, s -> s.latenessCount.get(),
                            s -> s.latenessTotal.get(), TimeUnit.NANOSECONDS)
                    .description("How late the worker ran the checks due in a cycle, per cycle with work")
                    .tags(tags).register(registry);
            Gauge.builder("heartbeat.worker.lateness.max", this,
                            s -> s.latenessMax.getAndSet(0) / (double) TimeUnit.SECONDS.toNanos(1))
                    .description("The largest lateness of a worker cycle with work since the previous read")
                    .baseUnit("seconds").tags(tags).register(registry);
        }

        @Override
        public void probeAdded(PingCounters probe) {
            Tags t = tags.and("probe", probe.probe());
            count(probe, PingCounters::sent, "heartbeat.pings.sent", "Pings written", t);
            count(probe, PingCounters::acked, "heartbeat.pings.acked", "Pings answered in time", t);
            count(probe, PingCounters::missed, "heartbeat.pings.timeouts", "Pings not answered within their timeout",
                    t);
            count(probe, PingCounters::failed, "heartbeat.pings.failed",
                    "Pings whose probe threw or whose write failed", t);
            rtt.put(probe, Timer.builder("heartbeat.ping.rtt")
                    .description("Round-trip time of matched ping answers")
                    .publishPercentileHistogram().minimumExpectedValue(MIN_RTT).maximumExpectedValue(MAX_RTT)
                    .tags(t).register(registry));
        }

        private void count(PingCounters probe, ToDoubleFunction<PingCounters> f, String name, String description,
                Tags t) {
            FunctionCounter.builder(name, probe, f).description(description).tags(t).register(registry);
        }

        @Override
        public void pingRtt(PingCounters probe, long nanos) {
            Timer timer = rtt.get(probe);
            if (timer != null) {
                timer.record(nanos, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public void workerLateness(long nanos) {
            latenessCount.lazySet(latenessCount.get() + 1);
            latenessTotal.lazySet(latenessTotal.get() + nanos);
            if (nanos > latenessMax.get()) {
                latenessMax.lazySet(nanos);
            }
        }
    }
}
