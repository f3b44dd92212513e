/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatPingBackoffEvent;
import dev.heartbeat.netty.Rtt;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.SocketAddress;

import dev.heartbeat.core.TimerEntry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandler;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.EventExecutor;

// Over 500 lines (listed in checkstyle.xml): the channel's one object and wheel entry: its lifecycle, hot path,
// sequence lock, hand-off and the state accessors the rules use share the 96-byte layout and its ownership rules,
// each field documented with its thread and access mode. The decisions are the rules' (Rule), the closes the
// CloseSequence's.
/**
 * The per-channel handler: records activity on the event loop and is, at the same time, the
 * channel's one entry in the monitor's timing wheel, so a channel costs one object besides its
 * pipeline context (and a side object for the configurations that need one: a ping probe that
 * matches answers, observeOutput, all three idle kinds, the guards; {@code HandlerLayoutTest} pins
 * the sizes). Created by {@link HeartbeatMonitor#newHandler}; not sharable.
 *
 * <p>The handler holds the channel's state and runs its lifecycle, the hot path and the hand-off;
 * what to decide when the entry comes due, and what to do about it on the event loop, is the
 * configuration's list of {@link Rule}s (its main {@link HandlerPolicy}, the drain, the guards, the
 * overload), which read and write this state through the named accessors below, each saying its
 * thread and access mode; every close goes through the {@link CloseSequence}. Three threads meet
 * here, each field says which:
 * <ul>
 * <li>the channel's <b>event loop</b> stamps activity (opaque stores of ticker readings) and runs
 *     the actions the worker hands it ({@link #perform});</li>
 * <li>the monitor's <b>worker</b> has the policy judge idleness from the stamps when the entry comes
 *     due ({@link #judge}), which moves the entry to its next check (the lazy re-arm) and returns the
 *     actions;</li>
 * <li>the hand-off of actions is an atomic bit set plus a place in the event loop's
 *     {@link EventLoopBatch}.</li>
 * </ul>
 * "Event loop" here means the handler's executor ({@code ctx.executor()}): the channel's event loop,
 * unless the handler was added with an executor group of its own, when every change of its state
 * happens on that executor instead: the actions hop there ({@link #perform}), its
 * {@link WriteTracker} runs there, and write completions are stamped there ({@link #operationComplete}).
 *
 * <p>On the outbound side only where writes are tracked. A handler made for a configuration that
 * tracks no writes (reader idleness, the ping policy) is an inbound handler only, so Netty's pipeline
 * skips it for every write, flush, read and close, as it skips the methods an adapter marks
 * {@code @Skip}: the outbound path and the code the JIT compiles for it are those of a pipeline
 * without Heartbeat. A configuration that tracks writes gets a {@link Duplex} handler. A handler
 * that is only inbound and is reconfigured to track writes adds a {@link WriteTracker} right after
 * itself, which stamps the writes that pass it (see there for the one difference).
 */
public sealed class HeartbeatHandler extends TimerEntry implements ChannelInboundHandler, ChannelFutureListener
        permits HeartbeatHandler.Duplex {

    /**
     * The hand-off word: the rules' action bits (0-21, see {@link ActionBits}), the ping policy's {@link #ON_WIRE} flag
     * (22), and above them a 9-bit tag of the configuration serial the bits were judged under.
     */
    private static final int POLICY_BITS = ActionBits.POLICY;
    /**
     * Ping policy: the event loop wrote the ping the worker decided last, and its write has not failed. Set by the
     * event loop when it writes a ping; cleared by the worker when it decides one, and by the event loop when the write
     * fails or the policy changes. It lives in the hand-off word because both threads already change that word
     * atomically; the hand-off itself keeps it ({@link #offerActions}, {@link #takeActions}). No ticker value in
     * {@link #pingWritten()} could double as "no ping": every ticker value is valid.
     */
    private static final int ON_WIRE = 1 << 22;
    private static final int TAG_SHIFT = 23;
    private static final int TAG_BITS = 0x1FF;

    /** An answer deadline's coalescing window is the configuration's divided by 2^this. */
    public static final int ANSWER_WINDOW_SHIFT = 2;

    // Judgement flags of the handler's own; a policy has the low 16 bits of the word to itself.
    /** The current check was deferred once for a stall of the worker (see {@code HeartbeatMonitor.Judge}). */
    private static final int STALL_GRACE = 1 << 30;
    /**
     * The next check waits for an answer to something the channel was sent (a ping): it gets a finer
     * coalescing window (see {@link #coalesce}). Set by the policy's judgement, read by the re-arm at its end.
     */
    private static final int ANSWER_PHASE = 1 << 29;
    /**
     * The worker applied a schedule request for this entry (an activation or a reconfiguration), so
     * the next expiry it judges is the first under the configuration that request came with: it
     * starts the policy there (see {@link #configToJudge}). Set by {@link #requestApplied}.
     */
    private static final int FRESH = 1 << 28;
    /** The channel is to be drained at its slot (see {@link #startDraining}): the sign bit, kept when reconfigured. */
    private static final int DRAINING = 1 << 31;
    private static final int DRAIN_SLOT_SHIFT = 16;
    /** A drain spreads its channels over this many slots of its window (12 bits of the judgement word). */
    static final int DRAIN_SLOTS = 1 << 12;
    private static final int DRAIN_SLOT_BITS = (DRAIN_SLOTS - 1) << DRAIN_SLOT_SHIFT;

    // The event loop's word (loopState): its flags in bits 0-3, the configuration serial above them.
    /** A read batch is in progress (channelRead seen, channelReadComplete not yet). */
    private static final int READING = 1;
    /**
     * The channel was told a goodbye (max age began one, or a close said one): it is told none again,
     * whatever configuration it has since, with or without guards (a goodbye is said once per channel).
     */
    private static final int GOODBYE_BEGUN = 1 << 1;
    /** The handler's lifecycle (bits 2-3): NEW, ACTIVE, DESTROYED. */
    private static final int LIFECYCLE = 3 << 2;
    private static final int NEW = 0;
    private static final int ACTIVE = 1 << 2;
    private static final int DESTROYED = 2 << 2;
    private static final int LOOP_FLAGS = 0xF;
    /**
     * A change of configuration is under way: the sequence lock's "odd". A change adds this twice,
     * so a stable serial has it clear and the serial counts changes in bits 5-31.
     */
    private static final int CHANGING = 1 << 4;

    private static final VarHandle LAST_READ;
    private static final VarHandle LAST_WRITE;
    private static final VarHandle SIDE;
    private static final VarHandle CONFIG;
    private static final VarHandle LOOP_STATE;
    private static final VarHandle ACTIONS;
    private static final VarHandle SLOT1;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            LAST_READ = lookup.findVarHandle(HeartbeatHandler.class, "lastRead", long.class);
            LAST_WRITE = lookup.findVarHandle(HeartbeatHandler.class, "lastWrite", long.class);
            SIDE = lookup.findVarHandle(HeartbeatHandler.class, "side", Object.class);
            CONFIG = lookup.findVarHandle(HeartbeatHandler.class, "config", BoundConfig.class);
            LOOP_STATE = lookup.findVarHandle(HeartbeatHandler.class, "loopState", int.class);
            ACTIONS = lookup.findVarHandle(HeartbeatHandler.class, "actions", int.class);
            SLOT1 = lookup.findVarHandle(HeartbeatHandler.class, "slot1", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // ---- Written by the event loop, read by the worker. ----
    /**
     * The configuration, bound to the monitor (which is thus one load away without a field of its own: the monitor of
     * every binding a handler gets is the same). The event loop changes it under a sequence lock with the serial in
     * {@link #loopState} ({@link #CHANGING} while changing; release stores), so the worker reads a config and the
     * serial it belongs to as one pair (acquire loads) and tags its verdict with that serial: a verdict judged under
     * one configuration is dropped on the event loop if the configuration changed since. The event loop reads it plain;
     * other threads opaque or acquire.
     */
    private BoundConfig config;
    /**
     * The event loop's word: the configuration serial (bits 4-31, see {@link #CHANGING}) and the event loop's flags
     * ({@link #READING}, the {@link #LIFECYCLE}). Only the event loop writes it (opaque stores of what it read plain,
     * and the sequence lock's release), so no update is ever lost; the worker reads the serial and READING from it
     * (acquire or opaque) and ignores the other flags. One word instead of an int and three bytes keeps the handler at
     * 96 bytes ({@code HandlerLayoutTest}).
     */
    @SuppressWarnings("unused") // written through LOOP_STATE
    private int loopState;
    /** Ticker time of the end of the latest read batch. */
    @SuppressWarnings("unused") // accessed through LAST_READ
    private long lastRead;
    /** Ticker time the latest write completed. */
    @SuppressWarnings("unused") // accessed through LAST_WRITE
    private long lastWrite;
    /**
     * The state only some configurations need, made by the policy ({@link HandlerPolicy#sideFor}):
     * an {@link OutputObserver} (observeOutput; event loop only) or a {@link ProbeState} (a ping
     * probe that matches answers; event loop and worker). A configuration that needs neither keeps
     * what is there; one that needs the other kind replaces it. Opaque: the event loop stores a
     * ProbeState before it publishes the configuration that needs it (a release store of
     * {@link #config}, or the schedule request), so a worker that judges that configuration finds it.
     * Null until then.
     */
    @SuppressWarnings("unused") // accessed through SIDE
    private Object side;

    // ---- Written by the event loop only. ctx is set before the schedule request that publishes it
    // to the worker, which then reads it (plain). ----
    public ChannelHandlerContext ctx;

    // ---- Worker only. ----
    /**
     * The policy's two slots, named by each policy's accessors. The idle policies: two of the check
     * times of the reader, writer and all-idle checks ({@link #checkTime(int)}; worker only; the
     * third, when all three are on, is an {@link AllIdleCheck} side object). The ping policy: when the
     * pending ping was decided ({@link #pingDecidedAt()}; worker only) and when the event loop last
     * wrote a ping ({@link #pingWritten()}; event loop, opaque; the worker reads it opaque). Reusing
     * them across policies is safe: only one policy's code touches them at a time. The event loop
     * writes the ping's slot only when it acts on a ping verdict of the configuration in force, which
     * the worker reached after it stopped judging any earlier one; a later configuration is published
     * (release) after those writes and the worker's {@code start} for it (acquire) overwrites them.
     */
    private long slot0;
    @SuppressWarnings("unused") // also accessed through SLOT1
    private long slot1;
    /**
     * The judgement word: the handler's flags (FRESH, STALL_GRACE, ANSWER_PHASE, the drain) and the
     * policy's (low 16 bits).
     */
    private int judgement;

    // ---- Hand-off: worker adds bits (CAS), event loop takes them (atomic and); and ON_WIRE. ----
    @SuppressWarnings("unused") // accessed through ACTIONS
    private volatile int actions;

    public HeartbeatHandler(MonitorEngine monitor, Plan config) {
        this.config = monitor.bind(config);
    }

    /**
     * A handler for one channel under {@code config}: on the outbound side too ({@link Duplex}) only if
     * the configuration tracks writes.
     */
    static HeartbeatHandler of(MonitorEngine monitor, Plan config) {
        return config.tracksWrites ? new Duplex(monitor, config) : new HeartbeatHandler(monitor, config);
    }

    /** Any thread: the monitor that made this handler. */
    public MonitorEngine monitor() {
        return ((BoundConfig) CONFIG.getOpaque(this)).monitor;
    }

    // ------------------------------------------------------------------ event loop: lifecycle

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        if (lifecycle() != NEW || this.ctx != null) {
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
            if (!(this instanceof Duplex) && ctx.channel().isRegistered()) { // removed by hand, not torn down
                WriteTracker.removeFrom(ctx.pipeline(), this);
            }
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
        if (lifecycle() == ACTIVE && config.config.tuner != null) { // not closed by Heartbeat: a reset?
            AdaptiveInterval.lost(this, config.config, ctx.channel());
        }
        destroy();
        ctx.fireChannelInactive();
    }

    private void initialize(ChannelHandlerContext ctx) {
        if (lifecycle() != NEW) {
            return;
        }
        lifecycle(ACTIVE);
        this.ctx = ctx;
        MonitorEngine monitor = config.monitor;
        Plan cfg = AdaptiveInterval.configFor(config.config, ctx.channel()); // an adaptive interval
        if (cfg != config.config) { // this channel's own interval, before anything is published
            CONFIG.setRelease(this, monitor.bind(cfg));
        }
        long now = monitor.ticker.nanoTime();
        stampRead(now);
        stampWrite(now);
        SIDE.setOpaque(this, sideFor(cfg, ctx.channel(), now)); // before the schedule request
        if (cfg.guards != null) {
            cfg.guards.warnIfWritesHideProgress(ctx.channel());
        }
        monitor.channelOpened();
        if (cfg.tracksAnything() && !monitor.worker.schedule(this, firstCheck(cfg, now))) {
            monitor.unmonitored(this); // the monitor was closed after this handler was made
        }
        ApiAccess.api().checkPlacementSoon(ctx, cfg); // last: a refusal closes the channel, which destroy() then undoes
    }

    private void destroy() {
        if (lifecycle() == ACTIVE) {
            MonitorEngine monitor = config.monitor;
            monitor.channelClosed();
            monitor.worker.cancel(this);
        }
        lifecycle(DESTROYED);
    }

    /** Event loop: the handler's lifecycle (plain: this thread is the word's only writer). */
    private int lifecycle() {
        return loopState & LIFECYCLE;
    }

    /** Event loop: moves the lifecycle to {@code to}. */
    private void lifecycle(int to) {
        LOOP_STATE.setOpaque(this, (loopState & ~LIFECYCLE) | to);
    }

    /** Event loop: sets {@code flag} in the event loop's word (a store only if it was clear). */
    private void raise(int flag) {
        int state = loopState;
        if ((state & flag) == 0) {
            LOOP_STATE.setOpaque(this, state | flag);
        }
    }

    /** Event loop: clears {@code flag}, which is set, in the event loop's word. */
    private void lower(int flag) {
        LOOP_STATE.setOpaque(this, loopState & ~flag);
    }

    /**
     * The handler's executor: switches configuration (an adaptive one at the interval its tuner learned
     * for the channel's peer); idleness is measured afresh from now, and any verdict the worker reached
     * under the previous configuration is dropped.
     */
    public void reconfigure(Plan requested) {
        Plan cfg = ctx == null ? requested : AdaptiveInterval.configFor(requested, ctx.channel());
        MonitorEngine monitor = config.monitor;
        BoundConfig bound = monitor.bind(cfg);
        if (cfg.tracksWrites && !(this instanceof Duplex) && ctx != null) {
            WriteTracker.addAfter(ctx, this); // first: before the writes the new configuration tracks
        }
        // CHANGING for the whole change: the worker judges nothing meanwhile, and the schedule or
        // cancel request below is made before it clears, so the worker never judges the new
        // configuration before it has applied that request (see configToJudge).
        LOOP_STATE.setOpaque(this, loopState + CHANGING); // plain read: this thread is the only writer
        boolean active = lifecycle() == ACTIVE;
        long now = 0;
        if (active) {
            now = monitor.ticker.nanoTime();
            SIDE.setOpaque(this, sideFor(cfg, ctx.channel(), now)); // before cfg is published
        }
        if (cfg.policy != config.config.policy) {
            pingOffWire(); // the ping slot held another policy's time meanwhile, or is about to
        }
        CONFIG.setRelease(this, bound);
        if (active) {
            stampRead(now);
            stampWriteAt(bound, now);
            settlePendingWrite(); // a write completed before now, unseen under the old one, is no later activity
            if (!cfg.tracksAnything() && !carriesGoodbye(cfg)) {
                monitor.worker.cancel(this);
            } else if (!monitor.worker.schedule(this, firstCheck(cfg, now))) {
                monitor.unmonitored(this);
            }
        }
        // CHANGING carries into the serial: the next stable serial. (The flags are as they are now.)
        LOOP_STATE.setRelease(this, loopState + CHANGING);
    }

    /**
     * Event loop: the side object for {@code cfg}: the policy's (see {@link HandlerPolicy#sideFor}),
     * wrapped in a {@link GuardState} when the configuration sets a guard.
     */
    private Object sideFor(Plan cfg, Channel channel, long now) {
        Object current = SIDE.getOpaque(this);
        Randomness random = config.monitor.randomness; // null but in a test that fixes it
        Object inner = cfg.policy.sideFor(cfg, current instanceof GuardState g ? g.inner : current, channel, now,
                random);
        // The grace of the configuration in force until cfg is published (none for a carried goodbye: its state
        // counts its grace's end from goodbyeAt).
        long beforeGrace = config.config.hasGuardState() ? config.config.guards.graceNanos : 0;
        if (cfg.hasGuardState()) {
            return cfg.guards.sideFor(inner, current, channel, now, beforeGrace, random);
        }
        // A goodbye said keeps the close at the end of the grace it announced, under a configuration without guards
        // too (a terminal decision): the state is carried, with no guards but that close (Guards#CARRIED).
        return current instanceof GuardState g && g.phase() != GuardState.LIVING
                ? Guards.CARRIED.sideFor(inner, current, channel, now, beforeGrace, random) : inner;
    }

    /**
     * Any thread: whether the channel carries a goodbye's grace into {@code cfg}, a configuration without guard
     * state: {@link MaxAgeRule} (not among cfg's rules) then still closes the channel at the grace's end.
     */
    private boolean carriesGoodbye(Plan cfg) {
        return !cfg.hasGuardState() && SIDE.getOpaque(this) instanceof GuardState;
    }

    /**
     * Event loop: when the first check under {@code cfg}, whose stamps are set to {@code now}, is due:
     * {@code shortestNanos} later, or sooner for a guard whose state runs on from before (an age, a
     * goodbye, an unwritable spell) or for an idle timeout that an overload scales down.
     */
    private long firstCheck(Plan cfg, long now) {
        long first = now + Math.min(cfg.shortestNanos, HeartbeatConfig.MAX_TIMEOUT.toNanos());
        for (Rule rule : cfg.rules()) {
            first = rule.firstLook(this, cfg, first, now);
        }
        if (carriesGoodbye(cfg)) {
            first = MaxAgeRule.INSTANCE.firstLook(this, cfg, first, now);
        }
        // A rule may be due already (a 50 s old channel switched to a 20 s max age): then now, not in the
        // past, where the worker would take the check's lateness for a stall of its own.
        return Rule.latest(first, now);
    }

    /** The handler's executor: counts a read now, as {@code IdleStateHandler.resetReadTimeout()}. */
    public void resetReadTimeout() {
        stampRead(config.ticker.nanoTime());
    }

    /** The handler's executor: counts a write now, as {@code IdleStateHandler.resetWriteTimeout()}. */
    public void resetWriteTimeout() {
        stampWriteAt(config, config.ticker.nanoTime());
    }

    /** The executor this handler runs on, or null before it is added to a pipeline. */
    EventExecutor executor() {
        ChannelHandlerContext c = ctx;
        return c == null ? null : c.executor();
    }

    /** Any thread: the current configuration. */
    public Plan config() {
        return ((BoundConfig) CONFIG.getAcquire(this)).config;
    }

    /**
     * Worker: the configuration serial, to read the configuration it belongs to with
     * {@link #configToJudge(int)} and to tag a verdict judged under it ({@link #offerActions}).
     */
    public int serialToJudge() {
        return (int) LOOP_STATE.getAcquire(this) & ~LOOP_FLAGS;
    }

    /**
     * Worker: the configuration of {@code serial} (from {@link #serialToJudge}), the two read as one
     * pair; null if the event loop is changing it right now, or changed it since, or a request of the
     * event loop's is still to be applied (it replaces this expiry's re-arm). The caller looks again
     * shortly: if the event loop stalled after its request, and that came due already, no other
     * expiry will. The first expiry after an applied request starts the configuration's policy.
     */
    public BoundConfig configToJudge(int serial) {
        BoundConfig bound = (BoundConfig) CONFIG.getAcquire(this);
        int after = (int) LOOP_STATE.getAcquire(this) & ~LOOP_FLAGS;
        if ((serial & CHANGING) != 0 || serial != after || requestPending()) {
            return null;
        }
        if ((judgement & FRESH) != 0) {
            prepare(bound.config);
        }
        return bound;
    }

    /** Worker: the worker applied a schedule request: the next expiry starts the configuration. */
    @Override
    protected void requestApplied() {
        judgement |= FRESH;
        monitor().clockWanted();
    }

    // ------------------------------------------------------------------ state, for the policies

    /** Any thread: ticker time of the end of the latest read batch (opaque). */
    long lastReadOpaque() {
        return (long) LAST_READ.getOpaque(this);
    }

    /** Any thread: ticker time the latest write completed, at the latest (opaque; {@link CoarseClock#bound}). */
    public long lastWriteOpaque() {
        long stamp = (long) LAST_WRITE.getOpaque(this);
        CoarseClock coarse = ((BoundConfig) CONFIG.getOpaque(this)).coarse;
        return coarse == null ? stamp : coarse.bound(stamp);
    }

    /** Any thread: the write stamp as written (opaque), which every write moves: to compare for equality only. */
    long lastWriteStamp() {
        return (long) LAST_WRITE.getOpaque(this);
    }

    /** Any thread: whether a read batch is in progress (opaque). */
    boolean readingOpaque() {
        return ((int) LOOP_STATE.getOpaque(this) & READING) != 0;
    }

    /** Event loop: a read batch ended at {@code now} (opaque store). */
    private void stampRead(long now) {
        LAST_READ.setOpaque(this, now);
    }

    /** Event loop: a write completed at {@code now} (opaque store). */
    private void stampWrite(long now) {
        LAST_WRITE.setOpaque(this, now);
    }

    /** The handler's executor: a write at ticker time {@code now} (under a coarse clock: {@link CoarseClock#at}). */
    private void stampWriteAt(BoundConfig bound, long now) {
        stampWrite(bound.coarse == null ? now : CoarseClock.at(now, lastWriteStamp()));
    }

    /** The handler's executor: a write completed before now: a ticker reading, or {@link CoarseClock#stamp}. */
    private long writeTime(BoundConfig bound) {
        CoarseClock coarse = bound.coarse;
        return coarse == null ? bound.ticker.nanoTime() : coarse.stamp(lastWriteStamp());
    }

    /** Any thread: the policy's side object, or null (opaque); unwrapped from the guards' state if there is one. */
    public Object side() {
        Object s = SIDE.getOpaque(this);
        return s instanceof GuardState g ? g.inner : s;
    }

    /** Any thread: the guards' state, or null (opaque). */
    public GuardState guardState() {
        return SIDE.getOpaque(this) instanceof GuardState g ? g : null;
    }

    /** Any thread: the round-trip time from the probe's answers, or null (no sample, or no matching probe). */
    public Rtt rtt() {
        return side() instanceof ProbeState p ? p.snapshot() : null;
    }

    /** Event loop: the output observer, if the side object is one. */
    OutputObserver output() {
        return side() instanceof OutputObserver o ? o : null;
    }

    /**
     * Event loop or worker: the probe state, if the side object is one. Under a ping configuration whose probe matches
     * answers it is, except to a worker still judging such a configuration the event loop is switching away from (to
     * one with another side object): that verdict is stale, and dropped on the event loop.
     */
    public ProbeState probeState() {
        return side() instanceof ProbeState p ? p : null;
    }

    /** Event loop: the configuration in force (plain: this thread is its only writer). */
    public BoundConfig bound() {
        return config;
    }

    /** Event loop: the configuration serial, to tell later whether a reaction changed it (see {@link #canStillAct}). */
    int serial() {
        return loopState & ~LOOP_FLAGS;
    }

    /**
     * Event loop: whether an action may still run: the configuration serial is still {@code serial},
     * the handler active and the channel open (a user handler may close, remove or reconfigure from
     * inside an event; IdleStateHandler checks each of its tasks the same way).
     */
    boolean canStillAct(int serial) {
        return serial == serial() && canAct();
    }

    /** Worker only (plain): the judgement word; a policy owns its low 16 bits. */
    int judgement() {
        return judgement;
    }

    /** Worker only: sets the policy's low 16 bits of the judgement word; the handler's own flags stay. */
    void judgement(int word) {
        judgement = (judgement & ~POLICY_BITS) | (word & POLICY_BITS);
    }

    /** Worker only: whether the next check waits for an answer, which gives it a finer coalescing window. */
    void awaitAnswer(boolean awaiting) {
        judgement = awaiting ? judgement | ANSWER_PHASE : judgement & ~ANSWER_PHASE;
    }

    /** Worker only, idle policies: the check time in policy slot {@code slot} (0 or 1; see {@link IdlePolicy}). */
    long checkTime(int slot) {
        return slot == 0 ? slot0 : slot1;
    }

    /** Worker only, idle policies: sets the check time in policy slot {@code slot} (0 or 1). */
    void checkTime(int slot, long time) {
        if (slot == 0) {
            slot0 = time;
        } else {
            slot1 = time;
        }
    }

    /**
     * Worker: the all-idle check's side object, if the side object is one. Under a configuration with
     * all three idle kinds it is, except to a worker still judging such a configuration the event loop
     * is switching away from (to one with another side object): that verdict is stale, and dropped.
     */
    AllIdleCheck allIdleCheck() {
        return side() instanceof AllIdleCheck c ? c : null;
    }

    /** Worker only, ping policy: a ping is decided at {@code now}; the event loop puts it on the wire. */
    void pingDecided(long now) {
        slot0 = now;
        ACTIONS.getAndBitwiseAnd(this, ~ON_WIRE); // before the hand-off, so before the event loop's write
    }

    /**
     * Worker only, ping policy: the policy starts at {@code start}: the write slot, which may hold
     * another policy's check time ahead of now, is set before any ping this policy can decide, so that
     * no ping decided from now reads it as its write attempt (see {@code PingPolicy.attemptFailed}).
     * The event loop writes the slot only for a ping verdict reached after this.
     */
    void pingSlotsFrom(long start) {
        slot0 = start - 1;
        SLOT1.setOpaque(this, start - 1);
    }

    /** Worker only, ping policy: when the pending ping was decided. */
    long pingDecidedAt() {
        return slot0;
    }

    /** Event loop, ping policy: a ping is being written at {@code now}. */
    public void pingWrote(long now) {
        SLOT1.setOpaque(this, now);
        ACTIONS.getAndBitwiseOr(this, ON_WIRE); // after the write time: a reader that sees the flag sees the time
    }

    /** Event loop: the latest ping's write failed, or the policy changed: no ping of ours is on the wire. */
    public void pingOffWire() {
        if (((int) ACTIONS.getOpaque(this) & ON_WIRE) != 0) { // only this thread sets it
            ACTIONS.getAndBitwiseAnd(this, ~ON_WIRE);
        }
    }

    /** Either thread, ping policy: whether the ping the worker decided last was written, and its write did not fail. */
    public boolean pingOnWire() {
        return ((int) ACTIONS.getAcquire(this) & ON_WIRE) != 0; // acquire: then pingWritten() is the flag's
    }

    /** Either thread, ping policy: ticker time the latest ping was written; meaningful while {@link #pingOnWire}. */
    long pingWritten() {
        return (long) SLOT1.getOpaque(this);
    }

    /**
     * Worker, from a rule's judgement of this entry's expiry: the rule needs its next look at
     * {@code next}. The entry comes due at the earliest of the looks its rules ask for (see
     * {@link #judge}); the drain's slot is folded in by {@link #coalesce}, as for every placement.
     */
    void lookAt(long next) {
        monitor().lookAt(next);
    }

    /** Worker only: this channel is to be drained at {@code slot} of the monitor's drain (see {@link #DRAIN_SLOTS}). */
    void startDraining(int slot) {
        judgement = (judgement & ~DRAIN_SLOT_BITS) | DRAINING | (slot << DRAIN_SLOT_SHIFT);
    }

    private int drainSlot() {
        return (judgement & DRAIN_SLOT_BITS) >>> DRAIN_SLOT_SHIFT;
    }

    /** Worker only: whether this channel is draining and its drain slot has come by {@code now}. */
    private boolean drainSlotCame(long now) {
        return judgement < 0 && now - monitor().drainTime(drainSlot()) >= 0; // DRAINING, and its slot came
    }

    /** Worker only ({@link DrainRule}): whether this channel's drain slot has come; it is then no longer draining. */
    boolean takeDrainSlotIfDue(long now) {
        if (drainSlotCame(now)) {
            judgement &= ~(DRAINING | DRAIN_SLOT_BITS);
            return true;
        }
        return false;
    }

    // ------------------------------------------------------------------ event loop: the hot path

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        BoundConfig bound = config;
        if (bound.tracksReads) {
            raise(READING);
        }
        if (bound.inspectsReads && inspect(bound, ctx, msg)) {
            return; // an answer to our ping, consumed: still a read for idleness (stamped above)
        }
        ctx.fireChannelRead(msg);
    }

    /**
     * Event loop: the peer said we ping too often: the channel's ping interval doubles (a
     * reconfiguration, so idleness is measured afresh; with an adaptive interval, the tuner raises the
     * peer's floor and the channel moves to it), counted, and announced with a
     * {@link HeartbeatPingBackoffEvent} so the application can remember it for its next connection
     * (say, {@code AdaptiveKeepAlive.tooManyPings(peer)}).
     */
    private void backOff(BoundConfig bound, ChannelHandlerContext ctx) {
        Plan slower = AdaptiveInterval.slower(bound.config, ctx.channel());
        reconfigure(slower);
        bound.monitor.pingBackoff();
        ctx.fireUserEventTriggered(ApiAccess.api().pingBackoffEvent(slower.owner.pingInterval()));
    }

    /** Event loop: offers {@code msg} to the goodbye and the probe; whether one of them consumed it. */
    private boolean inspect(BoundConfig bound, ChannelHandlerContext ctx, Object msg) {
        Object side = SIDE.getOpaque(this);
        try {
            if (bound.watchesTooManyPings && ApiAccess.api().isTooManyPings(bound.config.probe, msg)) {
                backOff(bound, ctx);
                return false; // the goodbye goes on to the application and the codec
            }
            for (Rule rule : bound.config.inboundRules()) {
                if (rule.onInbound(this, ctx, bound.config, msg)) {
                    return true;
                }
            }
            if (side instanceof GuardState g) {
                side = g.inner;
            }
            return bound.matchesAnswers && side instanceof ProbeState probe
                    && probe.onInbound(this, bound, ctx, msg, lastReadOpaque());
        } catch (Throwable t) { // a throwing probe: counted, logged (rate-limited); the message goes on
            bound.monitor.actionFailed(this, t);
            return false;
        }
    }

    /**
     * Event loop: a read batch ends. The inbound-only handler stamps it and passes the event on. A
     * {@link Duplex} passes it on first (where an application flushes the answers it wrote while reading)
     * and then stamps the batch and the writes that completed while the event was passed on with one
     * clock read ({@link #writeCompleted}): answers written while reading and flushed at the batch's end
     * cost no clock read of their own. Both stamps are later than IdleStateHandler's by what the handlers
     * behind this one did with the event, never earlier; READING is lowered after them, as before.
     */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if ((loopState & READING) == 0) {
            ctx.fireChannelReadComplete();
        } else if (this instanceof Duplex d) {
            d.flushState |= Duplex.COMPLETING;
            try {
                ctx.fireChannelReadComplete();
            } finally {
                d.flushState &= ~Duplex.COMPLETING;
                long now = config.ticker.nanoTime();
                stampRead(now);
                if ((d.flushState & Duplex.STAMP_OWED) != 0) {
                    d.flushState &= ~Duplex.STAMP_OWED;
                    stampWriteAt(config, now);
                }
                lower(READING);
            }
        } else {
            stampRead(config.ticker.nanoTime());
            lower(READING); // after the stamp, as before
            ctx.fireChannelReadComplete();
        }
    }

    /**
     * The handler's executor: a write passes this handler's place in the pipeline ({@code ctx} is the
     * context it passes: the {@link Duplex}'s own, or its {@link WriteTracker}'s, either being the
     * {@code site} that keeps the write's promise until it is settled). It counts when it completes, as
     * in {@code IdleStateHandler}: a write that waits in the outbound buffer (a peer that reads nothing)
     * is no write yet, for the writer idleness and for the write stall alike.
     *
     * <p>One clock read per flush, not one per write, and no listener on a write that completes by the
     * end of its flush ({@code IdleStateHandler} adds one to every write and reads the clock in each).
     * Every write's promise is <i>settled</i> once: if it is done, the write completed before now, so
     * the clock is read now and stamped ({@link #settle}); if not, the handler becomes its listener
     * (no allocation: the handler is the listener) and stamps when it completes, or, if it completes
     * within a flush of this {@link Duplex}'s, at the flush's end with the flush's one clock read (so
     * several writes flushed together cost a listener each but the last, and one clock read).
     * A promise is settled
     * <ul>
     * <li>at once, if the write completed within {@code ctx.write} (a handler in front completed or
     *     failed it): no flush need follow, so it is not left for one;</li>
     * <li>else when the next write passes (the site keeps only the latest unsettled promise), or at the
     *     end of the next flush that passes this handler ({@link #onFlush}), after {@code ctx.flush()}:
     *     a write that the flush completed is stamped then. One write per flush, as in a request and
     *     its response, costs one clock read and no listener when the socket takes it.</li>
     * </ul>
     * Never early: a stamp is a clock reading taken after the completion it stands for (or the
     * listener's own reading when it completes later, on the socket's drain, outside any flush of
     * this handler), so it is never older than {@code IdleStateHandler}'s for the same completion; the
     * stamp is later by at most the rest of the flush, or, for a write that completed before the next
     * write or flush passes this handler (completed by a flush that did not pass it), by that gap.
     * Whatever the order the writes complete in (a handler in front that holds one write and lets a
     * later one through, as a flow controller may), none is missed: only a promise that is done when it
     * is settled goes without a listener. Not settled by the outbound buffer's emptiness after a flush:
     * a write held by a handler in front of this one (an SSL handler during its handshake) is in no
     * outbound buffer, and would be counted before it completes, and its completion missed.
     *
     * <p>A write with the void promise gets a promise of its own ({@link VoidWrite}, one object per
     * such write, with the handler as its listener, and a clock read when it completes), as
     * {@code IdleStateHandler}'s {@code unvoid()} does: a void promise takes no listener, and cannot
     * say whether it is done.
     */
    final void onWrite(WriteSite site, ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        BoundConfig bound = config;
        if (bound.watchesStall && SIDE.getOpaque(this) instanceof GuardState g) { // before the write joins the buffer
            g.beforeWrite(ctx.channel());
        }
        if (!bound.tracksWrites) {
            ctx.write(msg, promise);
        } else if (promise.isVoid()) {
            ctx.write(msg, new VoidWrite(ctx.channel(), this.ctx.executor(), promise)).addListener(this);
        } else {
            ctx.write(msg, promise);
            if (promise.isDone()) { // completed within the write: settled now
                writeCompleted(bound);
                return;
            }
            ChannelPromise earlier = site.pendingWrite(); // read after the write: it may have written too
            site.pendingWrite(promise);
            if (earlier != null) {
                settle(earlier);
            }
        }
    }

    /**
     * The handler's executor: a flush passes: after it, the latest write is settled (see {@link #onWrite}), and the
     * writes whose listeners ran during it are stamped, with one clock read in all: a {@link Duplex}'s listeners only
     * mark the stamp owed while it flushes ({@link Duplex#flushState}); a {@link WriteTracker}'s read the clock each.
     */
    final void onFlush(WriteSite site, ChannelHandlerContext ctx) {
        Duplex duplex = site instanceof Duplex d && (d.flushState & Duplex.FLUSHING) == 0 ? d : null; // outermost
        if (duplex != null) {
            duplex.flushState |= Duplex.FLUSHING;
        }
        try {
            ctx.flush();
        } finally { // whatever the flush did, no completion goes unstamped
            ChannelPromise last = site.pendingWrite(); // after the flush, which may have written more
            if (last != null) {
                site.pendingWrite(null);
                if (last.isDone()) {
                    writeCompleted(config);
                } else {
                    last.addListener(this); // this handler is the listener: nothing allocated
                }
            }
            if (duplex != null) {
                duplex.flushState &= ~Duplex.FLUSHING;
                if ((duplex.flushState & Duplex.COMPLETING) == 0) { // else the batch's end pays
                    payOwedWrite(); // after every completion it stands for
                }
            }
        }
    }

    /**
     * The handler's executor: a tracked write completed before now. A {@link Duplex} within one of its
     * flushes, or passing on the end of a read batch, owes the stamp, paid with one clock read when the
     * outermost of them returns ({@link #onFlush}, {@link #channelReadComplete}), or before a rule acts
     * ({@link #settlePendingWrite}), whichever comes first; otherwise the write is stamped now. Either way
     * the stamp is read after the completion, and owed no longer than one call of the handler lasts.
     */
    private void writeCompleted(BoundConfig bound) {
        if (this instanceof Duplex d && (d.flushState & (Duplex.FLUSHING | Duplex.COMPLETING)) != 0) {
            d.flushState |= Duplex.STAMP_OWED;
        } else {
            stampWrite(writeTime(bound));
        }
    }

    /** The handler's executor: stamps the writes a {@link Duplex} owes (see {@link #writeCompleted}), if any. */
    private void payOwedWrite() {
        if (this instanceof Duplex d && (d.flushState & Duplex.STAMP_OWED) != 0) {
            d.flushState &= ~Duplex.STAMP_OWED;
            stampWrite(writeTime(config));
        }
    }

    /**
     * The handler's executor: a tracked write's promise, not settled before: stamped now if it is done
     * (it completed before now), else listened to (stamped when it completes, {@link #operationComplete}).
     */
    private void settle(ChannelPromise promise) {
        if (promise.isDone()) {
            writeCompleted(config);
        } else {
            promise.addListener(this); // this handler is the listener: nothing allocated
        }
    }

    /**
     * Where a write passes the handler ({@link Duplex}, {@link WriteTracker}), which keeps the latest
     * write's promise that is not settled yet ({@link #onWrite}). The handler's executor only.
     */
    interface WriteSite {
        /** The latest tracked write's promise not settled yet, or null. */
        ChannelPromise pendingWrite();

        /** Keeps {@code promise} (null: none) as the latest tracked write's promise not settled yet. */
        void pendingWrite(ChannelPromise promise);
    }

    /**
     * A write completed, or was completed when it was settled later (see {@link #onWrite}): stamped on the handler's
     * executor. The listener of a promise runs on the promise's executor, which for the application's promises is the
     * channel's event loop (or the writing handler's executor); a handler on an executor of its own is handed the
     * completion there (a task per write, on that configuration only), and keeps its stamp from going back.
     */
    @Override
    public void operationComplete(ChannelFuture future) {
        if (future instanceof VoidWrite w && !w.isSuccess()) {
            w.voidPromise.tryFailure(w.cause()); // as unvoid()'s promise: the void promise says it, or not
        }
        EventExecutor executor = ctx.executor();
        if (executor.inEventLoop()) {
            writeCompleted(config); // within a flush or a read batch: stamped at its end
            return;
        }
        long now = ((BoundConfig) CONFIG.getOpaque(this)).ticker.nanoTime();
        try {
            executor.execute(() -> {
                if (now - lastWriteStamp() > 0) { // a coarse stamp beyond now stands for a write before it
                    stampWrite(now);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
            // the executor is gone, and the channel with it
        }
    }

    // ------------------------------------------------------------------ worker: judgement

    /**
     * Worker: has the policy of {@code bound} judge this channel at {@code now}; the entry is re-armed
     * by then (see {@link HandlerPolicy}).
     *
     * @return the action bits to hand to the event loop, 0 for none
     */
    int judge(BoundConfig bound, long now) {
        judgement &= ~STALL_GRACE; // judged at last: a later stall may defer it again
        Plan cfg = bound.config;
        MonitorEngine monitor = bound.monitor;
        monitor.startLooks(now + HeartbeatConfig.MAX_TIMEOUT.toNanos()); // no rule needs a look later than this
        boolean over = conversationOver(cfg);
        int bits = 0;
        for (Rule rule : cfg.rules()) {
            if (!(over && rule.restsAfterLastWord())) {
                bits |= rule.judge(this, bound, now);
            }
        }
        if (carriesGoodbye(cfg)) {
            bits |= MaxAgeRule.INSTANCE.judge(this, bound, now);
        }
        bits |= CloseSequence.judgeHold(this, cfg, now);
        // A hand-off still waiting (for the action budget) has not asked the veto yet: the look for the hold it
        // may ask for comes again, or a hold that ends before the rules' next look is not re-checked in time.
        if (bits != 0 || handOffWaiting()) {
            CloseSequence.lookForAHold(this, cfg, now);
        }
        monitor.worker.rearm(this, monitor.takeLooks()); // the earliest look any rule asked for
        return bits;
    }

    /**
     * Any thread: whether the channel has said a goodbye after which the peer answers nothing (see
     * {@link Probe#goodbyeEndsConversation}): the rules that wait for the peer then rest, and the
     * grace's end closes the channel.
     */
    private boolean conversationOver(Plan cfg) {
        return cfg.hasGuardState() && SIDE.getOpaque(this) instanceof GuardState g && cfg.guards.conversationOver(g);
    }

    /** Worker: whether to defer a check that came due late because the worker stalled: not once a drain slot came. */
    boolean takeStallGrace(long now) {
        if ((judgement & STALL_GRACE) != 0 || drainSlotCame(now)) {
            return false;
        }
        judgement |= STALL_GRACE;
        return true;
    }

    /**
     * Worker, at the first expiry under a new configuration serial: starts judging {@code cfg}. Every
     * request for a handler is due {@code shortestNanos} after the moment its stamps were set, so
     * that moment is {@code requestedDeadline() - shortestNanos}; the policy's checks start from it.
     */
    private void prepare(Plan cfg) {
        judgement &= DRAINING | DRAIN_SLOT_BITS; // clears FRESH; a drain outlives a reconfiguration
        // The guards' first look may come before shortestNanos (an age running since activation): the
        // guard state then knows the stamp time itself.
        long start = SIDE.getOpaque(this) instanceof GuardState g ? g.configuredAt
                : requestedDeadline() - cfg.shortestNanos; // as requested, before coalescing
        cfg.policy.start(this, cfg, start);
    }

    // ------------------------------------------------------------------ hand-off

    /**
     * Worker: adds action bits judged under the configuration {@code serial} (see
     * {@link #serialToJudge}); bits still pending from another serial are replaced, never merged.
     * {@link #ON_WIRE} stays as it is.
     *
     * @return the word that was pending before (0: push the handler to its event loop's batch)
     */
    public int offerActions(int bits, int serial) {
        int word = tagOf(serial) << TAG_SHIFT | bits;
        int old;
        int pending;
        do {
            old = (int) ACTIONS.getVolatile(this);
            pending = old & ~ON_WIRE;
        } while (!ACTIONS.compareAndSet(this, old, (old & ON_WIRE) | (pending & ActionBits.DRAIN)
                | (pending != 0 && pending >>> TAG_SHIFT == word >>> TAG_SHIFT ? pending | word : word)));
        return pending;
    }

    /**
     * Worker: timer slack. Deadlines are rounded up to the next point of the monitor's grid of the
     * configuration's coalescing window (a power of two of nanoseconds, capped by the monitor), or of a finer
     * grid where that point is full ({@link CheckGrid}), so that the checks of many channels share one
     * wake-up; decisions still use the exact check times, so only delivery is later, by less than
     * the window.
     */
    @Override
    protected long coalesce(long deadline) {
        BoundConfig bound = (BoundConfig) CONFIG.getAcquire(this);
        if (judgement < 0) { // DRAINING: every placement (a re-arm, a move, a request of a reconfiguration)
            deadline = Rule.earliest(deadline, bound.monitor.drainTime(drainSlot())); // keeps the slot
        }
        long window = bound.monitor.coalescingWindow(bound.config);
        if ((judgement & ANSWER_PHASE) != 0) {
            // A ping chain (ping, re-ping, close) would pay the window at every step. The answer
            // deadlines of pings decided at one grid point fall within a few ms of each other anyway
            // (decision + write delay + timeout), so a quarter of the window still lets them share
            // wake-ups, and the chain pays the full window once.
            window >>>= ANSWER_WINDOW_SHIFT;
        }
        return window <= 1 ? deadline : bound.monitor.grid.place(deadline, window);
    }

    /**
     * Worker, under an action budget, before it pushes this handler to its event loop's batch: the word handed
     * over waited {@code nanos} for the budget (see {@link GuardState#deferredBy}); the policy's verdicts that
     * traffic meanwhile made void are taken out of it ({@link HandlerPolicy#outdatedBits}).
     */
    void handedAfter(long nanos) {
        if (nanos > 0) {
            Plan cfg = ((BoundConfig) CONFIG.getAcquire(this)).config;
            ACTIONS.getAndBitwiseAnd(this, ~cfg.policy.outdatedBits(this, cfg));
        }
        if (SIDE.getOpaque(this) instanceof GuardState g) {
            g.deferredBy(nanos);
        }
    }

    /** Worker: whether action bits handed over are not taken by the event loop yet (opaque). */
    private boolean handOffWaiting() {
        return ((int) ACTIONS.getOpaque(this) & ~ON_WIRE) != 0;
    }

    /** Event loop: takes the pending action word (0 if none); {@link #ON_WIRE} stays. */
    public int takeActions() {
        return (int) ACTIONS.getAndBitwiseAnd(this, ON_WIRE) & ~ON_WIRE;
    }

    /** The configuration tag of a hand-off word (for tests that read the word back). */
    public static int tagOfWord(int word) {
        return word >>> TAG_SHIFT;
    }

    private static int tagOf(int serial) {
        return (serial >>> 5) & TAG_BITS; // a stable serial counts changes from bit 5 (see CHANGING)
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
        MonitorEngine monitor = config.monitor;
        boolean stale = word >>> TAG_SHIFT != tagOf(serial());
        if (stale && (word & ActionBits.DRAIN) == 0) {
            monitor.staleVerdict(); // judged under a configuration this channel no longer has
            return;
        }
        if (!canAct()) {
            return;
        }
        // The worker decided from stamps it read earlier; what the event loop did since (it may have
        // read data just now) is checked again by each rule, as IdleStateHandler's tasks check on the loop.
        Plan cfg = config.config;
        settlePendingWrite(); // before now: a stamp it makes is no later than the rules' now
        long now = monitor.ticker.nanoTime();
        int bits = stale ? ActionBits.DRAIN : word; // a drain is terminal: it closes whatever the configuration
        if ((bits & ActionBits.RECHECK) != 0) {
            bits |= CloseSequence.takeHeld(this); // the held closes, performed again, each from the current stamps
        }
        GuardState g = cfg.hasGuardState() && SIDE.getOpaque(this) instanceof GuardState s ? s : null;
        boolean over = g != null && cfg.guards.conversationOver(g);
        int serial = serial();
        for (Rule rule : cfg.rules()) {
            int mine = bits & rule.bits();
            if (mine == 0 || !canStillAct(serial) || (over && rule.restsAfterLastWord())) {
                continue;
            }
            if (g != null) {
                g.performing = mine; // what a hold of the veto holds, and performs again at its re-check
            }
            rule.perform(this, ctx, cfg, mine, now);
            if ((mine & ActionBits.DRAIN) != 0) {
                break; // terminal: whatever the drain's close sequence did, nothing else acts on this verdict
            }
        }
        if ((bits & ActionBits.AGE) != 0 && carriesGoodbye(cfg) && canStillAct(serial)) {
            MaxAgeRule.INSTANCE.perform(this, ctx, cfg, ActionBits.AGE, now); // a goodbye's grace carried (above)
        }
        if (g != null && g.holding && !g.held()) {
            g.holding = false; // the episode ended: closed, or no longer due (traffic came)
        }
        settlePendingWrite(); // a goodbye written from this handler's context flushed the writes before it
    }

    /**
     * Event loop: settles the latest tracked write's promise that no flush of this handler settled yet
     * (see {@link #onWrite}). A flush that does not pass this handler completes such a write unseen: the
     * goodbye this handler writes and flushes from its own context, or a handler in front that flushes on its
     * own. The worker judges from the stamps, so before a rule acts on its verdict, and after the rules (a
     * goodbye said), a write that completed meanwhile is stamped now: later than its completion, never
     * earlier, so the writer idleness it ends is never declared early.
     */
    private void settlePendingWrite() {
        if (!config.tracksWrites) {
            return;
        }
        WriteSite site = this instanceof Duplex d ? d : WriteTracker.find(ctx.pipeline(), this);
        ChannelPromise pending = site == null ? null : site.pendingWrite();
        if (pending != null) {
            site.pendingWrite(null);
            settle(pending);
        }
        payOwedWrite(); // a verdict acted on within a read batch (an embedded loop's tasks) sees its writes
    }

    /** Event loop: whether this channel was told a goodbye already, under this configuration or an earlier one. */
    boolean goodbyeSaid() {
        return (loopState & GOODBYE_BEGUN) != 0;
    }

    /** Event loop: the channel is being told its goodbye (see {@link #GOODBYE_BEGUN}). */
    void goodbyeBegun() {
        raise(GOODBYE_BEGUN);
    }

    /** Event loop: whether an action may still run: the handler is active and the channel open. */
    private boolean canAct() {
        return lifecycle() == ACTIVE && ctx.channel().isOpen();
    }

    /**
     * Event loop, as the {@link CloseSequence} closes the channel: the handler is done and its entry
     * leaves the wheel now, not at channelInactive (as ReadTimeoutHandler closes once).
     */
    void retire() {
        lifecycle(DESTROYED);
        config.monitor.channelClosed();
        config.monitor.worker.cancel(this);
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
        BoundConfig bound = config;
        if (bound.watchesWritability && SIDE.getOpaque(this) instanceof GuardState g) {
            g.writabilityChanged(ctx.channel().isWritable(), bound.ticker.nanoTime());
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated in ChannelHandler, current in ChannelInboundHandler
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.fireExceptionCaught(cause);
    }

    @Override
    public String toString() {
        ChannelHandlerContext c = ctx; // (racy from other threads: for logs only)
        return "HeartbeatHandler[" + (c == null ? "unbound" : c.channel()) + ", " + config() + "]";
    }

    /**
     * The handler of a configuration that tracks writes: also on the outbound side, where it stamps
     * completed writes ({@link #onWrite}, {@link #onFlush}); its other outbound methods pass through.
     * Its two fields, the latest write's promise not settled yet and the flush state, make it 8 bytes
     * larger than the inbound-only handler ({@code HandlerLayoutTest}): the price of a write that costs
     * no listener and no clock read of its own.
     */
    static final class Duplex extends HeartbeatHandler implements ChannelOutboundHandler, WriteSite {

        /** {@link #flushState}: a flush of this handler's is under way. */
        static final byte FLUSHING = 1;
        /** {@link #flushState}: a write completed within a flush or a read batch's end, not stamped yet. */
        static final byte STAMP_OWED = 2;
        /** {@link #flushState}: the end of a read batch is being passed on ({@link #channelReadComplete}). */
        static final byte COMPLETING = 4;

        /** The latest tracked write's promise not settled yet, or null. The handler's executor only. */
        private ChannelPromise pendingWrite;
        /**
         * {@link #FLUSHING} while a flush of this handler's is under way on the handler's executor,
         * {@link #COMPLETING} while it passes on the end of a read batch, and {@link #STAMP_OWED} while a
         * write that completed within either waits for its stamp (see {@link #writeCompleted}: the outermost
         * of them pays it when it returns). The handler's executor only; in the padding the promise's
         * field leaves.
         */
        byte flushState;

        Duplex(MonitorEngine monitor, Plan config) {
            super(monitor, config);
        }

        @Override
        public ChannelPromise pendingWrite() {
            return pendingWrite;
        }

        @Override
        public void pendingWrite(ChannelPromise promise) {
            pendingWrite = promise;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            onWrite(this, ctx, msg, promise);
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            onFlush(this, ctx);
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
    }
}
