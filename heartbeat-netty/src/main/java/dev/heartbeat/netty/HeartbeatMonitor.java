/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import dev.heartbeat.core.ExpiryHandler;
import dev.heartbeat.core.Ticker;
import dev.heartbeat.core.TimerEntry;
import dev.heartbeat.core.TimerStats;
import dev.heartbeat.core.TimerWorker;
import dev.heartbeat.core.TimingWheel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

// Over 500 lines (listed in checkstyle.xml): the public facade, its counters, the drain, the overload and the
// worker's expiry handler; the engine half moves to an internal package with the restructure of issue 26.
/**
 * One per process: the shared timing wheel and the worker thread that watch every channel's
 * idleness, replacing {@link io.netty.handler.timeout.IdleStateHandler}'s per-channel scheduled
 * tasks. Each channel gets a handler from {@link #newHandler}; the handler only stamps activity on
 * the event loop, and the worker acts on idle channels by handing their event loop one batched task.
 *
 * <pre>{@code
 * HeartbeatMonitor monitor = HeartbeatMonitor.start();            // once, at startup
 * HeartbeatConfig idle = HeartbeatConfig.events()
 *         .readerIdle(Duration.ofSeconds(60)).writerIdle(Duration.ofSeconds(30)).build();
 *
 * new ServerBootstrap()
 *     .group(boss, workers)
 *     .channel(NioServerSocketChannel.class)
 *     .childHandler(new ChannelInitializer<SocketChannel>() {
 *         protected void initChannel(SocketChannel ch) {
 *             ch.pipeline().addLast("idle", monitor.newHandler(idle)); // was: new IdleStateHandler(60, 30, 0)
 *             ch.pipeline().addLast(new MyHandler());                  // its userEventTriggered is unchanged
 *         }
 *     });
 * ...
 * monitor.close();                                                  // at shutdown
 * }</pre>
 *
 * <p>Cost per channel: one handler object, which is also the channel's wheel entry; no scheduled
 * task, no allocation on reads and writes, one ticker read per read batch and per completed write.
 * Closing the monitor stops the worker and leaves the channels open; their handlers then do nothing.
 *
 * <p>A monitor runs once started ({@link #start()}, or {@link Builder#build()} then
 * {@link #startWorker()}); a channel activated on one that is neither started nor built
 * {@link Builder#manual()} gets no idle detection until it starts, which the first such channel
 * logs at WARN (once per monitor) and each counts in {@code unmonitoredChannels}.
 *
 * <p>Thread-safe. For tests in virtual time, build it {@link Builder#manual()} with a
 * {@link dev.heartbeat.core.ManualTicker} and call {@link #runOnce()} after moving the ticker; the
 * actions then run on each channel's event loop (for {@code EmbeddedChannel}: {@code runPendingTasks()}).
 */
public final class HeartbeatMonitor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HeartbeatMonitor.class);
    /** The WARN for a channel activated on a monitor that does not run (logged once per monitor). */
    static final String NOT_RUNNING_WARNING = "{} is neither started nor manual: a channel activated now gets no idle "
            + "detection until startWorker() is called (counted as unmonitoredChannels; this is logged once). "
            + "Start it with startWorker() (or build it with HeartbeatMonitor.start()), or, to drive it in virtual "
            + "time, build it with manual() and call runOnce()";

    // Idle event counter indexes: the idle kinds are CheckOrder's.
    static final int READER_KIND = CheckOrder.READER;
    static final int WRITER_KIND = CheckOrder.WRITER;
    static final int ALL_KIND = CheckOrder.ALL;

    final TimerWorker<HeartbeatHandler> worker;
    final Ticker ticker;
    /**
     * A check this late means a stall: the wheel's own lateness (up to a tick) plus the stall
     * threshold, saturated, so a coarse tick is never mistaken for a pause.
     */
    private final long stallAfterNanos;
    /** The largest coalescing window: a power of two of nanoseconds, or 0 for none. */
    private final long maxCoalescingNanos;
    /** The event loop that runs the worker's cycles (see {@link Builder#hostedBy}), or null. */
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
    private final LongAdder dispatchRejected = new LongAdder();
    private final LongAdder dispatchFailures = new LongAdder();
    private final LongAdder pingWriteFailures = new LongAdder();
    /** The failed pings logged at WARN: one per probe name ({@link #pingFailed}). */
    private final LongAdder pingFailureWarnings = new LongAdder();
    private final LongAdder staleVerdicts = new LongAdder();
    private final LongAdder unmonitoredChannels = new LongAdder();
    /** Whether the one WARN about channels activated after close was logged. */
    private final AtomicBoolean warnedUnmonitored = new AtomicBoolean();
    /** Whether this monitor is driven by {@link #runOnce()} only (see {@link Builder#manual()}). */
    private final boolean manual;
    /** A test's fixed randomness ({@link Builder#manual(Randomness)}), or null: Heartbeat's own draws. */
    final Randomness randomness;
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

    /** Storm control (see {@link Builder#actionBudget}), or null. */
    private final ActionBudget budget;
    /** Worker only: an entry that is no channel, armed while hand-offs wait for the budget. */
    private final HeartbeatHandler pacer;
    private boolean pacerArmed;
    /** Whether hand-offs whose actions can all wait leave their event loop asleep ({@link Builder#lazyHandOffs}). */
    private final boolean lazyHandOffs;
    /**
     * Worker only: an entry that is no channel, armed while a lazy hand-off waits for its event loop,
     * so that a cycle comes to wake that loop if it has not run the batch by then; null without lazy hand-offs.
     */
    private final HeartbeatHandler followUp;

    /** Recently bound configurations, by identity hash (see {@link #bind}); any thread, racy. */
    private final BoundConfig[] bound = new BoundConfig[16];

    /** The worker's expiry handler; its {@link Judge#cycleNow} is the time of the expiry being judged. */
    private final Judge judge = new Judge();

    /** Worker only: the batch of each event loop the worker hands actions to. */
    private final EventLoopBatches batches = new EventLoopBatches(this);
    /** Guarded by this: when a failure was last logged (rate limit: one WARN a second). */
    private long lastFailureLog;

    private HeartbeatMonitor(Builder b) {
        this.ticker = b.ticker;
        this.manual = b.manual;
        this.randomness = b.randomness;
        for (CloseReason reason : CloseReason.values()) {
            closes.put(reason, new LongAdder());
        }
        this.worker = TimerWorker.<HeartbeatHandler>builder(judge)
                .ticker(b.ticker)
                .tick(b.tick)
                .threadName(b.threadName)
                .maxExpirationsPerCycle(b.maxExpirationsPerCycle)
                .build();
        long tick = worker.tickNanos();
        this.maxCoalescingNanos = b.maxCoalescingNanos;
        this.hostExecutor = b.hostExecutor;
        this.hostWatchdog = b.hostWatchdog;
        long slack = tick + maxCoalescingNanos; // the most a check is late while the worker keeps up
        this.stallAfterNanos = b.stallThresholdNanos > Long.MAX_VALUE - slack ? Long.MAX_VALUE
                : slack + b.stallThresholdNanos;
        this.lastFailureLog = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
        this.budget = b.actionBudget == 0 ? null : new ActionBudget(b.actionBudget);
        // The pacer is never a channel's: its timeout only sets its coalescing window (1/64 of it, as a power of
        // two: 8 us for 1 ms). A coarser one would wake it after its bucket (a hundredth of a second's rate) is
        // full and lose the tokens earned beyond (StormTest).
        this.pacer = budget == null ? null : internalEntry();
        this.lazyHandOffs = b.lazyHandOffs;
        // Its deadline is put on a grid by the Judge; its own window (8 us, as the pacer's) changes it by less.
        this.followUp = lazyHandOffs ? internalEntry() : null;
    }

    /** An entry of the worker's own, no channel's: its 1 ms timeout only sets its coalescing window (8 us). */
    private HeartbeatHandler internalEntry() {
        return new HeartbeatHandler(this, HeartbeatConfig.events().readerIdle(Duration.ofMillis(1)).build());
    }

    /** A monitor with the defaults (system ticker, 1.05 ms tick), already started. */
    public static HeartbeatMonitor start() {
        HeartbeatMonitor monitor = builder().build();
        monitor.startWorker();
        return monitor;
    }

    /** A builder for a monitor with non-default settings. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Starts the worker thread of a monitor made with {@link Builder#build()}.
     *
     * @throws IllegalStateException if already started, closed, driven with {@link #runOnce()}, or
     *     built {@link Builder#manual()}
     */
    public HeartbeatMonitor startWorker() {
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
        return this;
    }

    /**
     * A new handler for one channel: add it to the channel's pipeline where
     * {@code IdleStateHandler} would go. Not sharable between channels. It handles outbound
     * operations only if {@code config} tracks writes (writer or all idleness, a ping when the writer
     * is idle, a write-stall guard); otherwise Netty's pipeline skips it on every write, flush, read
     * request and close.
     *
     * @throws IllegalStateException if this monitor is closed
     */
    public ChannelHandler newHandler(HeartbeatConfig config) {
        Objects.requireNonNull(config, "config");
        requireOpen();
        return HeartbeatHandler.of(this, config);
    }

    /**
     * Switches the configuration of a channel's Heartbeat handler, for example from a short login
     * deadline to a long session timeout; idleness is then measured from now, and an action the
     * worker decided under the old configuration but has not carried out yet is dropped. Any
     * thread: the change runs on the handler's executor (at once if called there, else as a task).
     * A handler made for a configuration that tracks no writes is not on the pipeline's outbound
     * side (see {@link #newHandler}); the first switch to one that does adds a write tracker right
     * after it, which counts the writes that pass it from then on.
     *
     * @return {@code true} if the change was applied or queued; {@code false} if the channel is
     *     closed (or closes before the handler can be found), which is not an error: a business thread
     *     may race with the peer's close
     * @throws IllegalArgumentException if the channel is open and its pipeline has no handler of
     *     this monitor, or more than one (name it with {@link #reconfigure(Channel, String, HeartbeatConfig)})
     * @throws IllegalStateException if this monitor is closed
     */
    public boolean reconfigure(Channel channel, HeartbeatConfig config) {
        return reconfigure(channel, null, config);
    }

    /**
     * {@link #reconfigure(Channel, HeartbeatConfig)} for the Heartbeat handler added under
     * {@code handlerName}, for pipelines with more than one.
     *
     * @return {@code true} if applied or queued; {@code false} if the channel is closed
     * @throws IllegalArgumentException if the channel is open and has no handler of this monitor by that name
     * @throws IllegalStateException if this monitor is closed
     */
    public boolean reconfigure(Channel channel, String handlerName, HeartbeatConfig config) {
        Objects.requireNonNull(config, "config");
        requireOpen();
        return onHandler(channel, handlerName, h -> h.reconfigure(config));
    }

    /**
     * Closes every channel this monitor watches, spread evenly over {@code window}, for a rolling
     * restart (HAProxy's {@code close-spread-time}, at any time): each channel in turn gets a
     * {@link HeartbeatGoodbyeEvent}, a {@link HeartbeatCloseEvent} with {@link CloseReason#DRAIN},
     * its configuration's protocol goodbye (see {@link HeartbeatConfig.Builder#goodbye}; HTTP/2 GOAWAY,
     * WebSocket Close 1001) and is closed once the goodbye is written (at most 1 s later). The worker
     * takes the channels it watches when it runs the request (its next cycle) and gives each a slot:
     * channel {@code i} of {@code n} is closed about {@code window * (i + 1) / n} after that, in
     * 4,096 steps of the window, on the same wheel entry as its idle checks, which go on until then.
     * Channels that start later are not drained (stop accepting first), and a drain that finds
     * another under way re-spreads every channel not yet closed over the new window. Any thread.
     *
     * @param window how long the drain takes; {@code Duration.ZERO} closes every channel at once
     * @return completes with the number of channels the drain will close, once the worker has
     *     spread them
     * @throws IllegalArgumentException if the window is negative or above {@link HeartbeatConfig#MAX_TIMEOUT}
     * @throws IllegalStateException if this monitor is closed
     */
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
        handlers.remove(pacer);
        handlers.remove(followUp);
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

    /**
     * Counts a read now, as {@code IdleStateHandler.resetReadTimeout()}: the reader and all idle
     * timeouts (and the ping policy's silence) start again. Any thread: on the handler's executor it
     * stamps at once, elsewhere it queues one task there. Finding the handler walks the pipeline (a
     * small allocation, as any pipeline lookup by type), so this is for occasional calls, not for
     * every message: per message, the handler stamps reads and writes by itself.
     *
     * @return {@code true} if done or queued; {@code false} if the channel is closed
     * @throws IllegalArgumentException if the channel is open and its pipeline has no handler of this
     *     monitor, or more than one
     */
    public boolean resetReadTimeout(Channel channel) {
        return onHandler(channel, null, HeartbeatHandler::resetReadTimeout);
    }

    /**
     * Counts a completed write now, as {@code IdleStateHandler.resetWriteTimeout()}. Any thread, as
     * {@link #resetReadTimeout}.
     *
     * @return {@code true} if done or queued; {@code false} if the channel is closed
     * @throws IllegalArgumentException if the channel is open and its pipeline has no handler of this
     *     monitor, or more than one
     */
    public boolean resetWriteTimeout(Channel channel) {
        return onHandler(channel, null, HeartbeatHandler::resetWriteTimeout);
    }

    /**
     * The configuration a channel's Heartbeat handler currently uses.
     *
     * @throws IllegalArgumentException if the channel's pipeline has no handler of this monitor, or
     *     more than one
     */
    public HeartbeatConfig configOf(Channel channel) {
        return handlerOf(channel, null).config();
    }

    /**
     * The configuration of the Heartbeat handler added under {@code handlerName}.
     *
     * @throws IllegalArgumentException if the channel's pipeline has no handler of this monitor by that name
     */
    public HeartbeatConfig configOf(Channel channel, String handlerName) {
        Objects.requireNonNull(handlerName, "handlerName");
        return handlerOf(channel, handlerName).config();
    }

    /**
     * The round-trip time of the channel's pings, from the answers its {@link Probe} recognised
     * (RFC 6298's smoothed RTT and its variation), or empty before the first answer, or for a
     * configuration whose pings' answers are not recognised ({@link HeartbeatConfig#ping(PingFactory)}).
     * Any thread; the two values are read one after the other, so they may come from two consecutive
     * samples.
     *
     * @throws IllegalArgumentException if the channel's pipeline has no handler of this monitor, or more than one
     */
    public Optional<Rtt> rttOf(Channel channel) {
        return Optional.ofNullable(handlerOf(channel, null).rtt());
    }

    /** Event loop: an answer to a ping was consumed (kept from the application). */
    void answerConsumed() {
        answersConsumed.increment();
    }

    /** Answers to Heartbeat's pings that the handlers consumed (kept from the application); any thread. */
    public long answersConsumed() {
        return answersConsumed.sum();
    }

    /** Runs {@code action} on the handler's executor; false if the channel is closed. */
    private boolean onHandler(Channel channel, String handlerName, Consumer<HeartbeatHandler> action) {
        Objects.requireNonNull(channel, "channel");
        if (!channel.isOpen()) {
            return false;
        }
        HeartbeatHandler handler;
        ChannelHandlerContext ctx;
        try {
            handler = handlerOf(channel, handlerName);
            ctx = channel.pipeline().context(handler);
            if (ctx == null) {
                throw new IllegalArgumentException("the Heartbeat handler was removed from the pipeline of " + channel);
            }
        } catch (IllegalArgumentException e) {
            if (!channel.isOpen()) {
                return false; // closed meanwhile: its pipeline let go of the handler
            }
            throw e;
        }
        EventExecutor executor = ctx.executor();
        if (executor.inEventLoop()) {
            action.accept(handler);
            return true;
        }
        try {
            executor.execute(() -> action.accept(handler));
            return true;
        } catch (RejectedExecutionException shuttingDown) {
            return false; // the executor is gone, and with it the channel
        }
    }

    private HeartbeatHandler handlerOf(Channel channel, String handlerName) {
        Objects.requireNonNull(channel, "channel");
        ChannelPipeline pipeline = channel.pipeline();
        if (handlerName != null) {
            ChannelHandler named = pipeline.get(handlerName);
            if (named instanceof HeartbeatHandler h && h.monitor() == this) {
                return h;
            }
            throw new IllegalArgumentException("no Heartbeat handler of this monitor named '" + handlerName
                    + "' in the pipeline of " + channel);
        }
        HeartbeatHandler found = null;
        String foundName = null;
        for (Map.Entry<String, ChannelHandler> e : pipeline) {
            if (e.getValue() instanceof HeartbeatHandler h && h.monitor() == this) {
                if (found != null) {
                    throw new IllegalArgumentException("the pipeline of " + channel + " has more than one Heartbeat "
                            + "handler of this monitor ('" + foundName + "', '" + e.getKey() + "'): name one");
                }
                found = h;
                foundName = e.getKey();
            }
        }
        if (found == null) {
            throw new IllegalArgumentException("no Heartbeat handler of this monitor in the pipeline of " + channel);
        }
        return found;
    }

    private void requireOpen() {
        if (worker.isClosed()) {
            throw new IllegalStateException("this HeartbeatMonitor is closed");
        }
    }

    /**
     * Runs one worker cycle on the calling thread, at the ticker's current time: for a monitor built
     * {@link Builder#manual()}, in tests. Also allowed, for compatibility, on a monitor that was never
     * started and is not manual (its channels were warned about when activated: build it manual()).
     *
     * @return requests applied plus entries expired
     * @throws IllegalStateException if the worker was started or is closed, or another thread is in
     *     runOnce now
     */
    public int runOnce() {
        return worker.doWork();
    }

    /** The counters; any thread. */
    public HeartbeatStats stats() {
        TimerStats timer = worker.stats();
        long thread = worker.cpuTimeNanos();
        long cpu = thread < 0 ? thread : thread + timer.hostedNanos();
        return new HeartbeatStats(channels.sum(),
                idleEvents[READER_KIND].sum(), idleEvents[WRITER_KIND].sum(), idleEvents[ALL_KIND].sum(),
                closes(CloseReason.READER_IDLE), closes(CloseReason.WRITER_IDLE), closes(CloseReason.ALL_IDLE),
                closes(CloseReason.PING_TIMEOUT), pingsSent.sum(), pingWriteFailures.sum(), stallRechecks.sum(),
                actionFailures.sum(), dispatchRejected.sum(), dispatchFailures.sum(), staleVerdicts.sum(),
                unmonitoredChannels.sum(), cpu, timer, closesByReason(), pingsByProbe());
    }

    private Map<String, ProbeStats> pingsByProbe() {
        Map<String, ProbeStats> byProbe = new TreeMap<>();
        for (PingCounters c : pingCounters.values()) {
            byProbe.put(c.probe, c.snapshot());
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
                counters = new PingCounters(name);
                pingCounters.put(name, counters);
                for (SampleSink sink : sinks) {
                    sink.probeAdded(counters);
                }
            }
            return counters;
        }
    }

    /** Adds a sink for the distributions and the per-probe counters (see {@link SampleSink#addTo}); any thread. */
    synchronized void addSampleSink(SampleSink sink) {
        Objects.requireNonNull(sink, "sink");
        for (PingCounters counters : pingCounters.values()) {
            sink.probeAdded(counters);
        }
        SampleSink[] old = sinks;
        SampleSink[] grown = Arrays.copyOf(old, old.length + 1);
        grown[old.length] = sink;
        sinks = grown;
    }

    /** Worker: the coalescing window for a configuration (see {@link Builder#maxCoalescing}). */
    /**
     * Any thread: {@code config} bound to this monitor, shared with the handlers made or reconfigured
     * with the same configuration recently. The cache is racy on purpose: a {@link BoundConfig} is
     * immutable (final fields), so every thread sees a whole one or none, and a miss, or a lost
     * store, only costs one more allocation.
     */
    BoundConfig bind(HeartbeatConfig config) {
        BoundConfig[] cache = bound;
        int i = System.identityHashCode(config) & (cache.length - 1);
        BoundConfig b = cache[i];
        if (b == null || b.config != config) {
            b = new BoundConfig(this, config);
            cache[i] = b;
        }
        return b;
    }

    long coalescingWindow(HeartbeatConfig cfg) {
        return Math.min(cfg.coalescingNanos, maxCoalescingNanos);
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

    /** The ticker the handlers stamp activity with. */
    public Ticker ticker() {
        return ticker;
    }

    /** Whether {@link #close} was called. */
    public boolean isClosed() {
        return worker.isClosed();
    }

    /**
     * Stops the worker (waiting up to 5 s). Idempotent. Channels stay open; their handlers stop
     * acting on idleness.
     */
    @Override
    public void close() {
        worker.close();
    }

    /** Stops the worker, waiting up to {@code timeout}; returns whether it ended. Idempotent. */
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

    /**
     * Overload (Envoy's {@code reduce_timeouts}): from now on, every {@code closeWhenIdle} channel is
     * closed once idle for {@code factor} times its timeout (reason as usual: {@code READER_IDLE} and so
     * on), so that a server short of memory or file descriptors sheds its idlest connections first;
     * {@code reduceIdleTimeouts(1)} ends it. The drop-in {@code events()} policy and the ping policy
     * are not scaled. A lower factor takes effect at once: the worker looks at every channel again at
     * its next cycle (one pass over the wheel); a higher one as each channel's next check comes.
     * Any thread; idempotent.
     *
     * @param factor in (0, 1]
     * @throws IllegalArgumentException if out of range
     * @throws IllegalStateException if this monitor is closed
     */
    public void reduceIdleTimeouts(double factor) {
        if (!(factor > 0 && factor <= 1)) {
            throw new IllegalArgumentException("reduceIdleTimeouts needs a factor in (0, 1]: " + factor);
        }
        requireOpen();
        double before = overloadFactor;
        overloadFactor = factor;
        if (factor < before) {
            worker.execute(this::lookAgainUnderOverload);
        }
    }

    /** The factor idle timeouts are scaled by now: 1 unless {@link #reduceIdleTimeouts} lowered it. Any thread. */
    public double idleTimeoutFactor() {
        return overloadFactor;
    }

    /** Event loop: a channel doubled its ping interval on the peer's {@code too_many_pings}. */
    void pingBackoff() {
        pingBackoffs.increment();
    }

    /** How many times a channel doubled its ping interval because its peer said {@code too_many_pings}. */
    public long pingBackoffs() {
        return pingBackoffs.sum();
    }

    /** Closes made because of a reduced idle timeout. Any thread. */
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
            if (h == pacer || h == followUp) {
                continue;
            }
            HeartbeatConfig cfg = h.config();
            if (factor < 1 && OverloadRule.applies(cfg)) {
                long at = OverloadRule.nextDeadline(h, cfg, factor, h.deadline());
                if (at - h.deadline() < 0) {
                    // Not in the past: a check that comes due late counts as a stall of the worker.
                    worker.move(h, Rule.latest(at, now));
                }
            }
        }
    }

    /** Actions that waited for the {@link Builder#actionBudget}; 0 without one. Any thread. */
    public long deferredActions() {
        return budget == null ? 0 : budget.deferred();
    }

    /** The longest an action waited for the {@link Builder#actionBudget}; zero without one. Any thread. */
    public Duration worstDeferral() {
        return Duration.ofNanos(budget == null ? 0 : budget.worstDelayNanos());
    }

    /**
     * The most actions the {@link Builder#actionBudget} handed over in one whole second of the monitor's
     * ticker (seconds counted from its zero, as a peer counting what it sees per second would); 0 without
     * a budget. Never more than the budget plus its bucket (a hundredth of it, at least 1): the bound
     * a storm test checks on the server's side, where delivery delays cannot blur it. Any thread.
     */
    public long busiestBudgetSecond() {
        return budget == null ? 0 : budget.busiestSecond();
    }

    /** How many times a {@link CloseVeto} held a close ({@link CloseDecision#extend}). */
    public long closesHeld() {
        return closesHeld.sum();
    }

    /** How many closes went ahead without asking the veto because their holds reached {@code maxCloseHold}. */
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
    void closing(Channel channel, CloseReason reason, long idleNanos) {
        closes.get(reason).increment();
        if (LOG.isDebugEnabled()) {
            LOG.debug("closing {}: {} (idle for {} ms)", channel, reason, TimeUnit.NANOSECONDS.toMillis(idleNanos));
        }
    }

    /** Event loop: a ping of {@code bound}'s probe was written. */
    void pingSent(BoundConfig bound) {
        pingsSent.increment();
        if (bound.pings != null) { // null only if the channel was reconfigured away from pinging meanwhile
            bound.pings.sent.increment();
        }
    }

    /**
     * Event loop or worker: a ping of {@code bound}'s probe was answered in time; {@code rttNanos} is
     * its round-trip time when a matched answer timed it, negative otherwise (any-inbound answers).
     */
    void pingAcked(BoundConfig bound, long rttNanos) {
        PingCounters pings = bound.pings;
        if (pings == null) {
            return;
        }
        pings.acked.increment();
        if (rttNanos >= 0) {
            for (SampleSink sink : sinks) {
                sink.pingRtt(pings, rttNanos);
            }
        }
    }

    /** Worker: a ping of {@code bound}'s probe went unanswered for its timeout. */
    void pingMissed(BoundConfig bound) {
        if (bound.pings != null) {
            bound.pings.missed.increment();
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
        pings.failed.increment();
        if (pings.firstFailure()) {
            pingFailureWarnings.increment();
            LOG.warn("Heartbeat could not write a {} ping for {}; a peer that stays silent is closed as PING_TIMEOUT "
                    + "all the same. Later failures of {} pings are counted (pings.failed) and logged at DEBUG only",
                    probe.name(), handler, probe.name(), t);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug("Heartbeat could not write a {} ping for {}: {}", probe.name(), handler, t.toString());
        }
    }

    /** For tests: how many failed pings were logged at WARN. */
    long pingFailureWarnings() {
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
    boolean warnedUnmonitored() {
        return warnedUnmonitored.get();
    }

    /** For tests: whether the WARN about channels activated on a monitor that does not run was logged. */
    boolean warnedNotRunning() {
        return warnedNotRunning.get();
    }

    /** The event loop that hosts the worker's cycles ({@link Builder#hostedBy}), or null. */
    EventExecutor hostExecutor() {
        return hostExecutor;
    }

    /** For tests, on the thread that drives {@link #runOnce()}: the batch of {@code executor} (made if new). */
    EventLoopBatch batchFor(EventExecutor executor) {
        return batches.of(executor);
    }

    /** For tests, on the thread that drives {@link #runOnce()}: how many event loop batches are remembered. */
    int eventLoopBatches() {
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
            if (lateness > stallAfterNanos && handler.takeStallGrace()) {
                // The worker was late (a pause?): stamps the event loops would have written meanwhile
                // may be missing. Look again after as long as the delay before judging.
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
        private void noteWhetherItCanWait(EventLoopBatch batch, HeartbeatConfig cfg, int actions) {
            long window = coalescingWindow(cfg);
            if ((actions & ~cfg.policy.deferrableBits()) != 0 || window < 2) {
                batch.mustNotWait();
            } else if (window < lazyWindow) {
                lazyWindow = window;
            }
        }

        /** The first point of the grid of {@code window} (a power of two) after {@code now}: at most a window on. */
        private long gridPointAfter(long now, long window) {
            return (now + window) & -window;
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

        private void dispatch(HeartbeatHandler handler, HeartbeatConfig cfg, int actions, int serial, long now) {
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

    /**
     * The default {@link Builder#maxCoalescing}: 2^24 ns. A worker then wakes at most 60 times a second
     * however many channels it watches, and a ping chain (ping, re-ping, close: three coalesced checks)
     * adds at most 3 x (16.8 ms + a tick) to the close (the README's load test section has the
     * measured trade-off between this window's wake-ups and lateness).
     */
    static final long DEFAULT_MAX_COALESCING_NANOS = 1L << 24; // 16.8 ms

    /** Configures a {@link HeartbeatMonitor}; each setter validates its value. */
    public static final class Builder {
        private Ticker ticker = Ticker.system();
        private Duration tick = Duration.ofNanos(TimingWheel.DEFAULT_TICK_NANOS);
        private String threadName = "heartbeat-monitor";
        private long stallThresholdNanos = TimeUnit.MILLISECONDS.toNanos(100);
        private int maxExpirationsPerCycle = 65_536;
        private long maxCoalescingNanos = DEFAULT_MAX_COALESCING_NANOS;
        private EventExecutor hostExecutor;
        private Duration hostWatchdog = Duration.ofMillis(250);
        /** Whether {@link #hostWatchdog} was called: it is refused without {@link #hostedBy}. */
        private boolean hostWatchdogSet;
        private boolean manual;
        private Randomness randomness;
        private int actionBudget;
        private boolean lazyHandOffs;

        private Builder() {
        }

        /**
         * Runs the worker's cycles on {@code eventLoop} instead of on the worker's own thread, which
         * then only watches that they run (see {@link #hostWatchdog}). A planned cycle is one task on
         * the loop: a loop that is awake for I/O anyway runs it without waking for it, whereas the
         * worker's own thread pays a park and an unpark for every cycle, which on a virtual machine
         * costs tens of microseconds of CPU however little the cycle does. The cycles judge channels
         * and hand actions to their event loops as before; the host's own channels get theirs
         * without a cross-thread wake-up. Choose a loop of the server's I/O group; a cycle's work is
         * bounded by {@link #maxChecksPerCycle}. Off by default.
         */
        public Builder hostedBy(EventExecutor eventLoop) {
            this.hostExecutor = Objects.requireNonNull(eventLoop, "eventLoop");
            return this;
        }

        /**
         * With {@link #hostedBy}: how often the worker's own thread checks that the host loop runs the
         * cycles it is asked for. If the loop has not run a due cycle within a period (blocked, or shut
         * down), the worker's thread runs them until the loop runs one again; checks are then late by
         * up to about a period (and deferred as a stall if that is beyond {@link #stallThreshold}).
         * The thread wakes once a period, so longer periods cost less. 250 ms by default. Needs
         * {@link #hostedBy} (checked by {@link #build()}).
         *
         * @throws IllegalArgumentException if not in [1 ms, 1 min]
         */
        public Builder hostWatchdog(Duration period) {
            TimerWorker.checkWatchdog(period);
            this.hostWatchdog = period;
            this.hostWatchdogSet = true;
            return this;
        }

        /**
         * A monitor for virtual time: driven only by {@link HeartbeatMonitor#runOnce()} on the
         * caller's thread (with a {@link dev.heartbeat.core.ManualTicker}, say), never started:
         * {@link HeartbeatMonitor#startWorker()} is refused, and its handlers are not warned about as
         * channels of a monitor that does not run. With {@link #hostedBy}, {@code runOnce()} stands for
         * the host loop's cycles (the host's own hand-offs stay eager, as there).
         */
        public Builder manual() {
            this.manual = true;
            return this;
        }

        /** {@link #manual()}, with the randomness its channels draw fixed by a test (see {@link Randomness}). */
        Builder manual(Randomness source) {
            this.randomness = Objects.requireNonNull(source, "randomness");
            return manual();
        }

        /**
         * Timer slack: the most an idle channel's action may be delayed so that the checks of many
         * channels share one worker wake-up. Each configuration's window is the largest power of two
         * of nanoseconds at most 1/64 of its shortest timeout (ping timeout included), capped by this;
         * an action then comes at most one tick plus its window after its deadline, never before it.
         * Rounded down to a power of two; 2^24 ns (16.8 ms) by default; {@code Duration.ZERO} turns
         * coalescing off (the worker then wakes for every tick that has work).
         *
         * @throws IllegalArgumentException if negative or above 1 s
         */
        public Builder maxCoalescing(Duration max) {
            Objects.requireNonNull(max, "maxCoalescing");
            if (max.isNegative() || max.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("maxCoalescing must be in [0, 1s]: " + max);
            }
            this.maxCoalescingNanos = Long.highestOneBit(max.toNanos());
            return this;
        }

        /**
         * Storm control: hands at most {@code perSecond} actions a second (pings, closes, idle events,
         * goodbyes) to the event loops, in bursts of at most a hundredth of that, so that connections
         * that went silent together (a network blip, a deploy) are pinged or closed at a steady rate.
         * What exceeds it waits, oldest first, and is handed over as the budget allows: every check is
         * still judged on time and checked again on the event loop, so a deferral only delays an
         * action, by at most (actions waiting) / {@code perSecond}; {@code deferredActions()} and
         * {@code worstDeferral()} report it. 0 (the default) turns it off.
         *
         * @param perSecond 0, or 1 to 100,000,000
         */
        public Builder actionBudget(int perSecond) {
            if (perSecond < 0 || perSecond > ActionBudget.MAX_RATE) {
                throw new IllegalArgumentException("actionBudget must be 0 (off) or in [1, " + ActionBudget.MAX_RATE
                        + "] a second: " + perSecond);
            }
            this.actionBudget = perSecond;
            return this;
        }

        /**
         * Whether the worker may hand an event loop actions that can wait (the ping policy's pings)
         * without waking it: Netty's {@code lazyExecute}, so that a loop busy with I/O
         * runs them at its next wake-up instead of paying a wake-up of its own for them (an
         * {@code eventfd} write and a return from {@code epoll_wait} on Linux). A batch may wait until
         * the next point of its configuration's coalescing grid (see {@link #maxCoalescing}); the
         * worker arms an entry of its own there, and the first cycle at or after that point wakes a
         * loop that has not run the batch. A lazily handed ping so goes out at most a coalescing
         * window plus a tick later than an eager one, and its answer is timed from when it was
         * written, so no check comes sooner. Closes, idle events and goodbyes always wake their loop.
         * Needs a {@link #maxCoalescing} window (checked by {@link #build()}).
         * A loop hosting the worker's cycles ({@link #hostedBy}) runs its own hand-offs right after the
         * cycle, so they stay eager.
         *
         * <p>Off by default: measured at the README's 100k tcp load test with the worker on its own
         * thread, it saved too few of the event loops' wake-ups to see against run-to-run noise and
         * cost the worker more wake-ups (the README has the figures; likely, a ping written a few
         * milliseconds later moves its answer past the coalesced answer check, which then needs
         * another, and the follow-up entry makes cycles of its own). It can
         * pay where loops are busy with I/O and a cross-thread wake-up costs more than a worker cycle.
         */
        public Builder lazyHandOffs(boolean lazy) {
            this.lazyHandOffs = lazy;
            return this;
        }

        /** The time source for stamps and the wheel; {@link Ticker#system()} by default. */
        public Builder ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /**
         * The wheel's tick (rounded up to a power of two nanoseconds): the most an idle channel is
         * acted on after its timeout, while the worker keeps up. 2^20 ns (1.05 ms) by default.
         *
         * @throws IllegalArgumentException if not in [1 ns, 2^30 ns]
         */
        public Builder tick(Duration tick) {
            TimerWorker.checkTick(tick);
            this.tick = tick;
            return this;
        }

        /** The worker thread's name; "heartbeat-monitor" by default. */
        public Builder threadName(String name) {
            this.threadName = TimerWorker.checkThreadName(name);
            return this;
        }

        /**
         * A check that comes due this much later than the wheel's own lateness (up to one tick)
         * means the worker (or the whole process) stalled; it is then re-judged after as long again,
         * so that a pause does not close every connection at once. 100 ms by default; a threshold
         * longer than {@code Long.MAX_VALUE} ns means never.
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder stallThreshold(Duration threshold) {
            Objects.requireNonNull(threshold, "stallThreshold");
            if (threshold.isNegative()) {
                throw new IllegalArgumentException("stallThreshold cannot be negative: " + threshold);
            }
            // A threshold beyond a long of nanoseconds (292 years) means never: saturate, as documented.
            this.stallThresholdNanos = threshold.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0 ? Long.MAX_VALUE
                    : threshold.toNanos();
            return this;
        }

        /**
         * At most this many checks per worker cycle; 65,536 by default.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder maxChecksPerCycle(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("maxChecksPerCycle must be positive: " + max);
            }
            this.maxExpirationsPerCycle = max;
            return this;
        }

        /**
         * A monitor, not yet started: call {@link HeartbeatMonitor#startWorker()}; or, if built
         * {@link #manual()}, drive it with {@code runOnce()}.
         *
         * @throws IllegalStateException if a setting would be ignored: {@link #hostWatchdog} without
         *     {@link #hostedBy}, or {@link #lazyHandOffs} without a coalescing window to wait in
         *     ({@link #maxCoalescing} below 2 ns)
         */
        public HeartbeatMonitor build() {
            if (hostWatchdogSet && hostExecutor == null) {
                throw new IllegalStateException("hostWatchdog (" + hostWatchdog + ") needs hostedBy(EventExecutor): "
                        + "without a host loop there is nothing to watch");
            }
            if (lazyHandOffs && maxCoalescingNanos < 2) {
                throw new IllegalStateException("lazyHandOffs needs a coalescing window to wait in: maxCoalescing is "
                        + Duration.ofNanos(maxCoalescingNanos) + ", so every hand-off would wake its loop");
            }
            NettyVersions.checkOnce(); // one WARN per class loader if the Netty jars' versions differ
            return new HeartbeatMonitor(this);
        }
    }
}
