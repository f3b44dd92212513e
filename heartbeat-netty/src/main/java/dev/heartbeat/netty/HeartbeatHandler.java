/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketAddress;
import java.util.concurrent.ThreadLocalRandom;

import dev.heartbeat.core.TimerEntry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPromise;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.WriteTimeoutException;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;

/**
 * The per-channel handler: records activity on the event loop and is, at the same time, the
 * channel's one entry in the monitor's timing wheel, so a channel costs one object besides its
 * pipeline context (and a side object for the configurations that need one: the ping policy and
 * observeOutput; {@code HandlerLayoutTest} pins the sizes). Created by
 * {@link HeartbeatMonitor#newHandler}; not sharable.
 *
 * <p>Three threads meet here, each field says which:
 * <ul>
 * <li>the channel's <b>event loop</b> stamps activity (opaque stores of ticker readings) and runs
 *     the actions the worker hands it;</li>
 * <li>the monitor's <b>worker</b> judges idleness from the stamps when the entry comes due, moves
 *     the entry to its next check (the lazy re-arm) and decides actions;</li>
 * <li>the hand-off of actions is an atomic bit set plus a place in the event loop's
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
    /** The order to fire reader, writer and all events in: a {@link CheckOrder} index in these three bits. */
    private static final int ORDER_SHIFT = 10;
    private static final int ORDER_BITS = 7 << ORDER_SHIFT;
    /** Ping again after a missed answer: due because of the miss, not because of idleness. */
    static final int RESEND_PING = 1 << 9;
    /** The action bits live in the low half of the hand-off word, the config tag in the high half. */
    private static final int ACTION_BITS = 0xFFFF;
    /** An answer deadline's coalescing window is the configuration's divided by 2^this. */
    static final int ANSWER_WINDOW_SHIFT = 2;
    private static final int TAG_SHIFT = 16;

    // Worker judgement flags.
    private static final int READER_WAS_IDLE = 1;
    private static final int WRITER_WAS_IDLE = 1 << 1;
    private static final int ALL_WAS_IDLE = 1 << 2;
    private static final int AWAITING_ANSWER = 1 << 3;
    private static final int STALL_GRACE = 1 << 4;
    /**
     * The next check waits for a ping's answer (ping policy): it gets a finer coalescing window (see
     * {@link #coalesce}). Set by the judgement, read by the re-arm right after it.
     */
    private static final int ANSWER_PHASE = 1 << 5;
    /** The {@link CheckOrder} in which IdleStateHandler would have scheduled its three tasks last: these three bits. */
    private static final int SCHEDULED_SHIFT = 6;
    private static final int SCHEDULED_BITS = 7 << SCHEDULED_SHIFT;
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
    private static final VarHandle SIDE;
    private static final VarHandle CONFIG;
    private static final VarHandle CONFIG_SERIAL;
    private static final VarHandle ACTIONS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            LAST_READ = lookup.findVarHandle(HeartbeatHandler.class, "lastRead", long.class);
            LAST_WRITE = lookup.findVarHandle(HeartbeatHandler.class, "lastWrite", long.class);
            READING = lookup.findVarHandle(HeartbeatHandler.class, "reading", boolean.class);
            SIDE = lookup.findVarHandle(HeartbeatHandler.class, "side", Object.class);
            CONFIG = lookup.findVarHandle(HeartbeatHandler.class, "config", BoundConfig.class);
            CONFIG_SERIAL = lookup.findVarHandle(HeartbeatHandler.class, "configSerial", int.class);
            ACTIONS = lookup.findVarHandle(HeartbeatHandler.class, "actions", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // ---- Written by the event loop, read by the worker. ----
    /**
     * The configuration, bound to the monitor (which is thus one load away without a field of its
     * own: the monitor of every binding a handler gets is the same). The event loop changes it under
     * a sequence lock with {@link #configSerial} (odd while changing; release stores), so the worker
     * reads a config and the serial it belongs to as one pair (acquire loads) and tags its verdict
     * with that serial: a verdict judged under one configuration is dropped on the event loop if the
     * configuration changed since. The event loop reads it plain; other threads opaque or acquire.
     */
    private BoundConfig config;
    @SuppressWarnings("unused") // accessed through CONFIG_SERIAL
    private int configSerial;
    /** Ticker time of the end of the latest read batch. */
    @SuppressWarnings("unused") // accessed through LAST_READ
    private long lastRead;
    /** Ticker time the latest write completed. */
    @SuppressWarnings("unused") // accessed through LAST_WRITE
    private long lastWrite;
    /**
     * The state only some configurations need, allocated by the first configuration that needs it:
     * an {@link OutputObserver} (observeOutput; event loop only) or a {@link PingState} (ping policy;
     * event loop and worker). A configuration that needs neither keeps what is there; one that needs
     * the other kind replaces it. Opaque: the event loop stores a PingState before it publishes the
     * ping configuration that needs it (a release store of {@link #config}, or the schedule request),
     * so a worker that judges that configuration finds it. Null until then.
     */
    @SuppressWarnings("unused") // accessed through SIDE
    private Object side;
    /** A read batch is in progress (channelRead seen, channelReadComplete not yet). */
    @SuppressWarnings("unused") // accessed through READING
    private boolean reading;

    // ---- Written by the event loop only. ctx is set before the schedule request that publishes it
    // to the worker, which then reads it (plain); the rest the worker never reads. ----
    ChannelHandlerContext ctx;
    private byte lifecycle;
    private boolean voidWriteUnstamped;

    // ---- Worker only. ----
    /**
     * The serial of the configuration the worker judges under. Stable serials are even, so the odd
     * initial value means "not judged yet" without being a serial any configuration can have.
     */
    private int judgedSerial = 1;
    private long nextReaderCheck;
    /**
     * The writer check of the idle policies; the ping policy, which has none, keeps the time it
     * decided its pending ping here instead (see {@link #pingSentAt()}). {@link #prepare} resets it
     * whenever the configuration changes, so the two uses never meet.
     */
    private long nextWriterCheck;
    private long nextAllCheck;
    /** The judgement flags (READER_WAS_IDLE ... ANSWER_PHASE), the scheduled order, the missed pings. */
    private int judgement;

    // ---- Hand-off: worker sets bits (atomic OR), event loop takes them (atomic swap). ----
    @SuppressWarnings("unused") // accessed through ACTIONS
    private volatile int actions;

    HeartbeatHandler(HeartbeatMonitor monitor, HeartbeatConfig config) {
        this.config = monitor.bind(config);
    }

    /** Any thread: the monitor that made this handler. */
    HeartbeatMonitor monitor() {
        return ((BoundConfig) CONFIG.getOpaque(this)).monitor;
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
        if (ctx == this.ctx) { // not the context of a second pipeline whose handlerAdded refused us
            destroy();
        }
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
        HeartbeatMonitor monitor = config.monitor;
        HeartbeatConfig cfg = config.config;
        long now = monitor.ticker.nanoTime();
        LAST_READ.setOpaque(this, now);
        LAST_WRITE.setOpaque(this, now);
        if (cfg.observeOutput) {
            SIDE.setOpaque(this, new OutputObserver(ctx.channel(), now));
        } else if (cfg.policy == HeartbeatConfig.Policy.PING) {
            SIDE.setOpaque(this, PingState.of(cfg)); // before the schedule request publishes it
        }
        monitor.channelOpened();
        if (cfg.tracksAnything() && !monitor.worker.schedule(this, now + cfg.shortestNanos)) {
            monitor.unmonitored(this); // the monitor was closed after this handler was made
        }
    }

    private void destroy() {
        if (lifecycle == ACTIVE) {
            HeartbeatMonitor monitor = config.monitor;
            monitor.channelClosed();
            monitor.worker.cancel(this);
        }
        lifecycle = DESTROYED;
    }

    /**
     * The handler's executor: switches configuration; idleness is measured afresh from now, and any
     * verdict the worker reached under the previous configuration is dropped.
     */
    void reconfigure(HeartbeatConfig cfg) {
        HeartbeatMonitor monitor = config.monitor;
        BoundConfig bound = monitor.bind(cfg);
        int serial = configSerial; // plain: this thread is the only writer
        // Odd for the whole change: the worker judges nothing meanwhile, and the schedule or cancel
        // request below is made before the serial is even again, so the first expiry under the new
        // serial is the one that request arms (see configToJudge and prepare).
        CONFIG_SERIAL.setOpaque(this, serial + 1);
        if (lifecycle == ACTIVE && cfg.policy == HeartbeatConfig.Policy.PING
                && (pingState() == null || (cfg.matchesAnswers && !(pingState() instanceof ProbeState)))) {
            SIDE.setOpaque(this, PingState.of(cfg)); // before the release store that publishes cfg
        }
        CONFIG.setRelease(this, bound);
        if (lifecycle == ACTIVE) {
            long now = monitor.ticker.nanoTime();
            LAST_READ.setOpaque(this, now);
            LAST_WRITE.setOpaque(this, now);
            if (cfg.observeOutput) {
                OutputObserver output = output();
                if (output == null) {
                    SIDE.setOpaque(this, new OutputObserver(ctx.channel(), now));
                } else {
                    output.snapshot(ctx.channel(), now); // as a new IdleStateHandler would: the buffer as it is now
                }
            }
            if (!cfg.tracksAnything()) {
                monitor.worker.cancel(this);
            } else if (!monitor.worker.schedule(this, now + cfg.shortestNanos)) {
                monitor.unmonitored(this);
            }
        }
        CONFIG_SERIAL.setRelease(this, serial + 2);
    }

    /** The side object, or null: for the layout test. */
    Object side() {
        return SIDE.getOpaque(this);
    }

    /** Any thread: the round-trip time from the probe's answers, or null (no sample, or no matching probe). */
    Rtt rtt() {
        return SIDE.getOpaque(this) instanceof ProbeState p ? p.rtt.snapshot() : null;
    }

    /** Event loop: the output observer, if the side object is one. */
    private OutputObserver output() {
        return SIDE.getOpaque(this) instanceof OutputObserver o ? o : null;
    }

    /**
     * Event loop or worker: the ping state, if the side object is one. Under a ping configuration it
     * is, except to a worker still judging a ping configuration the event loop is switching away
     * from (to one that observes output): that verdict is stale, and dropped on the event loop.
     */
    private PingState pingState() {
        return SIDE.getOpaque(this) instanceof PingState p ? p : null;
    }

    /** The handler's executor: counts a read now, as {@code IdleStateHandler.resetReadTimeout()}. */
    void resetReadTimeout() {
        LAST_READ.setOpaque(this, config.ticker.nanoTime());
    }

    /** The handler's executor: counts a write now, as {@code IdleStateHandler.resetWriteTimeout()}. */
    void resetWriteTimeout() {
        LAST_WRITE.setOpaque(this, config.ticker.nanoTime());
    }

    /** The executor this handler runs on, or null before it is added to a pipeline. */
    EventExecutor executor() {
        ChannelHandlerContext c = ctx;
        return c == null ? null : c.executor();
    }

    /** Any thread: the current configuration. */
    HeartbeatConfig config() {
        return ((BoundConfig) CONFIG.getAcquire(this)).config;
    }

    /**
     * Worker: the configuration and its serial, read as one pair; null if the event loop is changing
     * it right now (the caller looks again shortly: the change's own request may have come due already).
     */
    HeartbeatConfig configToJudge() {
        int before = (int) CONFIG_SERIAL.getAcquire(this);
        HeartbeatConfig cfg = ((BoundConfig) CONFIG.getAcquire(this)).config;
        int after = (int) CONFIG_SERIAL.getAcquire(this);
        if ((before & 1) != 0 || before != after) {
            return null;
        }
        if (before != judgedSerial) {
            prepare(cfg, before);
        }
        return cfg;
    }

    // ------------------------------------------------------------------ event loop: the hot path

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        BoundConfig bound = config;
        if (bound.tracksReads) {
            READING.setOpaque(this, true);
        }
        if (bound.matchesAnswers && SIDE.getOpaque(this) instanceof ProbeState probe) {
            boolean consumed;
            try {
                consumed = probe.onInbound(bound, ctx, msg);
            } catch (Throwable t) { // a throwing probe: counted, logged (rate-limited); the message goes on
                bound.monitor.actionFailed(this, t);
                consumed = false;
            }
            if (consumed) {
                return; // our ping's answer, consumed: still a read for idleness (stamped above)
            }
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if ((boolean) READING.getOpaque(this)) {
            LAST_READ.setOpaque(this, config.ticker.nanoTime());
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
            LAST_WRITE.setOpaque(this, config.ticker.nanoTime());
        }
        ctx.flush();
    }

    /** A write completed (this handler is its own write listener, so a write allocates nothing). */
    @Override
    public void operationComplete(ChannelFuture future) {
        LAST_WRITE.setOpaque(this, config.ticker.nanoTime());
    }

    // ------------------------------------------------------------------ worker: judgement

    /**
     * Worker: decides, from the stamps, what is due at {@code now}; records actions in
     * {@code monitor.verdict} (the worker's scratch word) and returns when to look again.
     */
    long judge(HeartbeatConfig cfg, long now) {
        monitor().verdict = 0;
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
     * Worker, at the first expiry under a new configuration serial: starts judging {@code cfg}. Every
     * request for a handler is due {@code shortestNanos} after the moment its stamps were set, so
     * that moment is {@code requestedDeadline() - shortestNanos}; each check starts from it, as
     * IdleStateHandler schedules its three tasks when it initialises.
     */
    private void prepare(HeartbeatConfig cfg, int serial) {
        judgedSerial = serial;
        judgement = CheckOrder.INITIAL << SCHEDULED_SHIFT; // and no flags, no missed pings
        long start = requestedDeadline() - cfg.shortestNanos; // as requested, before coalescing
        nextReaderCheck = start + cfg.readerIdleNanos;
        nextWriterCheck = start + cfg.writerIdleNanos;
        nextAllCheck = start + cfg.allIdleNanos;
    }

    private long judgeIdle(HeartbeatConfig cfg, long now) {
        long read = (long) LAST_READ.getOpaque(this);
        long write = (long) LAST_WRITE.getOpaque(this);
        boolean busy = (boolean) READING.getOpaque(this);
        judgement &= ~STALL_GRACE;
        // Replay IdleStateHandler's task queue up to now: the due check with the earliest time runs
        // first (ties in scheduling order) and goes to the back of that order, as a task that runs
        // schedules itself again. A check that found the channel busy is due again at the last
        // activity plus its timeout, which may be before now (the worker looks up to a tick late):
        // then it runs again in this loop, in its place among the others, so that what it finds
        // comes in IdleStateHandler's order. Each kind runs at most twice: the second run finds the
        // channel idle (the stamps are those the first one saw), and an idle check is next due a
        // whole timeout later. The checks are independent here; the order matters on the event loop.
        int scheduled = (judgement & SCHEDULED_BITS) >>> SCHEDULED_SHIFT;
        int found = CheckOrder.INITIAL; // the kinds found idle go to its back, in the order found
        boolean ran = false;
        while (true) {
            int kind = -1;
            long at = 0;
            for (int i = 0; i < 3; i++) {
                int k = CheckOrder.kindAt(scheduled, i);
                long timeout = timeout(cfg, k);
                long due = nextCheck(k);
                if (timeout > 0 && now - due >= 0) {
                    long t = checkTime(due, timeout, now);
                    if (kind < 0 || t - at < 0) {
                        kind = k;
                        at = t;
                    }
                }
            }
            if (kind < 0) {
                break;
            }
            ran = true;
            scheduled = CheckOrder.moveToBack(scheduled, kind);
            if (runCheck(kind, cfg, at, read, write, busy)) {
                found = CheckOrder.moveToBack(found, kind);
            }
        }
        if (ran) {
            judgement = (judgement & ~SCHEDULED_BITS) | (scheduled << SCHEDULED_SHIFT);
            monitor().verdict |= found << ORDER_SHIFT;
        }
        long next = 0;
        boolean any = false;
        if (cfg.readerIdleNanos > 0) {
            next = nextReaderCheck;
            any = true;
        }
        if (cfg.writerIdleNanos > 0) {
            next = any ? earliest(next, nextWriterCheck) : nextWriterCheck;
            any = true;
        }
        if (cfg.allIdleNanos > 0) {
            next = any ? earliest(next, nextAllCheck) : nextAllCheck;
        }
        return next;
    }

    /**
     * Runs the check of {@code kind} as of {@code at} and sets when it runs next.
     *
     * @return whether it found the channel idle (its event bit is then in the verdict)
     */
    private boolean runCheck(int kind, HeartbeatConfig cfg, long at, long read, long write, boolean busy) {
        switch (kind) {
            case CheckOrder.READER:
                nextReaderCheck = check(at, cfg.readerIdleNanos, read, busy, READER_WAS_IDLE, READER, READER_FIRST);
                return (judgement & READER_WAS_IDLE) != 0;
            case CheckOrder.WRITER:
                nextWriterCheck = check(at, cfg.writerIdleNanos, write, false, WRITER_WAS_IDLE, WRITER, WRITER_FIRST);
                return (judgement & WRITER_WAS_IDLE) != 0;
            default:
                nextAllCheck = check(at, cfg.allIdleNanos, latest(read, write), busy, ALL_WAS_IDLE, ALL, ALL_FIRST);
                return (judgement & ALL_WAS_IDLE) != 0;
        }
    }

    /** The timeout of the check of {@code kind}, 0 if disabled. */
    private static long timeout(HeartbeatConfig cfg, int kind) {
        return kind == CheckOrder.READER ? cfg.readerIdleNanos
                : kind == CheckOrder.WRITER ? cfg.writerIdleNanos : cfg.allIdleNanos;
    }

    /** When the check of {@code kind} is next due. */
    private long nextCheck(int kind) {
        return kind == CheckOrder.READER ? nextReaderCheck
                : kind == CheckOrder.WRITER ? nextWriterCheck : nextAllCheck;
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
            monitor().verdict |= (judgement & wasIdle) == 0 ? firstEvent : event;
            judgement |= wasIdle;
            return at + timeout;
        }
        judgement &= ~wasIdle;
        return busy ? at + timeout : last + timeout;
    }

    /**
     * The ping policy. A miss is counted only for a ping the event loop has really written (see
     * {@link PingState#onWire}), and only once the timeout has passed since that write: a lagging event
     * loop, a failed write or a throwing factory delays the verdict instead of closing a peer that was
     * never pinged. While a ping waits for its answer the worker looks at least every interval, so a
     * prompt answer keeps the cadence at one ping per interval of silence even when the timeout is
     * longer than the interval.
     */
    private long judgePing(HeartbeatConfig cfg, long now) {
        long read = (long) LAST_READ.getOpaque(this);
        boolean busy = (boolean) READING.getOpaque(this);
        judgement = (judgement & ~STALL_GRACE) | ANSWER_PHASE; // until answered: the interval returns clear it
        long poll = Math.min(cfg.pingTimeoutNanos, cfg.pingIntervalNanos);
        PingState ping = pingState();
        if (ping == null) {
            return now + poll; // a reconfiguration away from ping is under way (see pingState): its request decides
        }
        if ((judgement & AWAITING_ANSWER) != 0) {
            if (answered(cfg, ping, busy, read, pingSentAt())) {
                // Answered (a read stamped at the very time of the decision counts: it may have come
                // after it, and the peer was alive at that time either way): no missed pings.
                judgement &= FLAGS & ~AWAITING_ANSWER;
            } else if (!ping.onWire()) {
                // Not written yet (the event loop lags), skipped, or failed: wait, then decide afresh.
                long giveUp = pingSentAt() + cfg.pingTimeoutNanos;
                if (now - giveUp < 0) {
                    return earliest(giveUp, now + poll);
                }
                judgement &= ~AWAITING_ANSWER;
            } else {
                long answerDue = ping.written() + cfg.pingTimeoutNanos;
                if (cfg.ackMode == AckMode.MATCHED_EXTENDS) {
                    if (busy) {
                        return now + poll; // traffic pushes the answer's deadline out (Envoy)
                    }
                    if (read - ping.written() > 0) {
                        answerDue = read + cfg.pingTimeoutNanos;
                    }
                }
                if (now - answerDue < 0) {
                    return earliest(answerDue, now + poll);
                }
                judgement += MISSED_PING;
                if (judgement >>> 16 >= cfg.maxMissedPings) {
                    monitor().verdict |= PING_TIMEOUT;
                    return now + cfg.pingTimeoutNanos; // the close is on its way; look again if it is vetoed
                }
                return decidePing(ping, RESEND_PING, now, poll);
            }
        }
        long base = cfg.pingWhenWriterIdle ? (long) LAST_WRITE.getOpaque(this) : read;
        if (busy && !cfg.pingWhenWriterIdle) {
            judgement &= ~ANSWER_PHASE;
            return now + cfg.pingIntervalNanos;
        }
        long due = base + cfg.pingIntervalNanos + jitterNanos(cfg);
        if (now - due < 0) {
            judgement &= ~ANSWER_PHASE;
            return due;
        }
        judgement |= AWAITING_ANSWER;
        return decidePing(ping, SEND_PING, now, poll);
    }

    /**
     * Worker or event loop: whether the ping decided at {@code sentAt} is settled. Any read since
     * settles it under {@link AckMode#ANY_INBOUND}; only the probe's answer (to the latest ping, read
     * at or after the decision) under the matched modes.
     */
    private static boolean answered(HeartbeatConfig cfg, PingState ping, boolean busy, long read, long sentAt) {
        if (cfg.ackMode == AckMode.ANY_INBOUND) {
            return busy || read - sentAt >= 0;
        }
        return ping instanceof ProbeState p && p.answeredSince(sentAt);
    }

    /** Worker: decides a ping ({@code kind} is {@link #SEND_PING} or {@link #RESEND_PING}) at {@code now}. */
    private long decidePing(PingState ping, int kind, long now, long poll) {
        monitor().verdict |= kind;
        pingSentAt(now);
        ping.decided(); // before the hand-off, which orders it before the event loop's write
        return now + poll;
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

    /**
     * Worker: adds action bits judged under the configuration serial {@link #judgedSerial}; bits
     * still pending from an older serial are replaced, never merged.
     *
     * @return the word that was pending before (0: push the handler to its event loop's batch)
     */
    int offerActions(int bits) {
        int word = tagOf(judgedSerial) << TAG_SHIFT | bits;
        int old;
        do {
            old = (int) ACTIONS.getVolatile(this);
        } while (!ACTIONS.compareAndSet(this, old, old != 0 && old >>> TAG_SHIFT == word >>> TAG_SHIFT
                ? old | word : word));
        return old;
    }

    /**
     * Worker: timer slack. Deadlines are rounded up to the configuration's coalescing window (a power
     * of two of nanoseconds, capped by the monitor), so that the checks of many channels share one
     * wake-up; decisions still use the exact check times, so only delivery is later, by less than
     * the window.
     */
    @Override
    protected long coalesce(long deadline) {
        BoundConfig bound = (BoundConfig) CONFIG.getAcquire(this);
        long window = bound.monitor.coalescingWindow(bound.config);
        if ((judgement & ANSWER_PHASE) != 0) {
            // A ping chain (ping, re-ping, close) would pay the window at every step. The answer
            // deadlines of pings decided at one grid point fall within a few ms of each other anyway
            // (decision + write delay + timeout), so a quarter of the window still lets them share
            // wake-ups, and the chain pays the full window once.
            window >>>= ANSWER_WINDOW_SHIFT;
        }
        return window <= 1 ? deadline : (deadline + window - 1) & -window;
    }

    /** Event loop: takes the pending action word. */
    int takeActions() {
        return (int) ACTIONS.getAndSet(this, 0);
    }

    private static int tagOf(int serial) {
        return (serial >>> 1) & ACTION_BITS;
    }

    /**
     * Event loop (or any thread, which then hops to the handler's executor): carries out the actions
     * of a word from {@link #takeActions}, if it was judged under the configuration in force.
     */
    void perform(int word) {
        ChannelHandlerContext ctx = this.ctx;
        EventExecutor executor = ctx.executor();
        if (!executor.inEventLoop()) {
            executor.execute(() -> perform(word)); // the channel moved to another event loop: rare
            return;
        }
        HeartbeatMonitor monitor = config.monitor;
        if (word >>> TAG_SHIFT != tagOf(configSerial)) {
            monitor.staleVerdict(); // judged under a configuration this channel no longer has
            return;
        }
        if (!canAct()) {
            return;
        }
        // The worker decided from stamps it read earlier; what the event loop did since (it may have
        // read data just now) is checked again here, as IdleStateHandler's tasks check on the loop.
        HeartbeatConfig cfg = config.config;
        int bits = word & ACTION_BITS;
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

    /**
     * Event loop: whether an action may still run: the handler is active, the channel open, and the
     * configuration unchanged since the action was judged (a user handler may close, remove or
     * reconfigure from inside an event; IdleStateHandler checks each of its tasks the same way).
     */
    private boolean canAct() {
        return lifecycle == ACTIVE && ctx.channel().isOpen();
    }

    /** Fires the idle events of {@code bits} in IdleStateHandler's order, each only while the channel can take it. */
    private void fireEvents(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        int serial = configSerial;
        int order = (bits & ORDER_BITS) >>> ORDER_SHIFT;
        for (int i = 0; i < 3; i++) {
            int kind = CheckOrder.kindAt(order, i);
            if (serial != configSerial || !canAct()) {
                return; // a user handler closed, removed or reconfigured in reaction to the last event
            }
            if (idle(kind, cfg, bits, now)) {
                config.monitor.idleEvent(kind);
                ctx.fireUserEventTriggered(event(kind, bits));
            }
        }
    }

    private static IdleStateEvent event(int kind, int bits) {
        switch (kind) {
            case CheckOrder.READER:
                return (bits & READER_FIRST) != 0
                        ? IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT : IdleStateEvent.READER_IDLE_STATE_EVENT;
            case CheckOrder.WRITER:
                return (bits & WRITER_FIRST) != 0
                        ? IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT : IdleStateEvent.WRITER_IDLE_STATE_EVENT;
            default:
                return (bits & ALL_FIRST) != 0
                        ? IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT : IdleStateEvent.ALL_IDLE_STATE_EVENT;
        }
    }

    /** Closes for the first idle kind of {@code bits}, in IdleStateHandler's order, if any is still idle. */
    private void closeIfIdle(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        int order = (bits & ORDER_BITS) >>> ORDER_SHIFT;
        int kind = -1;
        for (int i = 0; i < 3 && kind < 0; i++) {
            int k = CheckOrder.kindAt(order, i);
            if (idle(k, cfg, bits, now)) {
                kind = k;
            }
        }
        if (kind < 0) {
            return; // activity since the worker's verdict: its next check will look again
        }
        long last = kind == CheckOrder.READER ? (long) LAST_READ.getOpaque(this)
                : kind == CheckOrder.WRITER ? (long) LAST_WRITE.getOpaque(this)
                : latest((long) LAST_READ.getOpaque(this), (long) LAST_WRITE.getOpaque(this));
        CloseReason reason = kind == CheckOrder.READER ? CloseReason.READER_IDLE
                : kind == CheckOrder.WRITER ? CloseReason.WRITER_IDLE : CloseReason.ALL_IDLE;
        int serial = configSerial;
        if (!announceClose(ctx, reason, now - last)) {
            return;
        }
        if (cfg.policy == HeartbeatConfig.Policy.CLOSE_WITH_EXCEPTION) {
            ctx.fireExceptionCaught(kind == CheckOrder.WRITER
                    ? WriteTimeoutException.INSTANCE : ReadTimeoutException.INSTANCE);
        }
        if (serial != configSerial || !canAct()) {
            return; // a handler reacted to the event or exception (closed, removed or reconfigured): done
        }
        closeOnce(ctx);
    }

    /**
     * Event loop: counts a close for {@code reason}, logs it at DEBUG and fires its
     * {@link HeartbeatCloseEvent} down the pipeline.
     *
     * @return whether the close should still go ahead (a handler may have closed, removed or
     *     reconfigured in reaction to the event)
     */
    private boolean announceClose(ChannelHandlerContext ctx, CloseReason reason, long idleNanos) {
        int serial = configSerial;
        config.monitor.closing(this, reason, idleNanos);
        ctx.fireUserEventTriggered(HeartbeatCloseEvent.of(reason));
        return serial == configSerial && canAct();
    }

    private void ping(ChannelHandlerContext ctx, HeartbeatConfig cfg, int bits, long now) {
        PingState state = pingState(); // present: this thread made it before it published cfg
        long read = (long) LAST_READ.getOpaque(this);
        boolean busy = (boolean) READING.getOpaque(this);
        boolean answeredSinceWritten = answered(cfg, state, busy, read, state.written());
        if ((bits & PING_TIMEOUT) != 0) {
            if (answeredSinceWritten) {
                return; // answered after all, just now
            }
            if (announceClose(ctx, CloseReason.PING_TIMEOUT, now - read)) {
                closeOnce(ctx);
            }
            return;
        }
        if ((bits & RESEND_PING) != 0) {
            if (answeredSinceWritten) {
                return; // the previous ping was answered just now: the worker sees it and waits
            }
        } else if ((bits & SEND_PING) != 0) {
            long base = cfg.pingWhenWriterIdle ? (long) LAST_WRITE.getOpaque(this) : read;
            if (busy || now - base < cfg.pingIntervalNanos) {
                return; // activity since the verdict: no ping needed; the worker sees it and waits
            }
        } else {
            return;
        }
        Object ping;
        try {
            ping = cfg.probe.newPing(ctx, state.nextToken());
        } catch (Throwable t) {
            config.monitor.pingFailed(this, t);
            ctx.fireExceptionCaught(t);
            return;
        }
        state.wrote(now);
        // From the tail, so encoders (and this handler's write stamp) see the ping.
        ctx.channel().writeAndFlush(ping).addListener(this::pingWriteDone);
    }

    /** Event loop: a ping's write completed. A failed ping is no missed ping: the worker pings again. */
    private void pingWriteDone(Future<? super Void> future) {
        if (future.isSuccess()) {
            config.monitor.pingSent(config);
        } else {
            PingState state = pingState();
            if (state != null) { // else a reconfiguration dropped it, and the ping with it
                state.writeFailed();
            }
            config.monitor.pingFailed(this, future.cause());
        }
    }

    /** Acts once, as ReadTimeoutHandler does: the entry leaves the wheel now, channelInactive finds nothing. */
    private void closeOnce(ChannelHandlerContext ctx) {
        lifecycle = DESTROYED;
        config.monitor.channelClosed();
        config.monitor.worker.cancel(this);
        ctx.close();
    }

    /** Event loop: whether the verdict's {@code kind} still holds from the current stamps. */
    private boolean idle(int kind, HeartbeatConfig cfg, int bits, long now) {
        switch (kind) {
            case CheckOrder.READER:
                return (bits & (READER | READER_FIRST)) != 0 && cfg.readerIdleNanos > 0
                        && !(boolean) READING.getOpaque(this)
                        && now - (long) LAST_READ.getOpaque(this) >= cfg.readerIdleNanos;
            case CheckOrder.WRITER:
                return (bits & (WRITER | WRITER_FIRST)) != 0 && cfg.writerIdleNanos > 0
                        && now - (long) LAST_WRITE.getOpaque(this) >= cfg.writerIdleNanos
                        && !outputChanged(cfg, (bits & WRITER_FIRST) != 0);
            default:
                return (bits & (ALL | ALL_FIRST)) != 0 && cfg.allIdleNanos > 0
                        && !(boolean) READING.getOpaque(this)
                        && now - latest((long) LAST_READ.getOpaque(this), (long) LAST_WRITE.getOpaque(this))
                                >= cfg.allIdleNanos
                        && !outputChanged(cfg, (bits & ALL_FIRST) != 0);
        }
    }

    private boolean outputChanged(HeartbeatConfig cfg, boolean first) {
        OutputObserver output = cfg.observeOutput ? output() : null;
        return output != null && output.changed(ctx.channel(), first, (long) LAST_WRITE.getOpaque(this));
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
        ChannelHandlerContext c = ctx; // (racy from other threads: for logs only)
        return "HeartbeatHandler[" + (c == null ? "unbound" : c.channel()) + ", " + config() + "]";
    }

    /** The ping policy's per-channel state: allocated only for ping configurations (see {@link #side}). */
    static class PingState {

        private static final VarHandle WRITTEN;
        private static final VarHandle ON_WIRE;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                WRITTEN = lookup.findVarHandle(PingState.class, "written", long.class);
                ON_WIRE = lookup.findVarHandle(PingState.class, "onWire", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** Ticker time the event loop last wrote a ping; meaningful only while {@link #onWire}. Opaque. */
        @SuppressWarnings("unused") // accessed through WRITTEN
        private long written;
        /**
         * The event loop wrote the ping the worker decided last, and its write has not failed: set by
         * the event loop when it writes a ping, cleared by the worker when it decides one and by the
         * event loop when the write fails. Opaque. No ticker value doubles as "no ping": every ticker
         * value is valid.
         */
        @SuppressWarnings("unused") // accessed through ON_WIRE
        private boolean onWire;

        /** The state a ping configuration needs: with answer matching if its probe recognises answers. */
        static PingState of(HeartbeatConfig cfg) {
            return cfg.matchesAnswers ? new ProbeState() : new PingState();
        }

        /** Event loop: the token of the ping about to be made (meaningful to matching probes only). */
        long nextToken() {
            return 0;
        }

        /** Event loop: a ping is being written at {@code now}. */
        void wrote(long now) {
            WRITTEN.setOpaque(this, now);
            ON_WIRE.setOpaque(this, true);
        }

        /** Event loop: the latest ping's write failed. */
        void writeFailed() {
            ON_WIRE.setOpaque(this, false);
        }

        /** Worker: a new ping is decided; none is on the wire until the event loop writes it. */
        void decided() {
            ON_WIRE.setOpaque(this, false);
        }

        boolean onWire() {
            return (boolean) ON_WIRE.getOpaque(this);
        }

        long written() {
            return (long) WRITTEN.getOpaque(this);
        }
    }

    /**
     * The state of a ping configuration whose probe recognises its answers (see {@link Probe}): the
     * token of the latest ping, how many pings await an answer, when the latest was answered, and the
     * channel's round-trip time. Allocated only for such configurations. The token and counts are
     * the event loop's alone; {@link #answeredAt} and the estimator are read by the worker and by
     * {@code HeartbeatMonitor.rttOf} (opaque).
     */
    static final class ProbeState extends PingState {

        private static final VarHandle ANSWERED_AT;
        private static final VarHandle EVER_ANSWERED;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                ANSWERED_AT = lookup.findVarHandle(ProbeState.class, "answeredAt", long.class);
                EVER_ANSWERED = lookup.findVarHandle(ProbeState.class, "everAnswered", boolean.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** Event loop only: the latest ping's token; random at the first ping, then + 1 per ping. */
        private long latestToken = ThreadLocalRandom.current().nextLong();
        /** Event loop only: pings written since the last answer of ours (saturating). */
        private int unanswered;
        /** Ticker time of the latest answer to the latest ping; meaningful once {@link #everAnswered}. Opaque. */
        @SuppressWarnings("unused") // accessed through ANSWERED_AT
        private long answeredAt;
        /** An answer of ours was ever seen. Set by the event loop, read by the worker. Opaque. */
        @SuppressWarnings("unused") // accessed through EVER_ANSWERED
        private boolean everAnswered;
        final RttEstimator rtt = new RttEstimator();

        @Override
        long nextToken() {
            return latestToken + 1;
        }

        @Override
        void wrote(long now) {
            latestToken++;
            if (unanswered < Integer.MAX_VALUE) {
                unanswered++;
            }
            super.wrote(now);
        }

        @Override
        void writeFailed() {
            // Tokens must stay consecutive over the pings counted, and for in-order probes a ping that never
            // left must not take the place of one that did: the failed one was the latest (one ping per timeout).
            latestToken--;
            if (unanswered > 0) {
                unanswered--;
            }
            super.writeFailed();
        }

        /**
         * Event loop, for every inbound message: records an answer to one of our pings; returns true if
         * the probe consumes it (then released here, and not passed on).
         */
        boolean onInbound(BoundConfig bound, ChannelHandlerContext ctx, Object msg) {
            Probe probe = bound.config.probe;
            int c = probe.classify(msg, latestToken, unanswered);
            if (c >= 0) {
                if (c == 0 && onWire()) { // the latest ping, which has a write time: an RTT sample
                    long now = bound.ticker.nanoTime();
                    rtt.addSample(now - written());
                    ANSWERED_AT.setOpaque(this, now);
                    EVER_ANSWERED.setOpaque(this, true);
                }
                unanswered = c;
                if (probe.consumes(c)) {
                    bound.monitor.answerConsumed();
                    ReferenceCountUtil.release(msg);
                    return true;
                }
            } else if (c == Probe.NOT_AN_ANSWER && unanswered >= Probe.MISPLACEMENT_PINGS
                    && !(boolean) EVER_ANSWERED.getOpaque(this)) {
                probe.reportMissingAnswers(ctx.channel(), unanswered);
            }
            return false;
        }

        /** Worker or event loop: whether the latest ping was answered at or after {@code time}. */
        boolean answeredSince(long time) {
            return (boolean) EVER_ANSWERED.getOpaque(this) && (long) ANSWERED_AT.getOpaque(this) - time >= 0;
        }
    }
}
