/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatStats;
import dev.heartbeat.netty.PingCounters;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.ProbeStats;
import dev.heartbeat.netty.SampleSink;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Arrays;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import dev.heartbeat.core.ExpiryHandler;
import dev.heartbeat.core.Ticker;
import dev.heartbeat.core.TimerEntry;
import dev.heartbeat.core.TimerStats;
import dev.heartbeat.core.TimerWorker;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

// Over 500 lines (listed in checkstyle.xml): the worker's expiry handler (Judge) and the ~20 counters the
// facade reports; each part is small, and splitting them would put the worker-only state in two places.
/**
 * The engine behind {@link HeartbeatMonitor}: the wheel and its worker, the worker's expiry handler (the
 * judgement and the hand-off to event loops), the counters, the drain, the overload mode and the action
 * budget. The monitor is its facade: it holds one engine and adds the public API (argument checks, finding a
 * channel's handler); the engine and the classes it runs (the handler, the rules, the close sequence, the
 * batches) never call the facade (ArchitectureTest). Thread-safe, as the monitor.
 */
public final class MonitorEngine {

    /** The monitor's logger, by the name users configure. */
    private static final Logger LOG = LoggerFactory.getLogger("dev.heartbeat.netty.HeartbeatMonitor");

    /** The WARN for a channel activated on a monitor that does not run (logged once per monitor). */
    public static final String NOT_RUNNING_WARNING = "{} is neither started nor manual: a channel activated now gets "
            + "no idle "
            + "detection until startWorker() is called (counted as unmonitoredChannels; this is logged once). "
            + "Start it with startWorker() (or build it with HeartbeatMonitor.start()), or, to drive it in virtual "
            + "time, build it with manual() and call runOnce()";

    // Idle event counter indexes: the idle kinds are CheckOrder's.
    static final int READER_KIND = CheckOrder.READER;

    static final int WRITER_KIND = CheckOrder.WRITER;

    static final int ALL_KIND = CheckOrder.ALL;

    public final TimerWorker<HeartbeatHandler> worker;

    public final Ticker ticker;

    /**
     * A check this late means a stall: the wheel's own lateness (up to a tick) plus the stall
     * threshold, saturated, so a coarse tick is never mistaken for a pause.
     */
    private final long stallAfterNanos;

    /** The largest coalescing window: a power of two of nanoseconds, or 0 for none. */
    private final long maxCoalescingNanos;
    /**
     * Worker: where checks are placed (coalescing). Its phase, where this monitor's grids start on its ticker,
     * is drawn per monitor (0 for a manual one): with grids of multiples of the window, every monitor on a host
     * whose ticker is the host's monotonic clock woke at the same instants, and six demo servers on two cores
     * queued their cycles and hand-offs behind each other at every point (the load test's echo tail in ping
     * waves: load-test/docs/results.md).
     */
    final CheckGrid grid;

    /** The event loop that runs the worker's cycles (see {@link HeartbeatMonitor.Builder#hostedBy}), or null. */
    private final EventExecutor hostExecutor;

    private final Duration hostWatchdog;

    // Counters bumped on event loops (LongAdder: no contention between loops) or on the worker.
    private final LongAdder channels = new LongAdder();

    private final LongAdder[] idleEvents = adders(3);

    /** Closes per reason. */
    private final Map<CloseReason, LongAdder> closes = new EnumMap<>(CloseReason.class);

    private final LongAdder pingsSent = new LongAdder();

    /** Ping counters by probe name; an entry is added when a configuration with that probe is first bound. */
    private final ConcurrentHashMap<String, PingCounters> pingCounters = new ConcurrentHashMap<>();

    /** Where distributions go (see {@link SampleSink}); copy on write, read by event loops and the worker. */
    private volatile SampleSink[] sinks = new SampleSink[0];

    private final LongAdder answersConsumed = new LongAdder();

    private final LongAdder closesHeld = new LongAdder();

    private final LongAdder closeHoldsExpired = new LongAdder();

    private final LongAdder actionFailures = new LongAdder();

    private final LongAdder stallRechecks = new LongAdder();
    /** Leases of the coarse write clock outlived while it was kept fresh: the worker came late for it. */
    private final LongAdder coarseClockLateSpells = new LongAdder();

    private final LongAdder dispatchRejected = new LongAdder();

    private final LongAdder dispatchFailures = new LongAdder();

    private final LongAdder pingWriteFailures = new LongAdder();

    /** The failed pings logged at WARN: one per probe name ({@link #pingFailed}). */
    private final LongAdder pingFailureWarnings = new LongAdder();

    private final LongAdder staleVerdicts = new LongAdder();

    private final LongAdder unmonitoredChannels = new LongAdder();

    /** Whether the one WARN about channels activated after close was logged. */
    private final AtomicBoolean warnedUnmonitored = new AtomicBoolean();

    /** Whether this monitor is driven by {@link #runOnce()} only (see {@link HeartbeatMonitor.Builder#manual()}). */
    private final boolean manual;
    /** A test's fixed randomness ({@code HeartbeatMonitor.Builder#manual(Randomness)}), or null. */
    public final Randomness randomness;

    /** Whether {@link #startWorker()} was called: any thread reads it when a channel is activated. */
    private volatile boolean started;

    /** Whether the one WARN about channels activated on a monitor that does not run was logged. */
    private final AtomicBoolean warnedNotRunning = new AtomicBoolean();

    /** Worker only: the latest drain's start (ticker time) and window (see {@link #drain}). */
    private long drainStart;

    private long drainWindow;

    /** The factor idle timeouts are scaled by (see {@link #reduceIdleTimeouts}); 1 when not overloaded. */
    private volatile double overloadFactor = 1;

    private final LongAdder overloadCloses = new LongAdder();

    private final LongAdder pingBackoffs = new LongAdder();

    /** Storm control (see {@link HeartbeatMonitor.Builder#actionBudget}), or null. */
    private final ActionBudget budget;

    /** Worker only: an entry that is no channel, armed while hand-offs wait for the budget. */
    private final HeartbeatHandler pacer;

    private boolean pacerArmed;

    /**
     * Whether hand-offs whose actions can all wait leave their event loop asleep
     * ({@link HeartbeatMonitor.Builder#lazyHandOffs}).
     */
    private final boolean lazyHandOffs;

    /**
     * Worker only: an entry that is no channel, armed while a lazy hand-off waits for its event loop,
     * so that a cycle comes to wake that loop if it has not run the batch by then; null without lazy hand-offs.
     */
    private final HeartbeatHandler followUp;

    /**
     * The coarse write clock ({@link HeartbeatMonitor.Builder#coarseWriteClock}), or null: the event loops stamp
     * writes with ticker readings.
     */
    final CoarseClock coarseClock;

    /**
     * Worker only: an entry that is no channel, armed while a coarse write clock's lease is wanted (while the wheel
     * holds other entries), so that a cycle comes by the time the lease is due again, however quiet the wheel; null
     * without the clock.
     */
    private final HeartbeatHandler clockEntry;

    /** Worker only: whether {@link #clockEntry} is armed (or firing). */
    private boolean clockArmed;

    /** Recently bound configurations, by identity hash (see {@link #bind}); any thread, racy. */
    private final BoundConfig[] bound = new BoundConfig[16];

    /** The worker's expiry handler; its {@link Judge#cycleNow} is the time of the expiry being judged. */
    private final Judge judge = new Judge();

    /** Worker only: the batch of each event loop the worker hands actions to. */
    private final EventLoopBatches batches = new EventLoopBatches(this);

    /** Guarded by this: when a failure was last logged (rate limit: one WARN a second). */
    private long lastFailureLog;

    public MonitorEngine(Ticker ticker, boolean manual, Duration tick, String threadName, int maxExpirationsPerCycle,
            long maxCoalescingNanos, EventExecutor hostExecutor, Duration hostWatchdog, long stallThresholdNanos,
            int actionBudget, boolean lazyHandOffs, Randomness randomness, long gridPhase, int gridBurst,
            long coarseWriteClockNanos) {
        FlightEvents.preload(); // here, not on the event loop that runs the first cycle or batch
        this.ticker = ticker;
        this.manual = manual;
        this.randomness = randomness;
        for (CloseReason reason : CloseReason.values()) {
            closes.put(reason, new LongAdder());
        }
        this.worker = TimerWorker.<HeartbeatHandler>builder(judge)
                .ticker(ticker)
                .tick(tick)
                .threadName(threadName)
                .maxExpirationsPerCycle(maxExpirationsPerCycle)
                .build();
        long tickNanos = worker.tickNanos();
        this.grid = new CheckGrid(gridPhase, tickNanos, gridBurst);
        this.maxCoalescingNanos = maxCoalescingNanos;
        this.hostExecutor = hostExecutor;
        this.hostWatchdog = hostWatchdog;
        long slack = tickNanos + maxCoalescingNanos; // the most a check is late while the worker keeps up
        this.stallAfterNanos = stallThresholdNanos > Long.MAX_VALUE - slack ? Long.MAX_VALUE
                : slack + stallThresholdNanos;
        this.lastFailureLog = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
        this.budget = actionBudget == 0 ? null : new ActionBudget(actionBudget);
        // The pacer is never a channel's: its timeout only sets its coalescing window (1/64 of it, as a power of
        // two: 8 us for 1 ms). A coarser one would wake it after its bucket (a hundredth of a second's rate) is
        // full and lose the tokens earned beyond (StormTest).
        this.pacer = budget == null ? null : internalEntry();
        this.lazyHandOffs = lazyHandOffs;
        // Its deadline is put on a grid by the Judge; its own window (8 us, as the pacer's) changes it by less.
        this.followUp = lazyHandOffs ? internalEntry() : null;
        this.coarseClock = coarseWriteClockNanos == 0 ? null
                : new CoarseClock(ticker, coarseWriteClockNanos);
        this.clockEntry = coarseClock == null ? null : internalEntry();
    }

    /**
     * Worker, as it applies an entry's schedule request: with a coarse write clock whose entry is not armed (no
     * entry was in the wheel to judge), publishes a fresh lease (recording the time it was not kept fresh as late,
     * not counted as a late worker) and arms the clock's entry, before the entry that wants it can be judged.
     */
    void clockWanted() {
        if (coarseClock != null && !clockArmed) {
            coarseClock.refreshIfDue(ticker.nanoTime());
            clockArmed = worker.arm(clockEntry, coarseClock.nextDue());
        }
    }

    /** Whether {@code h} is an entry of the worker's own, no channel's handler. */
    private boolean internal(HeartbeatHandler h) {
        return h == pacer || h == followUp || h == clockEntry;
    }

    /** An entry of the worker's own, no channel's: its 1 ms timeout only sets its coalescing window (8 us). */
    private HeartbeatHandler internalEntry() {
        HeartbeatConfig oneMillisecond = HeartbeatConfig.events().readerIdle(Duration.ofMillis(1)).build();
        return new HeartbeatHandler(this, ApiAccess.api().planOf(oneMillisecond));
    }

    public void startWorker() {
        if (manual) {
            throw new IllegalStateException("this HeartbeatMonitor was built manual(): it runs only when runOnce() "
                    + "is called, and startWorker() would race with that");
        }
        started = true; // before the worker runs: a channel activated meanwhile is not warned about
        if (hostExecutor == null) {
            worker.start();
        } else {
            worker.startHosted(new EventLoopHost(hostExecutor, worker), hostWatchdog);
        }
    }

    public ChannelHandler newHandler(Plan config) {
        Objects.requireNonNull(config, "config");
        requireOpen();
        return HeartbeatHandler.of(this, config);
    }

    public java.util.concurrent.CompletableFuture<Integer> drain(Duration window) {
        Objects.requireNonNull(window, "window");
        if (window.isNegative() || window.compareTo(HeartbeatConfig.MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("drain window must be between 0 and 2^61 ns: " + window);
        }
        requireOpen();
        long windowNanos = window.toNanos();
        java.util.concurrent.CompletableFuture<Integer> spread = new java.util.concurrent.CompletableFuture<>();
        if (!worker.execute(() -> spread.complete(spreadDrain(windowNanos)))) {
            spread.completeExceptionally(new IllegalStateException("the monitor closed before the drain began"));
        }
        return spread;
    }

    /** Worker only: the earliest next look the rules of the entry being judged asked for (see {@link #lookAt}). */
    private long nextLook;

    /** Worker, as a judgement begins: no rule has asked for a look yet; {@code latest} if none does. */
    void startLooks(long latest) {
        nextLook = latest;
    }

    /** Worker, from a rule's judgement: the entry being judged needs a look at {@code at} (the earliest wins). */
    void lookAt(long at) {
        if (at - nextLook < 0) {
            nextLook = at;
        }
    }

    /** Worker, as a judgement ends: when the entry comes due next. */
    long takeLooks() {
        return nextLook;
    }

    /** Worker: gives every channel in the wheel its drain slot, and moves its entry there if that is sooner. */
    private int spreadDrain(long windowNanos) {
        java.util.List<HeartbeatHandler> handlers = new java.util.ArrayList<>();
        worker.forEachScheduled(handlers::add);
        drainStart = ticker.nanoTime();
        drainWindow = windowNanos;
        handlers.removeIf(this::internal);
        int n = handlers.size();
        for (int i = 0; i < n; i++) {
            HeartbeatHandler h = handlers.get(i);
            int slot = (int) ((long) (i + 1) * HeartbeatHandler.DRAIN_SLOTS / n) - 1;
            h.startDraining(Math.max(0, slot));
            long at = drainTime(Math.max(0, slot));
            if (at - h.deadline() < 0) {
                worker.move(h, at);
            }
        }
        return n;
    }

    /** Worker: when drain slot {@code slot} of the latest drain comes. */
    long drainTime(int slot) {
        return drainStart + (long) (drainWindow * ((slot + 1) / (double) HeartbeatHandler.DRAIN_SLOTS));
    }

    /** Event loop: an answer to a ping was consumed (kept from the application). */
    void answerConsumed() {
        answersConsumed.increment();
    }

    public long answersConsumed() {
        return answersConsumed.sum();
    }

    public void requireOpen() {
        if (worker.isClosed()) {
            throw new IllegalStateException("this HeartbeatMonitor is closed");
        }
    }

    public int runOnce() {
        return worker.doWork();
    }

    public HeartbeatStats stats() {
        TimerStats timer = worker.stats();
        long thread = worker.cpuTimeNanos();
        long cpu = thread < 0 ? thread : thread + timer.hostedNanos();
        return new HeartbeatStats(channels.sum(),
                idleEvents[READER_KIND].sum(), idleEvents[WRITER_KIND].sum(), idleEvents[ALL_KIND].sum(),
                closes(CloseReason.READER_IDLE), closes(CloseReason.WRITER_IDLE), closes(CloseReason.ALL_IDLE),
                closes(CloseReason.PING_TIMEOUT), pingsSent.sum(), pingWriteFailures.sum(), stallRechecks.sum(),
                coarseClockLateSpells.sum(), actionFailures.sum(), dispatchRejected.sum(), dispatchFailures.sum(),
                staleVerdicts.sum(), unmonitoredChannels.sum(), cpu, timer, closesByReason(), pingsByProbe());
    }

    private Map<String, ProbeStats> pingsByProbe() {
        Map<String, ProbeStats> byProbe = new TreeMap<>();
        for (PingCounters c : pingCounters.values()) {
            byProbe.put(c.probe(), ApiAccess.api().snapshot(c));
        }
        return byProbe;
    }

    /** Any thread, rarely (when a configuration is bound): the counters of {@code probe}'s name. */
    PingCounters pingCounters(Probe probe) {
        String name = probe.name();
        PingCounters counters = pingCounters.get(name);
        if (counters != null) {
            return counters;
        }
        synchronized (this) { // with addSampleSink: every sink hears of every probe name exactly once
            counters = pingCounters.get(name);
            if (counters == null) {
                counters = ApiAccess.api().pingCounters(name);
                pingCounters.put(name, counters);
                for (SampleSink sink : sinks) {
                    sink.probeAdded(counters);
                }
            }
            return counters;
        }
    }

    /** Adds a sink for the distributions and the per-probe counters (see {@link SampleSink#addTo}); any thread. */
    public synchronized void addSampleSink(SampleSink sink) {
        Objects.requireNonNull(sink, "sink");
        for (PingCounters counters : pingCounters.values()) {
            sink.probeAdded(counters);
        }
        SampleSink[] old = sinks;
        SampleSink[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = sink;
        sinks = grown;
    }

    /** Worker: the coalescing window for a configuration (see {@link HeartbeatMonitor.Builder#maxCoalescing}). */
    /**
     * Any thread: {@code config} bound to this monitor, shared with the handlers made or reconfigured
     * with the same configuration recently. The cache is racy on purpose: a {@link BoundConfig} is
     * immutable (final fields), so every thread sees a whole one or none, and a miss, or a lost
     * store, only costs one more allocation.
     */
    public BoundConfig bind(Plan config) {
        BoundConfig[] cache = bound;
        int i = System.identityHashCode(config) & (cache.length - 1);
        BoundConfig b = cache[i];
        if (b == null || b.config != config) {
            b = new BoundConfig(this, config);
            cache[i] = b;
        }
        return b;
    }

    public long coalescingWindow(Plan cfg) {
        return Math.min(cfg.coalescingNanos, maxCoalescingNanos);
    }

    /** Where this monitor's coalescing grids start: each window's points are this plus its multiples. */
    public long gridPhase() {
        return grid.phase();
    }

    private long closes(CloseReason reason) {
        return closes.get(reason).sum();
    }

    private Map<CloseReason, Long> closesByReason() {
        Map<CloseReason, Long> counts = new EnumMap<>(CloseReason.class);
        for (CloseReason r : CloseReason.values()) {
            counts.put(r, closes(r));
        }
        return counts;
    }

    public Ticker ticker() {
        return ticker;
    }

    public boolean isClosed() {
        return worker.isClosed();
    }

    public void close() {
        worker.close();
    }

    public boolean close(Duration timeout) {
        return worker.close(timeout);
    }

    @Override
    public String toString() {
        return "HeartbeatMonitor[" + worker + "]";
    }

    // ------------------------------------------------------------------ counters

    /** Event loop: a handler became active; counted and warned about if this monitor does not run. */
    void channelOpened() {
        channels.increment();
        if (!started && !manual && !worker.isClosed()) {
            // (A closed monitor refuses the handler's request: that handler is counted as unmonitored there.)
            unmonitoredChannels.increment();
            if (warnedNotRunning.compareAndSet(false, true)) {
                LOG.warn(NOT_RUNNING_WARNING, this);
            }
        }
    }

    void channelClosed() {
        channels.decrement();
    }

    void idleEvent(int kind) {
        idleEvents[kind].increment();
    }

    /** Event loop: Heartbeat is about to close {@code handler}'s channel for {@code reason}. */
    /** Event loop: a close veto held a close. */
    void closeHeld() {
        closesHeld.increment();
    }

    /** Event loop: a close went ahead without asking the veto, its holds having reached their bound. */
    void closeHoldExpired() {
        closeHoldsExpired.increment();
    }

    public void reduceIdleTimeouts(double factor) {
        if (!(factor > 0 && factor <= 1)) {
            throw new IllegalArgumentException("reduceIdleTimeouts needs a factor in (0, 1]: " + factor);
        }
        requireOpen();
        double before = overloadFactor;
        overloadFactor = factor;
        // A lower factor takes effect at once: a pass over the wheel. A higher one below 1 too, for the few checks
        // it moves: a close decided under the lower factor that the event loop found not due under the higher one
        // is looked at again only after the re-check's retry or a scaled timeout later, past the deadline the
        // higher factor sets (seed 8941: 0.4 then 0.7, 37 ms late; seed 10138: 0.5 then 0.6 in the same
        // millisecond, the next look 22 ms after 0.6's deadline). The pass moves only entries due later.
        if (factor < 1 && factor != before) {
            worker.execute(this::lookAgainUnderOverload);
        }
    }

    public double idleTimeoutFactor() {
        return overloadFactor;
    }

    /** Event loop: a channel doubled its ping interval on the peer's {@code too_many_pings}. */
    void pingBackoff() {
        pingBackoffs.increment();
    }

    public long pingBackoffs() {
        return pingBackoffs.sum();
    }

    public long overloadCloses() {
        return overloadCloses.sum();
    }

    /** Any thread: the current factor, read once per judgement. */
    double overloadFactor() {
        return overloadFactor;
    }

    /** Event loop: a close under a reduced idle timeout. */
    void overloadClose() {
        overloadCloses.increment();
    }

    /** Worker: moves the entry of every scaled channel to its deadline under the new factor, if sooner. */
    private void lookAgainUnderOverload() {
        double factor = overloadFactor;
        long now = ticker.nanoTime();
        java.util.List<HeartbeatHandler> handlers = new java.util.ArrayList<>();
        worker.forEachScheduled(handlers::add);
        for (HeartbeatHandler h : handlers) {
            if (internal(h)) {
                continue;
            }
            Plan cfg = h.config();
            if (factor < 1 && OverloadRule.applies(cfg)) {
                long at = OverloadRule.nextDeadline(h, cfg, factor, h.deadline());
                if (at - h.deadline() < 0) {
                    // Not in the past: a check that comes due late counts as a stall of the worker.
                    worker.move(h, Rule.latest(at, now));
                }
            }
        }
    }

    public long deferredActions() {
        return budget == null ? 0 : budget.deferred();
    }

    public Duration worstDeferral() {
        return Duration.ofNanos(budget == null ? 0 : budget.worstDelayNanos());
    }

    public long busiestBudgetSecond() {
        return budget == null ? 0 : budget.busiestSecond();
    }

    public long closesHeld() {
        return closesHeld.sum();
    }

    public long closeHoldsExpired() {
        return closeHoldsExpired.sum();
    }

    void closing(HeartbeatHandler handler, CloseReason reason, long idleNanos) {
        closing(handler.ctx.channel(), reason, idleNanos);
    }

    /**
     * Event loop of {@code channel}: Heartbeat (the handler or one of its companion handlers) is about
     * to close {@code channel} for {@code reason}, after {@code idleNanos} of the idleness that
     * matters to that reason: counted and logged at DEBUG.
     */
    public void closing(Channel channel, CloseReason reason, long idleNanos) {
        closes.get(reason).increment();
        if (LOG.isDebugEnabled()) {
            LOG.debug("closing {}: {} (idle for {} ms)", channel, reason, TimeUnit.NANOSECONDS.toMillis(idleNanos));
        }
    }

    /** Event loop: a ping of {@code bound}'s probe was written. */
    public void pingSent(BoundConfig bound) {
        pingsSent.increment();
        if (bound.pings != null) { // null only if the channel was reconfigured away from pinging meanwhile
            ApiAccess.api().countSent(bound.pings);
        }
    }

    /**
     * Event loop or worker: a ping of {@code bound}'s probe was answered in time; {@code rttNanos} is
     * its round-trip time when a matched answer timed it, negative otherwise (any-inbound answers).
     */
    public void pingAcked(BoundConfig bound, long rttNanos) {
        PingCounters pings = bound.pings;
        if (pings == null) {
            return;
        }
        ApiAccess.api().countAcked(pings);
        if (rttNanos >= 0) {
            for (SampleSink sink : sinks) {
                sink.pingRtt(pings, rttNanos);
            }
        }
    }

    /** Worker: a ping of {@code bound}'s probe went unanswered for its timeout. */
    public void pingMissed(BoundConfig bound) {
        if (bound.pings != null) {
            ApiAccess.api().countMissed(bound.pings);
        }
    }

    void actionFailed(HeartbeatHandler handler, Throwable t) {
        actionFailures.increment();
        warnRateLimited("Heartbeat action failed for {}", handler, t);
    }

    /** Worker: an event loop's executor threw when handed a batch; its actions wait for the next cycle. */
    void dispatchFailed(EventLoopBatch batch, Throwable t) {
        dispatchFailures.increment();
        warnRateLimited("Heartbeat could not hand actions to {}; they are tried again next cycle",
                batch.executor, t);
    }

    /**
     * Event loop: a ping could not be made or written (counted as failed, not missed; a silent peer is
     * closed all the same, see {@link PingPolicy}). Logged at WARN with its stack trace once per probe
     * name, later ones at DEBUG: a probe placed where its pings are refused fails at every ping.
     */
    void pingFailed(HeartbeatHandler handler, Throwable t) {
        pingWriteFailures.increment();
        Probe probe = handler.config().probe;
        if (probe == null) { // reconfigured away from pinging meanwhile
            warnRateLimited("Heartbeat could not write a ping for {}", handler, t);
            return;
        }
        PingCounters pings = pingCounters(probe);
        if (ApiAccess.api().countFailed(pings)) {
            pingFailureWarnings.increment();
            LOG.warn("Heartbeat could not write a {} ping for {}; a peer that stays silent is closed as PING_TIMEOUT "
                    + "all the same. Later failures of {} pings are counted (pings.failed) and logged at DEBUG only",
                    probe.name(), handler, probe.name(), t);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug("Heartbeat could not write a {} ping for {}: {}", probe.name(), handler, t.toString());
        }
    }

    /** For tests: how many failed pings were logged at WARN. */
    public long pingFailureWarnings() {
        return pingFailureWarnings.sum();
    }

    void staleVerdict() {
        staleVerdicts.increment();
    }

    /** Event loop: a handler became active (or was reconfigured) after this monitor closed. */
    void unmonitored(HeartbeatHandler handler) {
        unmonitoredChannels.increment();
        if (warnedUnmonitored.compareAndSet(false, true)) {
            LOG.warn("{} is closed: {} and any later channel get no idle detection (counted as unmonitoredChannels; "
                    + "this is logged once)", this, handler);
        }
    }

    /** For tests: whether the WARN about unmonitored channels was logged. */
    public boolean warnedUnmonitored() {
        return warnedUnmonitored.get();
    }

    /** For tests: whether the WARN about channels activated on a monitor that does not run was logged. */
    public boolean warnedNotRunning() {
        return warnedNotRunning.get();
    }

    /** The event loop that hosts the worker's cycles ({@link HeartbeatMonitor.Builder#hostedBy}), or null. */
    EventExecutor hostExecutor() {
        return hostExecutor;
    }

    /** For tests, on the thread that drives {@link #runOnce()}: the batch of {@code executor} (made if new). */
    public EventLoopBatch batchFor(EventExecutor executor) {
        return batches.of(executor);
    }

    /** For tests, on the thread that drives {@link #runOnce()}: how many event loop batches are remembered. */
    public int eventLoopBatches() {
        return batches.size();
    }

    private void warnRateLimited(String message, Object subject, Throwable t) {
        long now = System.nanoTime();
        synchronized (this) { // rare: a failure here is a bug in a downstream handler or a ping factory
            if (now - lastFailureLog < TimeUnit.SECONDS.toNanos(1)) {
                return;
            }
            lastFailureLog = now;
        }
        LOG.warn(message, subject, t);
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    // ------------------------------------------------------------------ worker side

    /** The worker's expiry handler: judge, re-arm, and collect actions per event loop. */
    private final class Judge implements ExpiryHandler<TimerEntry> { // no generic bridge: one JIT root fewer

        /** Worker only: the largest lateness of the checks due in this cycle, or -1 before the first. */
        private long cycleLateness = -1;
        /** Worker only: the time of this cycle's latest expiry. */
        private long cycleNow;
        /**
         * Worker only: the smallest coalescing window of the configurations whose actions this cycle may
         * wait for a lazy hand-off; {@code Long.MAX_VALUE} if none.
         */
        private long lazyWindow = Long.MAX_VALUE;

        @Override
        public void onExpired(TimerEntry entry, long now) {
            HeartbeatHandler handler = (HeartbeatHandler) entry; // the only entries of this monitor's wheel
            cycleNow = now;
            // Before anything is judged: it may record stamps given too early. A lease outlived here is counted: the
            // worker came late for a clock it kept fresh. One taken back by clockWanted, after a time with nothing to
            // judge, was let go, not outlived by a late worker, and is not.
            if (coarseClock != null && coarseClock.refreshIfDue(now)) {
                coarseClockLateSpells.increment();
            }
            if (handler == clockEntry) {
                // Kept fresh while there is anything to judge; a schedule request arms it again (clockWanted).
                if (worker.scheduledCount() > 0) {
                    worker.rearm(clockEntry, coarseClock.nextDue());
                } else {
                    clockArmed = false;
                }
                return;
            }
            if (handler == pacer) {
                pace(now);
                return;
            }
            if (handler == followUp) {
                return; // the cycle's end wakes the event loops that have not run their lazy batch yet
            }
            int serial = handler.serialToJudge();
            BoundConfig bound = handler.configToJudge(serial);
            if (bound == null) {
                // Being reconfigured right now, or its request not applied yet. That request usually
                // decides; but if the event loop stalled after it, and it came due already, nothing
                // else will: look again, until the switch is done.
                worker.rearm(handler, now + worker.tickNanos());
                return;
            }
            if (!bound.config.tracksAnything()) {
                return; // to track nothing: its cancel request is on its way
            }
            long lateness = now - handler.deadline();
            if (lateness > cycleLateness) {
                cycleLateness = lateness;
            }
            if (lateness > stallAfterNanos && handler.takeStallGrace(now)) {
                // The worker was late (a pause?): stamps the event loops would have written meanwhile
                // may be missing. Look again after as long as the delay before judging (a drain slot that
                // came meanwhile is not deferred: it closes whatever the stamps say, and every placement
                // keeps it, see HeartbeatHandler#coalesce).
                stallRechecks.increment();
                worker.rearm(handler, now + lateness);
                return;
            }
            int actions = handler.judge(bound, now); // re-armed by the judgement
            if (actions != 0) {
                dispatch(handler, bound.config, actions, serial, now);
            }
        }

        /** The pacer came due: hands over the waiting hand-offs the budget pays for now, oldest first. */
        private void pace(long now) {
            pacerArmed = false;
            budget.refill(now);
            for (HeartbeatHandler h; (h = budget.next(now)) != null; ) {
                h.handedAfter(budget.lastWaitedNanos());
                EventExecutor executor = executorOf(h);
                if (executor == null) {
                    h.takeActions(); // never registered: its next check tries again
                } else {
                    EventLoopBatch batch = batches.of(executor);
                    if (lazyHandOffs) {
                        batch.mustNotWait(); // waited for the budget already
                    }
                    batch.push(h);
                }
            }
            if (budget.hasWaiting()) {
                pacerArmed = true;
                worker.rearm(pacer, now + Math.max(worker.tickNanos(), budget.nanosToNextToken()));
            }
        }

        private EventExecutor executorOf(HeartbeatHandler handler) {
            try {
                return handler.ctx.executor();
            } catch (IllegalStateException notRegistered) {
                return null;
            }
        }

        @Override
        public void onCycleEnd() {
            if (cycleLateness >= 0) {
                for (SampleSink sink : sinks) {
                    sink.workerLateness(cycleLateness);
                }
                cycleLateness = -1;
            }
            long now = cycleNow;
            // A lazy hand-off may wait until the next point of its configuration's coalescing grid, where the
            // next pings come due, so a busy server has a cycle there anyway. (A quarter window, the answer
            // checks' grid, was measured too: more follow-up cycles of their own, as many loop wake-ups saved.)
            long until = lazyWindow == Long.MAX_VALUE ? now : gridPointAfter(now, lazyWindow);
            lazyWindow = Long.MAX_VALUE;
            int rejected = batches.submitAll(lazyHandOffs, now, until);
            if (rejected > 0) {
                dispatchRejected.add(rejected);
            }
            if (batches.anyWaiting()) {
                // On the grid, so that in a busy server the follow-up shares a cycle that comes anyway.
                // (Only cycles that expire something reach here: a cycle that only cascades would not.)
                followUpBy(batches.earliestWaiting());
            }
        }

        /** Lazy hand-offs: marks {@code batch} as not to wait, or notes how long these actions may wait. */
        private void noteWhetherItCanWait(EventLoopBatch batch, Plan cfg, int actions) {
            long window = coalescingWindow(cfg);
            if ((actions & ~cfg.policy.deferrableBits()) != 0 || window < 2) {
                batch.mustNotWait();
            } else if (window < lazyWindow) {
                lazyWindow = window;
            }
        }

        /** The first point of the grid of {@code window} (a power of two) after {@code now}: at most a window on. */
        private long gridPointAfter(long now, long window) {
            return grid.onGrid(now + 1, window);
        }

        /**
         * Makes sure a cycle comes by {@code at}: the follow-up entry is armed there, or moved there if
         * it is armed for later.
         */
        private void followUpBy(long at) {
            if (!worker.arm(followUp, at) && at - followUp.deadline() < 0) {
                worker.move(followUp, at);
            }
        }

        private void dispatch(HeartbeatHandler handler, Plan cfg, int actions, int serial, long now) {
            EventExecutor executor = executorOf(handler);
            if (executor == null) {
                return; // never registered; the next check will try again
            }
            EventLoopBatch batch = batches.of(executor);
            if (lazyHandOffs) {
                noteWhetherItCanWait(batch, cfg, actions);
            }
            if (handler.offerActions(actions, serial) != 0) {
                return; // already handed over (or waiting for the budget): the bits join the waiting word
            }
            if (budget == null) {
                batch.push(handler);
                return;
            }
            budget.refill(now);
            if (budget.tryTake(now)) {
                handler.handedAfter(0);
                batch.push(handler);
                return;
            }
            budget.defer(handler, now);
            if (!pacerArmed) {
                pacerArmed = true;
                worker.schedule(pacer, now + Math.max(worker.tickNanos(), budget.nanosToNextToken()));
            }
        }
    }
}
