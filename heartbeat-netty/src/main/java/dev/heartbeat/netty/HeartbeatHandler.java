package dev.heartbeat.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketAddress;

import dev.heartbeat.core.TimerEntry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.WriteTimeoutException;
import io.netty.util.concurrent.EventExecutor;

/**
 * The per-channel handler: records activity on the event loop and is, at the same time, the
 * channel's one entry in the monitor's timing wheel, so a channel costs one object besides its
 * pipeline context. Created by {@link HeartbeatMonitor#newHandler}; not sharable.
 *
 * <p>Three threads meet here, each field says which:
 * <ul>
 * <li>the channel's <b>event loop</b> stamps activity (opaque stores of ticker readings) and runs
 *     the actions the worker hands it;</li>
 * <li>the monitor's <b>worker</b> judges idleness from the stamps when the entry comes due, moves
 *     the entry to its next check (the lazy re-arm) and decides actions;</li>
 * <li>the hand-off of actions is an atomic bit set plus a link in the event loop's
 *     {@link EventLoopBatch}.</li>
 * </ul>
 *
 * <p>Idle policies replay {@code IdleStateHandler}'s three timeout tasks on the worker: for each
 * enabled kind (reader, writer, all) the worker keeps the time that task would run next and, when it
 * comes due, makes the same decision the task would, from the same stamps. Because a decision is
 * taken as of the scheduled check time (never later than the worker's own now), events keep exactly
 * {@code IdleStateHandler}'s cadence; only their delivery is up to a tick later.
 */
final class HeartbeatHandler extends TimerEntry
        implements ChannelInboundHandler, ChannelOutboundHandler, ChannelFutureListener {

    // Action bits, worker -> event loop.
    static final int READER = 1;
    static final int READER_FIRST = 1 << 1;
    static final int WRITER = 1 << 2;
    static final int WRITER_FIRST = 1 << 3;
    static final int ALL = 1 << 4;
    static final int ALL_FIRST = 1 << 5;
    static final int SEND_PING = 1 << 6;
    static final int PING_TIMEOUT = 1 << 7;
    /**
     * The all-idle check ran before the writer check (IdleStateHandler's task order): with
     * observeOutput, the first of the two to look at the outbound buffer takes its change.
     */
    static final int ALL_BEFORE_WRITER = 1 << 8;

    // Worker judgement flags.
    private static final int READER_WAS_IDLE = 1;
    private static final int WRITER_WAS_IDLE = 1 << 1;
    private static final int ALL_WAS_IDLE = 1 << 2;
    private static final int AWAITING_ANSWER = 1 << 3;
    private static final int STALL_GRACE = 1 << 4;
    /** Unanswered pings are counted in the judgement word's upper half. */
    private static final int MISSED_PING = 1 << 16;
    private static final int FLAGS = MISSED_PING - 1;

    // Event-loop lifecycle.
    private static final byte NEW = 0;
    private static final byte ACTIVE = 1;
    private static final byte DESTROYED = 2;

    private static final VarHandle LAST_READ;
    private static final VarHandle LAST_WRITE;
    private static final VarHandle READING;
    private static final VarHandle PING_WRITTEN;
    private static final VarHandle CONFIG;
    private static final VarHandle ACTIONS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            LAST_READ = lookup.findVarHandle(HeartbeatHandler.class, "lastRead", long.class);
            LAST_WRITE = lookup.findVarHandle(HeartbeatHandler.class, "lastWrite", long.class);
            READING = lookup.findVarHandle(HeartbeatHandler.class, "reading", boolean.class);
            PING_WRITTEN = lookup.findVarHandle(HeartbeatHandler.class, "pingWritten", long.class);
            CONFIG = lookup.findVarHandle(HeartbeatHandler.class, "config", HeartbeatConfig.class);
            ACTIONS = lookup.findVarHandle(HeartbeatHandler.class, "actions", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final HeartbeatMonitor monitor;

    // ---- Written by the event loop (opaque), read by the worker (opaque). ----
    /** The configuration; an immutable object, so an opaque read sees it whole. */
    private HeartbeatConfig config;
    /** Ticker time of the end of the latest read batch. */
    @SuppressWarnings("unused") // accessed through LAST_READ
    private long lastRead;
    /** Ticker time the latest write completed. */
    @SuppressWarnings("unused") // accessed through LAST_WRITE
    private long lastWrite;
    /** Ticker time the event loop last wrote (or tried to write) a ping. */
    @SuppressWarnings("unused") // accessed through PING_WRITTEN
    private long pingWritten;
    /** A read batch is in progress (channelRead seen, channelReadComplete not yet). */
    @SuppressWarnings("unused") // accessed through READING
    private boolean reading;

    // ---- Written by the event loop only. ctx and output are set before the schedule request that
    // publishes them to the worker, which then reads them (plain); the rest the worker never reads. ----
    ChannelHandlerContext ctx;
    private byte lifecycle;
    private boolean voidWriteUnstamped;
    private OutputObserver output;

    // ---- Worker only. ----
    private HeartbeatConfig judgedConfig;
    private long nextReaderCheck;
    /**
     * The writer check of the idle policies; the ping policy, which has none, keeps the time it
     * decided its pending ping here instead (see {@link #pingSentAt()}). {@link #prepare} resets it
     * whenever the configuration changes, so the two uses never meet.
     */
    private long nextWriterCheck;
    private long nextAllCheck;
    private int judgement;

    // ---- Hand-off: worker sets bits (atomic OR), event loop takes them (atomic swap). ----
    @SuppressWarnings("unused") // accessed through ACTIONS
    private volatile int actions;
    /** Next in the event loop batch's stack; written by the worker before the push CAS. */
    HeartbeatHandler batchNext;

    HeartbeatHandler(HeartbeatMonitor monitor, HeartbeatConfig config) {
        this.monitor = monitor;
        this.config = config;
    }

    // ------------------------------------------------------------------ event loop: lifecycle

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (lifecycle != NEW || this.ctx != null) {
            throw new IllegalStateException("a Heartbeat handler serves one channel: create one per channel with "
                    + "HeartbeatMonitor.newHandler(config)");
        }
        this.ctx = ctx;
        Channel channel = ctx.channel();
        if (channel.isActive() && channel.isRegistered()) {
            initialize(ctx);
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        destroy();
    }

    @Override
    public void channelRegistered(ChannelHandlerContext ctx) {
        if (ctx.channel().isActive()) {
            initialize(ctx);
        }
        ctx.fireChannelRegistered();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        initialize(ctx);
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        destroy();
        ctx.fireChannelInactive();
    }

    private void initialize(ChannelHandlerContext ctx) {
        if (lifecycle != NEW) {
            return;
        }
        lifecycle = ACTIVE;
        this.ctx = ctx;
        HeartbeatConfig cfg = config;
        if (cfg.observeOutput) {
            output = new OutputObserver(ctx.channel());
        }
        long now = monitor.ticker.nanoTime();
        LAST_READ.setOpaque(this, now);
        LAST_WRITE.setOpaque(this, now);
        monitor.channelOpened();
        if (cfg.tracksAnything()) {
            monitor.worker.schedule(this, now + cfg.shortestNanos);
        }
    }

    private void destroy() {
        if (lifecycle == ACTIVE) {
            monitor.channelClosed();
            monitor.worker.cancel(this);
        }
        lifecycle = DESTROYED;
    }

    /** Event loop: switches configuration; idleness is measured afresh from now. */
    void reconfigure(HeartbeatConfig cfg) {
        CONFIG.setOpaque(this, cfg);
        if (lifecycle != ACTIVE) {
            return;
        }
        if (cfg.observeOutput && output == null) {
            output = new OutputObserver(ctx.channel());
        }
        long now = monitor.ticker.nanoTime();
        LAST_READ.setOpaque(this, now);
        LAST_WRITE.setOpaque(this, now);
        if (cfg.tracksAnything()) {
            // Due when the shortest timeout could first pass; a request's deadline tells the worker
            // when the stamps were reset (see prepare), and a shorter timeout takes effect at once.
            monitor.worker.schedule(this, now + cfg.shortestNanos);
        } else {
            monitor.worker.cancel(this);
        }
    }

    HeartbeatConfig config() {
        return (HeartbeatConfig) CONFIG.getOpaque(this);
    }

    // ------------------------------------------------------------------ event loop: the hot path

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (config.tracksReads) {
            READING.setOpaque(this, true);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if ((boolean) READING.getOpaque(this)) {
            LAST_READ.setOpaque(this, monitor.ticker.nanoTime());
            READING.setOpaque(this, false);
        }
        ctx.fireChannelReadComplete();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!config.tracksWrites) {
            ctx.write(msg, promise);
        } else if (promise.isVoid()) {
            // No listener fits on a void promise and unvoid() would allocate: count the write at flush.
            voidWriteUnstamped = true;
            ctx.write(msg, promise);
        } else {
            ctx.write(msg, promise).addListener(this);
        }
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        if (voidWriteUnstamped) {
            voidWriteUnstamped = false;
            LAST_WRITE.setOpaque(this, monitor.ticker.nanoTime());
        }
        ctx.flush();
    }

    /** A write completed (this handler is its own write listener, so a write allocates nothing). */
    @Override
    public void operationComplete(ChannelFuture future) {
        LAST_WRITE.setOpaque(this, monitor.ticker.nanoTime());
    }

    // ------------------------------------------------------------------ worker: judgement

    /**
     * Worker: decides, from the stamps, what is due at {@code now}; records actions in
     * {@code monitor.verdict} (the worker's scratch word) and returns when to look again.
     */
    long judge(HeartbeatConfig cfg, long now) {
        monitor.verdict = 0;
        return cfg.policy == HeartbeatConfig.Policy.PING ? judgePing(cfg, now) : judgeIdle(cfg, now);
    }

    /** Worker: whether to defer a check that came due {@code lateness} ns late because the worker stalled. */
    boolean takeStallGrace() {
        if ((judgement & STALL_GRACE) != 0) {
            return false;
        }
        judgement |= STALL_GRACE;
        return true;
    }

    /**
     * Worker, at the first expiry after a request: starts judging {@code cfg} if it is new. Every
     * request for a handler is due {@code shortestNanos} after the moment its stamps were set, so
     * that moment is {@code deadline() - shortestNanos}; each check starts from it, as
     * IdleStateHandler schedules its three tasks when it initialises.
     */
    void prepare(HeartbeatConfig cfg) {
        if (cfg == judgedConfig) {
            return;
        }
        judgedConfig = cfg;
        judgement = 0;
        long start = deadline() - cfg.shortestNanos;
        nextReaderCheck = start + cfg.readerIdleNanos;
        nextWriterCheck = start + cfg.writerIdleNanos;
        nextAllCheck = start + cfg.allIdleNanos;
        OutputObserver out = output;
        if (out != null) {
            out.writerSequence = ++out.sequence; // IdleStateHandler schedules the writer task before the all task
            out.allSequence = ++out.sequence;
        }
    }

    private long judgeIdle(HeartbeatConfig cfg, long now) {
        long read = (long) LAST_READ.getOpaque(this);
        long write = (long) LAST_WRITE.getOpaque(this);
        boolean busy = (boolean) READING.getOpaque(this);
        judgement &= ~STALL_GRACE;
        long next = 0;
        boolean any = false;
        if (cfg.readerIdleNanos > 0) {
            if (now - nextReaderCheck >= 0) {
                nextReaderCheck = check(checkTime(nextReaderCheck, cfg.readerIdleNanos, now), cfg.readerIdleNanos,
                        read, busy, READER_WAS_IDLE, READER, READER_FIRST);
            }
            next = nextReaderCheck;
            any = true;
        }
        long writerAt = 0;
        long allAt = 0;
        boolean writerRan = false;
        boolean allRan = false;
        if (cfg.writerIdleNanos > 0) {
            if (now - nextWriterCheck >= 0) {
                writerRan = true;
                writerAt = checkTime(nextWriterCheck, cfg.writerIdleNanos, now);
                nextWriterCheck = check(writerAt, cfg.writerIdleNanos, write, false, WRITER_WAS_IDLE, WRITER,
                        WRITER_FIRST);
            }
            next = any ? earliest(next, nextWriterCheck) : nextWriterCheck;
            any = true;
        }
        if (cfg.allIdleNanos > 0) {
            if (now - nextAllCheck >= 0) {
                allRan = true;
                allAt = checkTime(nextAllCheck, cfg.allIdleNanos, now);
                nextAllCheck = check(allAt, cfg.allIdleNanos, latest(read, write), busy, ALL_WAS_IDLE, ALL,
                        ALL_FIRST);
            }
            next = any ? earliest(next, nextAllCheck) : nextAllCheck;
        }
        OutputObserver out = output;
        if (cfg.observeOutput && out != null) {
            orderOutputChecks(out, writerRan, writerAt, allRan, allAt);
        }
        return next;
    }

    /**
     * With observeOutput, the first of the writer and all checks to look at the outbound buffer takes
     * its change, so their order matters. IdleStateHandler runs its tasks by due time, ties in the
     * order they were scheduled; each is scheduled again when it runs. This replays that order with a
     * scheduling sequence number per kind.
     */
    private void orderOutputChecks(OutputObserver out, boolean writerRan, long writerAt, boolean allRan, long allAt) {
        boolean allFirst = writerRan && allRan
                && (allAt - writerAt < 0 || (allAt == writerAt && out.allSequence < out.writerSequence));
        int verdict = monitor.verdict;
        if (allFirst && (verdict & (WRITER | WRITER_FIRST)) != 0 && (verdict & (ALL | ALL_FIRST)) != 0) {
            monitor.verdict |= ALL_BEFORE_WRITER;
        }
        if (allFirst) {
            out.allSequence = ++out.sequence;
        }
        if (writerRan) {
            out.writerSequence = ++out.sequence;
        }
        if (allRan && !allFirst) {
            out.allSequence = ++out.sequence;
        }
    }

    /** When a check due at {@code due} is taken: then, or now if it is a whole period late (a stall). */
    private static long checkTime(long due, long timeout, long now) {
        return now - due >= timeout ? now : due;
    }

    /**
     * One run of an {@code IdleStateHandler} timeout task, taken at {@code at} (its due time, see
     * {@link #checkTime}): idle if the last activity is at least {@code timeout} before it.
     *
     * @return when this check runs next
     */
    private long check(long at, long timeout, long last, boolean busy, int wasIdle, int event, int firstEvent) {
        if (!busy && at - last >= timeout) {
            monitor.verdict |= (judgement & wasIdle) == 0 ? firstEvent : event;
            judgement |= wasIdle;
            return at + timeout;
        }
        judgement &= ~wasIdle;
        return busy ? at + timeout : last + timeout;
    }

    /**
     * The ping policy. A miss is counted only for a ping the event loop has really written (it stamps
     * {@link #pingWritten}), and only once the timeout has passed since that write: a lagging event
     * loop delays the verdict instead of closing a peer that was never pinged.
     */
    private long judgePing(HeartbeatConfig cfg, long now) {
        long read = (long) LAST_READ.getOpaque(this);
        boolean busy = (boolean) READING.getOpaque(this);
        judgement &= ~STALL_GRACE;
        if ((judgement & AWAITING_ANSWER) != 0) {
            long written = (long) PING_WRITTEN.getOpaque(this);
            if (busy || read - pingSentAt() > 0) {
                judgement &= FLAGS & ~AWAITING_ANSWER; // answered: no missed pings

            } else if (written - pingSentAt() < 0) {
                // Not written yet (the event loop lags) or skipped: wait, then decide afresh.
                if (now - pingSentAt() < cfg.pingTimeoutNanos) {
                    return pingSentAt() + cfg.pingTimeoutNanos;
                }
                judgement &= ~AWAITING_ANSWER;
            } else {
                long answerDue = written + cfg.pingTimeoutNanos;
                if (now - answerDue < 0) {
                    return answerDue;
                }
                judgement += MISSED_PING;
                if (judgement >>> 16 >= cfg.maxMissedPings) {
                    monitor.verdict |= PING_TIMEOUT;
                } else {
                    monitor.verdict |= SEND_PING;
                    pingSentAt(now);
                }
                return now + cfg.pingTimeoutNanos;
            }
        }
        long base = cfg.pingWhenWriterIdle ? (long) LAST_WRITE.getOpaque(this) : read;
        if (busy && !cfg.pingWhenWriterIdle) {
            return now + cfg.pingIntervalNanos;
        }
        long due = base + cfg.pingIntervalNanos + jitterNanos(cfg);
        if (now - due < 0) {
            return due;
        }
        monitor.verdict |= SEND_PING;
        judgement |= AWAITING_ANSWER;
        pingSentAt(now);
        return now + cfg.pingTimeoutNanos;
    }

    /** Worker, ping policy: when the pending ping was decided. */
    private long pingSentAt() {
        return nextWriterCheck;
    }

    private void pingSentAt(long time) {
        nextWriterCheck = time;
    }

    /** A fixed per-channel share of the jitter, from the identity hash: no state, no shared random. */
    private long jitterNanos(HeartbeatConfig cfg) {
        if (cfg.jitter == 0) {
            return 0;
        }
        int h = System.identityHashCode(this) * 0x9E3779B9; // golden-ratio mix
        double unit = (h >>> 8) / (double) (1 << 24);
        return (long) (cfg.pingIntervalNanos * cfg.jitter * unit);
    }

    private static long latest(long a, long b) {
        return a - b >= 0 ? a : b;
    }

    private static long earliest(long a, long b) {
        return a - b <= 0 ? a : b;
    }

    // ------------------------------------------------------------------ hand-off

    /** Worker: adds action bits; returns the bits that were pending before (0: push to the batch). */
    int offerActions(int bits) {
        return (int) ACTIONS.getAndBitwiseOr(this, bits);
    }

    /** Event loop: takes every pending action bit. */
    int takeActions() {
        return (int) ACTIONS.getAndSet(this, 0);
    }

    /** Event loop (or any thread, which then hops to the channel's event loop): carries out actions. */
    void perform(int bits) {
        ChannelHandlerContext ctx = this.ctx;
        EventExecutor executor = ctx.executor();
        if (!executor.inEventLoop()) {
            executor.execute(() -> perform(bits)); // the channel moved to another event loop: rare
            return;
        }
        if (lifecycle != ACTIVE || !ctx.channel().isOpen()) {
            return;
        }
        // The worker decided from stamps it read earlier; what the event loop did since (it may have
        // read data just now) is checked again here, as IdleStateHandler's tasks check on the loop.
        HeartbeatConfig cfg = config;
        long now = monitor.ticker.nanoTime();
        switch (cfg.policy) {
            case EVENT:
                fireEvents(ctx, cfg, bits, now);
                break;
            case CLOSE:
            case CLOSE_WITH_EXCEPTION:
                closeIfIdle(ctx, cfg, bits, now);
                break;
            case PING:
                ping(ctx, cfg, bits, now);
                break;
            default:
                throw new AssertionError(cfg.policy);
        }
    }

    private void fireEvents(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        if ((bits & (READER | READER_FIRST)) != 0 && readerIdle(cfg, now)) {
            monitor.idleEvent(HeartbeatMonitor.READER_KIND);
            ctx.fireUserEventTriggered((bits & READER_FIRST) != 0
                    ? IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT : IdleStateEvent.READER_IDLE_STATE_EVENT);
        }
        if ((bits & ALL_BEFORE_WRITER) != 0) {
            fireAllIdle(ctx, cfg, bits, now);
            fireWriterIdle(ctx, cfg, bits, now);
        } else {
            fireWriterIdle(ctx, cfg, bits, now);
            fireAllIdle(ctx, cfg, bits, now);
        }
    }

    private void fireWriterIdle(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        if (writerIdle(cfg, bits, now)) {
            monitor.idleEvent(HeartbeatMonitor.WRITER_KIND);
            ctx.fireUserEventTriggered((bits & WRITER_FIRST) != 0
                    ? IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT : IdleStateEvent.WRITER_IDLE_STATE_EVENT);
        }
    }

    private void fireAllIdle(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        if (allIdle(cfg, bits, now)) {
            monitor.idleEvent(HeartbeatMonitor.ALL_KIND);
            ctx.fireUserEventTriggered((bits & ALL_FIRST) != 0
                    ? IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT : IdleStateEvent.ALL_IDLE_STATE_EVENT);
        }
    }

    private void closeIfIdle(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        int kind;
        boolean allFirst = (bits & ALL_BEFORE_WRITER) != 0;
        if ((bits & (READER | READER_FIRST)) != 0 && readerIdle(cfg, now)) {
            kind = HeartbeatMonitor.READER_KIND;
        } else if (allFirst && allIdle(cfg, bits, now)) {
            kind = HeartbeatMonitor.ALL_KIND;
        } else if (writerIdle(cfg, bits, now)) {
            kind = HeartbeatMonitor.WRITER_KIND;
        } else if (!allFirst && allIdle(cfg, bits, now)) {
            kind = HeartbeatMonitor.ALL_KIND;
        } else {
            return; // activity since the worker's verdict: its next check will look again
        }
        monitor.idleClose(kind);
        if (cfg.policy == HeartbeatConfig.Policy.CLOSE_WITH_EXCEPTION) {
            ctx.fireExceptionCaught(kind == HeartbeatMonitor.WRITER_KIND
                    ? WriteTimeoutException.INSTANCE : ReadTimeoutException.INSTANCE);
        }
        closeOnce(ctx);
    }

    private void ping(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        long read = (long) LAST_READ.getOpaque(this);
        boolean busy = (boolean) READING.getOpaque(this);
        if ((bits & PING_TIMEOUT) != 0) {
            if (busy || read - (long) PING_WRITTEN.getOpaque(this) > 0) {
                return; // answered after all, just now
            }
            monitor.idleClose(HeartbeatMonitor.PING_KIND);
            closeOnce(ctx);
            return;
        }
        if ((bits & SEND_PING) != 0) {
            long base = cfg.pingWhenWriterIdle ? (long) LAST_WRITE.getOpaque(this) : read;
            if (busy || now - base < cfg.pingIntervalNanos) {
                return; // activity since the verdict: no ping needed; the worker sees it and waits
            }
            PING_WRITTEN.setOpaque(this, now); // even if the factory fails: the ping was due
            Object ping;
            try {
                ping = cfg.pingFactory.newPing(ctx.channel());
            } catch (Throwable t) {
                monitor.actionFailed();
                ctx.fireExceptionCaught(t);
                return;
            }
            monitor.pingSent();
            // From the tail, so encoders (and this handler's write stamp) see the ping.
            ctx.channel().writeAndFlush(ping);
        }
    }

    /** Acts once, as ReadTimeoutHandler does: the entry leaves the wheel now, channelInactive finds nothing. */
    private void closeOnce(ChannelHandlerContext ctx) {
        lifecycle = DESTROYED;
        monitor.channelClosed();
        monitor.worker.cancel(this);
        ctx.close();
    }

    private boolean readerIdle(HeartbeatConfig cfg, long now) {
        return !(boolean) READING.getOpaque(this)
                && now - (long) LAST_READ.getOpaque(this) >= cfg.readerIdleNanos;
    }

    private boolean writerIdle(HeartbeatConfig cfg, int bits, long now) {
        return (bits & (WRITER | WRITER_FIRST)) != 0
                && now - (long) LAST_WRITE.getOpaque(this) >= cfg.writerIdleNanos
                && !outputChanged(cfg, (bits & WRITER_FIRST) != 0);
    }

    private boolean allIdle(HeartbeatConfig cfg, int bits, long now) {
        return (bits & (ALL | ALL_FIRST)) != 0
                && !(boolean) READING.getOpaque(this)
                && now - latest((long) LAST_READ.getOpaque(this), (long) LAST_WRITE.getOpaque(this))
                        >= cfg.allIdleNanos
                && !outputChanged(cfg, (bits & ALL_FIRST) != 0);
    }

    private boolean outputChanged(HeartbeatConfig cfg, boolean first) {
        return cfg.observeOutput && output != null && output.changed(first, (long) LAST_WRITE.getOpaque(this));
    }

    // ------------------------------------------------------------------ pass-through

    @Override
    public void channelUnregistered(ChannelHandlerContext ctx) {
        ctx.fireChannelUnregistered();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated in ChannelHandler, current in ChannelInboundHandler
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public void bind(ChannelHandlerContext ctx, SocketAddress localAddress, ChannelPromise promise) {
        ctx.bind(localAddress, promise);
    }

    @Override
    public void connect(ChannelHandlerContext ctx, SocketAddress remoteAddress, SocketAddress localAddress,
            ChannelPromise promise) {
        ctx.connect(remoteAddress, localAddress, promise);
    }

    @Override
    public void disconnect(ChannelHandlerContext ctx, ChannelPromise promise) {
        ctx.disconnect(promise);
    }

    @Override
    public void close(ChannelHandlerContext ctx, ChannelPromise promise) {
        ctx.close(promise);
    }

    @Override
    public void deregister(ChannelHandlerContext ctx, ChannelPromise promise) {
        ctx.deregister(promise);
    }

    @Override
    public void read(ChannelHandlerContext ctx) {
        ctx.read();
    }

    @Override
    public String toString() {
        ChannelHandlerContext c = ctx;
        return "HeartbeatHandler[" + (c == null ? "unbound" : c.channel()) + ", " + config() + "]";
    }

    /**
     * {@code IdleStateHandler}'s {@code observeOutput}: whether the outbound buffer moved between two
     * checks. Event loop only; allocated only for configurations that observe output.
     */
    private static final class OutputObserver {
        // Worker only (published with the schedule request that follows the observer's creation):
        // the order in which the pending writer and all checks were scheduled, to order them on a tie.
        long sequence;
        long writerSequence;
        long allSequence;

        private final Channel channel;
        private long lastWriteSeen;
        private int lastMessageHash;
        private long lastPendingBytes;
        private long lastFlushProgress;

        OutputObserver(Channel channel) {
            this.channel = channel;
            ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
            if (buf != null) {
                lastMessageHash = System.identityHashCode(buf.current());
                lastPendingBytes = buf.totalPendingWriteBytes();
                lastFlushProgress = buf.currentProgress();
            }
        }

        boolean changed(boolean first, long lastWrite) {
            if (lastWriteSeen != lastWrite) {
                lastWriteSeen = lastWrite;
                if (!first) {
                    return true; // writes complete: change at message level
                }
            }
            ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
            if (buf == null) {
                return false;
            }
            int messageHash = System.identityHashCode(buf.current());
            long pendingBytes = buf.totalPendingWriteBytes();
            if (messageHash != lastMessageHash || pendingBytes != lastPendingBytes) {
                lastMessageHash = messageHash;
                lastPendingBytes = pendingBytes;
                if (!first) {
                    return true;
                }
            }
            long flushProgress = buf.currentProgress();
            if (flushProgress != lastFlushProgress) {
                lastFlushProgress = flushProgress;
                return !first;
            }
            return false;
        }
    }
}
