/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Randomness;
import dev.heartbeat.netty.engine.ActionBudget;
import dev.heartbeat.netty.engine.CheckGrid;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import dev.heartbeat.netty.engine.MonitorEngine;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.heartbeat.core.Ticker;
import dev.heartbeat.core.TimerWorker;
import dev.heartbeat.core.TimingWheel;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.util.concurrent.EventExecutor;

// Over 500 lines (listed in checkstyle.xml): the public API's documentation and the Builder's two dozen documented
// settings; every method body is one call into the MonitorEngine.
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
 * task, no allocation on reads and writes, one ticker read per read batch and one per flush of
 * completed writes, none for answers flushed as their read batch ends, which share the batch's read.
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

    /** Everything that runs: the wheel, the worker, the counters, the drain, the overload and the budget. */
    final MonitorEngine engine;

    private HeartbeatMonitor(Builder b) {
        this.engine = new MonitorEngine(b.ticker, b.manual, b.tick, b.threadName, b.maxExpirationsPerCycle,
                b.maxCoalescingNanos, b.hostExecutor, b.hostWatchdog, b.stallThresholdNanos, b.actionBudget,
                b.lazyHandOffs, b.randomness, b.gridPhase(), b.gridBurst, b.coarseWriteClockNanos);
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
        engine.startWorker();
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
        return engine.newHandler(config.plan);
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
        engine.requireOpen();
        return onHandler(channel, handlerName, h -> h.reconfigure(config.plan));
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
        return engine.drain(window);
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
        return handlerOf(channel, null).config().owner;
    }

    /**
     * The configuration of the Heartbeat handler added under {@code handlerName}.
     *
     * @throws IllegalArgumentException if the channel's pipeline has no handler of this monitor by that name
     */
    public HeartbeatConfig configOf(Channel channel, String handlerName) {
        Objects.requireNonNull(handlerName, "handlerName");
        return handlerOf(channel, handlerName).config().owner;
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

    /** Answers to Heartbeat's pings that the handlers consumed (kept from the application); any thread. */
    public long answersConsumed() {
        return engine.answersConsumed();
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
            if (named instanceof HeartbeatHandler h && h.monitor() == engine) {
                return h;
            }
            throw new IllegalArgumentException("no Heartbeat handler of this monitor named '" + handlerName
                    + "' in the pipeline of " + channel);
        }
        HeartbeatHandler found = null;
        String foundName = null;
        for (Map.Entry<String, ChannelHandler> e : pipeline) {
            if (e.getValue() instanceof HeartbeatHandler h && h.monitor() == engine) {
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
        return engine.runOnce();
    }

    /** The counters; any thread. */
    public HeartbeatStats stats() {
        return engine.stats();
    }

    /** The ticker the handlers stamp activity with. */
    public Ticker ticker() {
        return engine.ticker();
    }

    /** Whether {@link #close} was called. */
    public boolean isClosed() {
        return engine.isClosed();
    }

    /**
     * Stops the worker (waiting up to 5 s). Idempotent. Channels stay open; their handlers stop
     * acting on idleness.
     */
    @Override
    public void close() {
        engine.close();
    }

    /** Stops the worker, waiting up to {@code timeout}; returns whether it ended. Idempotent. */
    public boolean close(Duration timeout) {
        return engine.close(timeout);
    }

    @Override
    public String toString() {
        return engine.toString();
    }

    /**
     * Overload (Envoy's {@code reduce_timeouts}): from now on, every {@code closeWhenIdle} channel is
     * closed once idle for {@code factor} times its timeout (reason as usual: {@code READER_IDLE} and so
     * on), so that a server short of memory or file descriptors sheds its idlest connections first;
     * {@code reduceIdleTimeouts(1)} ends it. The drop-in {@code events()} policy and the ping policy
     * are not scaled. A lower factor takes effect at once: the worker looks at every channel again at
     * its next cycle (one pass over the wheel); a higher one as each channel's next check comes (a higher
     * one below 1 makes the same pass, for the checks it finds later than its deadlines: a close decided
     * under the lower factor and found not yet due under the higher one).
     * Any thread; idempotent.
     *
     * @param factor in (0, 1]
     * @throws IllegalArgumentException if out of range
     * @throws IllegalStateException if this monitor is closed
     */
    public void reduceIdleTimeouts(double factor) {
        engine.reduceIdleTimeouts(factor);
    }

    /** The factor idle timeouts are scaled by now: 1 unless {@link #reduceIdleTimeouts} lowered it. Any thread. */
    public double idleTimeoutFactor() {
        return engine.idleTimeoutFactor();
    }

    /** How many times a channel doubled its ping interval because its peer said {@code too_many_pings}. */
    public long pingBackoffs() {
        return engine.pingBackoffs();
    }

    /** Closes made because of a reduced idle timeout. Any thread. */
    public long overloadCloses() {
        return engine.overloadCloses();
    }

    /** Actions that waited for the {@link Builder#actionBudget}; 0 without one. Any thread. */
    public long deferredActions() {
        return engine.deferredActions();
    }

    /** The longest an action waited for the {@link Builder#actionBudget}; zero without one. Any thread. */
    public Duration worstDeferral() {
        return engine.worstDeferral();
    }

    /**
     * The most actions the {@link Builder#actionBudget} handed over in one whole second of the monitor's
     * ticker (seconds counted from its zero, as a peer counting what it sees per second would); 0 without
     * a budget. Never more than the budget plus its bucket (a hundredth of it, at least 1): the bound
     * a storm test checks on the server's side, where delivery delays cannot blur it. Any thread.
     */
    public long busiestBudgetSecond() {
        return engine.busiestBudgetSecond();
    }

    /** How many times a {@link CloseVeto} held a close ({@link CloseDecision#extend}). */
    public long closesHeld() {
        return engine.closesHeld();
    }

    /** How many closes went ahead without asking the veto because their holds reached {@code maxCloseHold}. */
    public long closeHoldsExpired() {
        return engine.closeHoldsExpired();
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
        /** A test's phase for the coalescing grid ({@link #gridPhase(long)}), or null: drawn, or 0 if manual. */
        private Long gridPhase;
        /** The most checks a grid point takes before later ones go finer ({@link #gridBurst(int)}). */
        private int gridBurst = CheckGrid.BURST;
        private int actionBudget;
        private boolean lazyHandOffs;
        /** The coarse write clock's resolution ({@link #coarseWriteClock}), 0: off. */
        private long coarseWriteClockNanos;

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
         * the host loop's cycles (the host's own hand-offs stay eager, as there). Its coalescing grids'
         * points are multiples of each window on its ticker, so that a test can tell when checks come; any
         * other monitor shifts its grids by a phase of its own, drawn at random.
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
         * A test's phase for the coalescing grid: its points are then {@code phase} plus multiples of each
         * window on the ticker. Without it a manual monitor's phase is 0 and any other monitor draws one
         * (see {@link #gridPhase()}).
         */
        Builder gridPhase(long phase) {
            this.gridPhase = phase;
            return this;
        }

        /**
         * A test's most checks a coalescing grid point takes before later ones go to a finer grid (default
         * {@link CheckGrid#BURST}): a few channels fill a point only if it takes fewer.
         */
        Builder gridBurst(int burst) {
            if (burst < 1) {
                throw new IllegalArgumentException("gridBurst must be at least 1: " + burst);
            }
            this.gridBurst = burst;
            return this;
        }

        /**
         * Where this monitor's coalescing grid starts: a random phase for every monitor but a manual one, so
         * that monitors whose tickers share a clock (every process's {@code System.nanoTime} on a Linux host)
         * do not all wake at the same instants. With one grid for all, every server process on a host ran its
         * checks and handed out its pings at the same moments of each window, and their bursts queued
         * behind each other on the host's cores (see {@code MonitorEngine#gridPhase}).
         */
        private long gridPhase() {
            return gridPhase != null ? gridPhase : manual ? 0 : ThreadLocalRandom.current().nextLong();
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

        /**
         * Stamps completed writes with a time the worker publishes instead of reading the ticker once per write (a
         * {@code System.nanoTime()} on the write path, 20 to 60 ns on the machines measured; a write then costs a
         * volatile read and a compare). The worker publishes a time {@code resolution} ahead of its own, the latest a
         * write stamped with it can have completed, at least every half {@code resolution} (it wakes for that if
         * nothing else wakes it), so a check on the writes (writer idle, all idle, a ping when the writer is idle)
         * comes up to {@code resolution} later than with ticker readings, never sooner. If the
         * worker publishes late (a pause, a blocked host loop), the stamps given meanwhile are judged as the time it
         * published again, so a late worker makes no check early either. Reads are stamped with ticker readings as
         * before.
         *
         * <p>Off by default ({@code Duration.ZERO}): with it, the drop-in idle events are no longer those of
         * {@code IdleStateHandler} to the tick, but up to {@code resolution} later when they count writes. Choose
         * it where many writes go out between reads (pushes, broadcasts), with a resolution well below the shortest
         * writer timeout: 16 to 64 ms for timeouts of seconds.
         *
         * @throws IllegalArgumentException if not zero and not in [1 ms, 1 s]; {@link #build()} also refuses one
         *     below four of the wheel's {@link #tick ticks}
         */
        public Builder coarseWriteClock(Duration resolution) {
            Objects.requireNonNull(resolution, "resolution");
            if (!resolution.isZero() && (resolution.compareTo(Duration.ofMillis(1)) < 0
                    || resolution.compareTo(Duration.ofSeconds(1)) > 0)) {
                throw new IllegalArgumentException("coarseWriteClock must be 0 (off) or in [1ms, 1s]: " + resolution);
            }
            this.coarseWriteClockNanos = resolution.toNanos();
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
         * so that a pause does not close every connection at once (a channel's {@link HeartbeatMonitor#drain} slot that
         * came in the pause is not deferred: it closes at once). 100 ms by default; a threshold
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
            long given = TimerWorker.checkTick(tick);
            long tickNanos = given == 1 ? 1 : Long.highestOneBit(given - 1) << 1; // rounded up, as the wheel does
            if (coarseWriteClockNanos != 0 && coarseWriteClockNanos < 4 * tickNanos) {
                throw new IllegalStateException("coarseWriteClock (" + Duration.ofNanos(coarseWriteClockNanos)
                        + ") must be at least four ticks (" + Duration.ofNanos(4 * tickNanos) + "): the worker "
                        + "publishes it half a resolution ahead, and its cycles may come a tick late");
            }
            NettyVersions.checkOnce(); // one WARN per class loader if the Netty jars' versions differ
            return new HeartbeatMonitor(this);
        }
    }
}
