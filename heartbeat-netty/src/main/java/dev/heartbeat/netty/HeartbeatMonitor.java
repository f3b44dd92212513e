package dev.heartbeat.netty;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import dev.heartbeat.core.ExpiryHandler;
import dev.heartbeat.core.Ticker;
import dev.heartbeat.core.TimerWorker;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.util.concurrent.EventExecutor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * <p>Thread-safe. For tests in virtual time, build it with a {@link dev.heartbeat.core.ManualTicker},
 * do not start it, and call {@link #runOnce()} after moving the ticker; the actions then run on each
 * channel's event loop (for {@code EmbeddedChannel}: {@code runPendingTasks()}).
 */
public final class HeartbeatMonitor implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HeartbeatMonitor.class);

    static final int READER_KIND = 0;
    static final int WRITER_KIND = 1;
    static final int ALL_KIND = 2;
    static final int PING_KIND = 3;

    final TimerWorker<HeartbeatHandler> worker;
    final Ticker ticker;
    private final long stallThresholdNanos;

    // Counters bumped on event loops (LongAdder: no contention between loops) or on the worker.
    private final LongAdder channels = new LongAdder();
    private final LongAdder[] idleEvents = adders(3);
    private final LongAdder[] idleCloses = adders(4);
    private final LongAdder pingsSent = new LongAdder();
    private final LongAdder actionFailures = new LongAdder();
    private final LongAdder stallRechecks = new LongAdder();
    private final LongAdder dispatchRejected = new LongAdder();

    // Worker only: the actions the handler being judged decided (scratch for one expiry, so that a
    // handler does not carry it), and the batch of each event loop seen so far.
    int verdict;
    private final IdentityHashMap<EventExecutor, EventLoopBatch> batchByLoop = new IdentityHashMap<>();
    private EventLoopBatch[] batches = new EventLoopBatch[0];
    private long lastActionFailureLog;

    private HeartbeatMonitor(Builder b) {
        this.ticker = b.ticker;
        this.stallThresholdNanos = b.stallThresholdNanos;
        this.worker = TimerWorker.builder(new Judge())
                .ticker(b.ticker)
                .tick(b.tick)
                .threadName(b.threadName)
                .maxExpirationsPerCycle(b.maxExpirationsPerCycle)
                .build();
        this.lastActionFailureLog = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);
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
     * @throws IllegalStateException if already started, closed, or driven with {@link #runOnce()}
     */
    public HeartbeatMonitor startWorker() {
        worker.start();
        return this;
    }

    /**
     * A new handler for one channel: add it to the channel's pipeline where
     * {@code IdleStateHandler} would go. Not sharable between channels.
     *
     * @throws IllegalStateException if this monitor is closed
     */
    public ChannelHandler newHandler(HeartbeatConfig config) {
        Objects.requireNonNull(config, "config");
        if (worker.isClosed()) {
            throw new IllegalStateException("this HeartbeatMonitor is closed");
        }
        return new HeartbeatHandler(this, config);
    }

    /**
     * Switches the configuration of a channel's Heartbeat handler, for example from a short login
     * deadline to a long session timeout; idleness is then measured from now. Any thread; on the
     * channel's event loop it allocates nothing beyond the configuration itself.
     *
     * @throws IllegalArgumentException if the channel's pipeline has no handler of this monitor
     */
    public void reconfigure(Channel channel, HeartbeatConfig config) {
        Objects.requireNonNull(config, "config");
        HeartbeatHandler handler = handlerOf(channel);
        if (channel.eventLoop().inEventLoop()) {
            handler.reconfigure(config);
        } else {
            channel.eventLoop().execute(() -> handler.reconfigure(config));
        }
    }

    /**
     * The configuration a channel's Heartbeat handler currently uses.
     *
     * @throws IllegalArgumentException if the channel's pipeline has no handler of this monitor
     */
    public HeartbeatConfig configOf(Channel channel) {
        return handlerOf(channel).config();
    }

    private HeartbeatHandler handlerOf(Channel channel) {
        Objects.requireNonNull(channel, "channel");
        HeartbeatHandler handler = channel.pipeline().get(HeartbeatHandler.class);
        if (handler == null || handler.monitor != this) {
            throw new IllegalArgumentException("no Heartbeat handler of this monitor in the pipeline of " + channel);
        }
        return handler;
    }

    /**
     * Runs one worker cycle on the calling thread, at the ticker's current time: for a monitor that
     * was never started, in tests.
     *
     * @return requests applied plus entries expired
     */
    public int runOnce() {
        return worker.doWork();
    }

    /** The counters; any thread. */
    public HeartbeatStats stats() {
        long cpu = -1;
        Thread thread = worker.thread();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (thread.isAlive() && threads.isThreadCpuTimeSupported()) {
            cpu = threads.getThreadCpuTime(thread.getId());
        }
        return new HeartbeatStats(channels.sum(),
                idleEvents[READER_KIND].sum(), idleEvents[WRITER_KIND].sum(), idleEvents[ALL_KIND].sum(),
                idleCloses[READER_KIND].sum(), idleCloses[WRITER_KIND].sum(), idleCloses[ALL_KIND].sum(),
                idleCloses[PING_KIND].sum(), pingsSent.sum(), stallRechecks.sum(), actionFailures.sum(),
                dispatchRejected.sum(), cpu, worker.stats());
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

    void channelOpened() {
        channels.increment();
    }

    void channelClosed() {
        channels.decrement();
    }

    void idleEvent(int kind) {
        idleEvents[kind].increment();
    }

    void idleClose(int kind) {
        idleCloses[kind].increment();
    }

    void pingSent() {
        pingsSent.increment();
    }

    void actionFailed() {
        actionFailures.increment();
    }

    void actionFailed(HeartbeatHandler handler, Throwable t) {
        actionFailures.increment();
        long now = System.nanoTime();
        synchronized (this) { // rare: a failing action is a bug in a downstream handler
            if (now - lastActionFailureLog < TimeUnit.SECONDS.toNanos(1)) {
                return;
            }
            lastActionFailureLog = now;
        }
        LOG.warn("Heartbeat action failed for {}", handler, t);
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
    private final class Judge implements ExpiryHandler<HeartbeatHandler> {

        @Override
        public void onExpired(HeartbeatHandler handler, long now) {
            HeartbeatConfig cfg = handler.config();
            if (!cfg.tracksAnything()) {
                return; // reconfigured to track nothing; the cancel request is on its way
            }
            handler.prepare(cfg);
            long lateness = now - handler.deadline();
            if (lateness > stallThresholdNanos && handler.takeStallGrace()) {
                // The worker was late (a pause?): stamps the event loops would have written meanwhile
                // may be missing. Look again after as long as the delay before judging.
                stallRechecks.increment();
                worker.rearm(handler, now + lateness);
                return;
            }
            long next = handler.judge(cfg, now);
            worker.rearm(handler, next);
            int actions = verdict;
            if (actions != 0) {
                dispatch(handler, actions);
            }
        }

        @Override
        public void onCycleEnd() {
            EventLoopBatch[] all = batches;
            for (EventLoopBatch batch : all) {
                if (!batch.submitIfNeeded()) {
                    dispatchRejected.increment();
                    forget(batch);
                }
            }
        }

        private void dispatch(HeartbeatHandler handler, int actions) {
            EventExecutor executor;
            try {
                executor = handler.ctx.executor();
            } catch (IllegalStateException notRegistered) {
                return; // never registered; the next check will try again
            }
            EventLoopBatch batch = batchByLoop.get(executor);
            if (batch == null) {
                batch = remember(executor);
            }
            if (handler.offerActions(actions) == 0) {
                batch.push(handler);
            }
        }

        private EventLoopBatch remember(EventExecutor executor) {
            for (EventLoopBatch old : batches) {
                if (old.executor.isTerminated()) {
                    forget(old);
                }
            }
            EventLoopBatch batch = new EventLoopBatch(executor, HeartbeatMonitor.this);
            batchByLoop.put(executor, batch);
            batches = Arrays.copyOf(batches, batches.length + 1);
            batches[batches.length - 1] = batch;
            return batch;
        }

        private void forget(EventLoopBatch batch) {
            batch.discard();
            batchByLoop.remove(batch.executor);
            EventLoopBatch[] kept = new EventLoopBatch[batches.length - 1];
            int i = 0;
            for (EventLoopBatch b : batches) {
                if (b != batch && i < kept.length) {
                    kept[i++] = b;
                }
            }
            batches = kept;
        }
    }

    /** Configures a {@link HeartbeatMonitor}; each setter validates its value. */
    public static final class Builder {
        private Ticker ticker = Ticker.system();
        private Duration tick = Duration.ofNanos(1L << 20);
        private String threadName = "heartbeat-monitor";
        private long stallThresholdNanos = TimeUnit.MILLISECONDS.toNanos(100);
        private int maxExpirationsPerCycle = 65_536;

        private Builder() {
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
            TimerWorker.builder((e, now) -> { }).tick(tick); // validates, with the same message
            this.tick = tick;
            return this;
        }

        /** The worker thread's name; "heartbeat-monitor" by default. */
        public Builder threadName(String name) {
            TimerWorker.builder((e, now) -> { }).threadName(name);
            this.threadName = name;
            return this;
        }

        /**
         * A check that comes due this late means the worker (or the whole process) stalled; it is
         * then re-judged after as long again, so that a pause does not close every connection at
         * once. 100 ms by default.
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder stallThreshold(Duration threshold) {
            Objects.requireNonNull(threshold, "stallThreshold");
            if (threshold.isNegative()) {
                throw new IllegalArgumentException("stallThreshold cannot be negative: " + threshold);
            }
            this.stallThresholdNanos = threshold.toNanos();
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

        /** A monitor, not yet started: call {@link HeartbeatMonitor#startWorker()}, or drive it with runOnce(). */
        public HeartbeatMonitor build() {
            return new HeartbeatMonitor(this);
        }
    }
}
