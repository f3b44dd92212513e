/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.util.ReferenceCountUtil;

/**
 * The lifecycle guards of a configuration, beside its idle policy and on the same wheel entry:
 * maximum connection age (with jitter, grace and a protocol goodbye), write stall and maximum
 * unwritable time; and the drain's action. Immutable, held by the {@link HeartbeatConfig} that sets
 * a guard (null otherwise); the per-channel state is a {@link GuardState} side object.
 *
 * <p>Each guard adds its next look to the entry's re-arm (the earliest of the policy's and the
 * guards' wins), so a channel still has one timer. Every close is decided twice, as the policies'
 * are: the worker finds a guard due from the state the event loop published, and the event loop
 * checks again from its own, current view before it acts, so a guard is never early.
 *
 * <p>Action bits: the guards' are 16-19 of the hand-off word, above the policy's 16.
 */
final class Guards {

    /** The channel reached its maximum age, or its goodbye's next step or its grace is due. */
    static final int AGE = 1 << 16;
    /** Bytes are pending and no write completed for a stall look: the event loop checks for a stall. */
    static final int STALL = 1 << 17;
    /** The channel has been unwritable for the maximum unwritable time. */
    static final int UNWRITABLE = 1 << 18;
    /** The channel's drain slot has come ({@link HeartbeatMonitor#drain}). */
    static final int DRAIN = 1 << 19;
    /** A close the veto held is due for its re-check. */
    static final int RECHECK = 1 << 20;
    /** All of the above. */
    static final int BITS = AGE | STALL | UNWRITABLE | DRAIN | RECHECK;
    /**
     * How soon after handing an action to a configuration with a close veto the worker looks for the
     * hold the veto may have asked for (see {@code HeartbeatHandler.lookForAHold}): an extension is
     * asked again at its end, give or take this.
     */
    static final long HOLD_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** How soon the worker looks again at a held close whose re-check it handed over. */
    static final long RECHECK_RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** How often {@code holdWhile} asks again while work is in flight. */
    static final long HOLD_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The default bound of a close veto's holds, per episode. */
    static final long DEFAULT_MAX_HOLD_NANOS = TimeUnit.MINUTES.toNanos(5);

    /**
     * How many times per write-stall timeout a channel is looked at: a stall is closed after at least
     * the timeout without a byte leaving and at most 1 + 1/LOOKS of it (plus the coalescing window).
     */
    static final int STALL_LOOKS = 4;
    /** How long the first half of a two-phase goodbye waits for the peer's answer: gRPC's 10 s (at most grace / 2). */
    static final long WARNING_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** How long a goodbye write may take when there is no grace, before the channel is closed anyway. */
    static final long GOODBYE_WRITE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The token of the ping that closes the first half of a two-phase goodbye ("heartbye"). */
    static final long GOODBYE_TOKEN = 0x6865617274627965L;

    final long maxAgeNanos;
    final double ageJitter;
    final JitterMode jitterMode;
    final long graceNanos;
    final long writeStallNanos;
    final long maxUnwritableNanos;
    /** Whose goodbye to write at max age and in a drain; null for none (the goodbye event only). */
    final Probe goodbye;
    /** Whether the max-age goodbye has two halves (a probe that has them, and a grace to use them in). */
    final boolean twoPhase;
    /** Whether the goodbye is the protocol's last word ({@link Probe#goodbyeEndsConversation}). */
    private final boolean lastWord;
    /** Asked before a close, or null. */
    final CloseVeto veto;
    /** The longest the veto may hold the closes of one episode. */
    final long maxHoldNanos;

    Guards(long maxAgeNanos, double ageJitter, JitterMode jitterMode, long graceNanos, long writeStallNanos,
            long maxUnwritableNanos, Probe goodbye, CloseVeto veto, long maxHoldNanos) {
        this.veto = veto;
        this.maxHoldNanos = maxHoldNanos;
        this.maxAgeNanos = maxAgeNanos;
        this.ageJitter = ageJitter;
        this.jitterMode = jitterMode;
        this.graceNanos = graceNanos;
        this.writeStallNanos = writeStallNanos;
        this.maxUnwritableNanos = maxUnwritableNanos;
        this.goodbye = goodbye;
        this.twoPhase = maxAgeNanos > 0 && graceNanos > 0 && goodbye != null && goodbye.hasTwoPhaseGoodbye();
        this.lastWord = goodbye != null && goodbye.goodbyeEndsConversation();
    }

    /**
     * Any thread: whether the channel has said a goodbye after which the peer answers nothing (see
     * {@link Probe#goodbyeEndsConversation}): the idle policy then neither judges nor acts, and the
     * grace's end closes the channel.
     */
    boolean conversationOver(GuardState g) {
        return lastWord && g.phase() == GuardState.SAID;
    }

    /** Whether any guard or a veto is set (a goodbye probe alone serves the drain, which needs no state). */
    boolean any() {
        return maxAgeNanos > 0 || writeStallNanos > 0 || maxUnwritableNanos > 0 || veto != null;
    }

    /** The soonest a guard can need a look after the channel starts: folded into the configuration's first check. */
    long firstLookNanos() {
        long first = Long.MAX_VALUE;
        if (maxAgeNanos > 0) {
            first = jitterMode.shortest(maxAgeNanos, ageJitter);
        }
        if (writeStallNanos > 0) {
            first = Math.min(first, stallLookNanos());
        }
        if (maxUnwritableNanos > 0) {
            first = Math.min(first, maxUnwritableNanos);
        }
        return first;
    }

    long stallLookNanos() {
        return Math.max(1, writeStallNanos / STALL_LOOKS);
    }

    /** How long the first half of a two-phase goodbye waits for its answer. */
    long warningWaitNanos() {
        return Math.min(WARNING_WAIT_NANOS, graceNanos / 2);
    }

    void describe(StringBuilder s) {
        if (maxAgeNanos > 0) {
            s.append(", maxAge=").append(Duration.ofNanos(maxAgeNanos));
            if (ageJitter > 0) {
                s.append(" jitter ").append(ageJitter).append(' ').append(jitterMode);
            }
            if (graceNanos > 0) {
                s.append(" grace ").append(Duration.ofNanos(graceNanos));
            }
        }
        if (writeStallNanos > 0) {
            s.append(", writeStall=").append(Duration.ofNanos(writeStallNanos));
        }
        if (maxUnwritableNanos > 0) {
            s.append(", maxUnwritable=").append(Duration.ofNanos(maxUnwritableNanos));
        }
        if (goodbye != null) {
            s.append(", goodbye=").append(goodbye.name());
        }
        if (veto != null) {
            s.append(", beforeClose (hold at most ").append(Duration.ofNanos(maxHoldNanos)).append(')');
        }
    }

    // ------------------------------------------------------------------ event loop

    /** Event loop: the guard state for a channel starting or switching to these guards at {@code now}. */
    GuardState sideFor(Object policySide, Object current, Channel channel, long now, long previousGraceNanos) {
        GuardState previous = current instanceof GuardState g ? g : null;
        long birth = previous != null ? previous.birth : now;
        double draw = previous != null ? previous.jitterDraw : ThreadLocalRandom.current().nextDouble();
        long age = maxAgeNanos == 0 ? 0 : jitterMode.apply(maxAgeNanos, ageJitter, draw);
        // A goodbye said under the previous guards keeps the end of the grace it announced (a terminal decision):
        // its start moves by the difference of the graces, so that start + this grace is that end.
        return new GuardState(policySide, birth, draw, birth + age, maxUnwritableNanos > 0, !channel.isWritable(), now,
                previous, previousGraceNanos - graceNanos);
    }

    /**
     * Event loop: the earliest a guard needs its first look under these guards, given the state
     * {@code g} carried over; {@code otherwise} if none needs one sooner.
     */
    long firstDeadline(GuardState g, long otherwise) {
        long first = otherwise;
        if (maxAgeNanos > 0 || g.phase() != GuardState.LIVING) { // a goodbye's grace outlives a switch without age
            int phase = g.phase();
            first = HandlerPolicy.earliest(first, phase == GuardState.LIVING ? g.ageDeadline
                    : g.goodbyeAt() + (phase == GuardState.WARNED ? warningWaitNanos() : graceNanos));
        }
        if (maxUnwritableNanos > 0 && g.unwritable()) {
            first = HandlerPolicy.earliest(first, g.unwritableSince() + maxUnwritableNanos);
        }
        return first;
    }

    // ------------------------------------------------------------------ worker

    /**
     * Worker: which guards are due at {@code now}; sets {@link GuardState#next} to when they next need
     * a look.
     */
    int judge(HeartbeatHandler h, GuardState g, Channel channel, long now) {
        int bits = 0;
        long next = now + HeartbeatConfig.MAX_TIMEOUT.toNanos();
        if (maxAgeNanos > 0 || g.phase() != GuardState.LIVING) { // a goodbye's grace outlives a switch without age
            int phase = g.phase();
            if (phase == GuardState.LIVING) {
                if (veto != null && g.held()) {
                    next = now + maxAgeNanos; // held: its re-check (below) brings the age back
                } else if (now - g.ageDeadline >= 0) {
                    bits |= AGE;
                    next = now + retryNanos(); // by then the event loop has begun the goodbye
                } else {
                    next = g.ageDeadline;
                }
            } else {
                long end = g.goodbyeAt() + graceNanos;
                long step = phase == GuardState.WARNED ? g.goodbyeAt() + warningWaitNanos() : end;
                if (now - step >= 0) {
                    bits |= AGE;
                    next = now + retryNanos();
                } else {
                    next = step;
                }
                next = HandlerPolicy.earliest(next, end - now > 0 ? end : next);
            }
        }
        if (writeStallNanos > 0) {
            long look = stallLookNanos();
            if (pendingBytes(channel) > 0) {
                bits |= STALL; // the event loop compares the outbound buffer with its last picture
            }
            next = HandlerPolicy.earliest(next, now + look);
        }
        if (maxUnwritableNanos > 0) {
            if (g.unwritable()) {
                long due = g.unwritableSince() + maxUnwritableNanos;
                if (now - due >= 0) {
                    if (!channel.isWritable()) {
                        bits |= UNWRITABLE;
                    }
                    next = HandlerPolicy.earliest(next, now + Math.max(1, maxUnwritableNanos / 4));
                } else {
                    next = HandlerPolicy.earliest(next, due);
                }
            } else {
                // A channel that turns unwritable after now is stamped by its event loop, and its
                // deadline (stamp + timeout) is after this next look: found exactly in time.
                next = HandlerPolicy.earliest(next, now + maxUnwritableNanos);
            }
        }
        if (veto != null && g.held()) {
            long until = g.heldUntil();
            if (now - until >= 0) {
                bits |= RECHECK;
                next = HandlerPolicy.earliest(next, now + RECHECK_RETRY_NANOS);
            } else {
                next = HandlerPolicy.earliest(next, until);
            }
        }
        g.next = next;
        return bits;
    }

    /** How soon the worker looks again after handing the event loop a goodbye step. */
    private long retryNanos() {
        return graceNanos == 0 ? GOODBYE_WRITE_WAIT_NANOS : twoPhase ? warningWaitNanos() : graceNanos;
    }

    /** Epoll's option class, and the pool name of its {@code TCP_NOTSENT_LOWAT}: looked up, no dependency on epoll. */
    private static final String EPOLL_OPTIONS = "io.netty.channel.epoll.EpollChannelOption";
    private static final String NOTSENT_LOWAT = EPOLL_OPTIONS + "#TCP_NOTSENT_LOWAT";
    /** Whether {@link #warnIfWritesHideProgress} has looked at an epoll channel in this JVM: the first one decides. */
    private static final java.util.concurrent.atomic.AtomicBoolean LOWAT_CHECKED =
            new java.util.concurrent.atomic.AtomicBoolean();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Guards.class);

    /**
     * Event loop, when a channel with a write stall becomes active: whether its transport has
     * {@code TCP_NOTSENT_LOWAT} (epoll) and the channel leaves it unset (0). Then Linux wakes the writer
     * only once about a third of an autotuned send buffer is free, and a peer that drains slowly can
     * leave the outbound buffer, which the stall guard watches, unmoved for a whole timeout (the load
     * test's slow readers were all closed so). Other transports: false.
     */
    static boolean writesHideProgress(Channel channel) {
        if (!isEpoll(channel)) {
            return false;
        }
        Object lowat;
        try {
            Class.forName(EPOLL_OPTIONS, true, channel.getClass().getClassLoader()); // registers its options
            if (!io.netty.channel.ChannelOption.exists(NOTSENT_LOWAT)) {
                return false; // a Netty without it
            }
            lowat = channel.config().getOption(io.netty.channel.ChannelOption.valueOf(NOTSENT_LOWAT));
        } catch (ClassNotFoundException | RuntimeException e) {
            return false; // a closed socket, or a transport that reads it otherwise: no advice
        }
        return lowat instanceof Long l && l == 0;
    }

    private static boolean isEpoll(Channel channel) {
        return channel.getClass().getName().startsWith("io.netty.channel.epoll.");
    }

    /**
     * Event loop, as a channel with a write stall becomes active: the first epoll channel in this JVM is
     * looked at ({@link #writesHideProgress}: a class lookup and a getsockopt), and a warning said if it
     * hides progress; later channels cost one volatile read. Channels of one server share its options.
     */
    void warnIfWritesHideProgress(Channel channel) {
        if (writeStallNanos > 0 && !LOWAT_CHECKED.get() && isEpoll(channel)
                && LOWAT_CHECKED.compareAndSet(false, true) && writesHideProgress(channel)) {
            LOG.warn("writeStall({}) on {} without TCP_NOTSENT_LOWAT: Linux wakes the writer only once a third of "
                    + "the send buffer is free, so a peer that drains slowly can be closed for WRITE_STALL; set "
                    + "EpollChannelOption.TCP_NOTSENT_LOWAT (16 KiB, say) on the accepted channels (unless "
                    + "net.ipv4.tcp_notsent_lowat is set). Said once.", Duration.ofNanos(writeStallNanos), channel);
        }
    }

    /** Any thread: the bytes waiting in the channel's outbound buffer (a volatile read), 0 once closed. */
    static long pendingBytes(Channel channel) {
        ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
        return buf == null ? 0 : buf.totalPendingWriteBytes();
    }

    // ------------------------------------------------------------------ event loop

    /**
     * Event loop: carries out the guard {@code bits} (not DRAIN, which the handler runs), each checked
     * again from the event loop's current view. The handler has checked that it may act.
     */
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, GuardState g, int bits, long now) {
        Channel channel = ctx.channel();
        int serial = h.serial();
        if ((bits & UNWRITABLE) != 0 && g.unwritable() && !channel.isWritable()
                && now - g.unwritableSince() >= maxUnwritableNanos) {
            if (h.announceClose(ctx, CloseReason.UNWRITABLE, now - g.unwritableSince())) {
                h.goodbyeOnce(ctx, CloseReason.UNWRITABLE); // not waited for: it queues behind unread bytes
                h.closeOnce(ctx);
            }
            return;
        }
        if ((bits & STALL) != 0) {
            ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
            if (buf != null && g.stalled(System.identityHashCode(buf.current()), buf.totalPendingWriteBytes(),
                    buf.currentProgress(), h.lastWriteOpaque(), now, writeStallNanos)) {
                if (h.announceClose(ctx, CloseReason.WRITE_STALL, g.stallNanos(now))) {
                    h.goodbyeOnce(ctx, CloseReason.WRITE_STALL); // not waited for: it queues behind unread bytes
                    h.closeOnce(ctx);
                }
                return;
            }
        }
        if ((bits & AGE) != 0 && h.canStillAct(serial)) {
            age(h, ctx, g, now);
        }
    }

    private void age(HeartbeatHandler h, ChannelHandlerContext ctx, GuardState g, long now) {
        int phase = g.phase();
        if (phase == GuardState.LIVING) {
            if (now - g.ageDeadline < 0) {
                return;
            }
            int serial = h.serial();
            int veto = h.consultVeto(ctx, CloseReason.MAX_AGE, now);
            if (veto == HeartbeatHandler.VETO_HELD || !h.canStillAct(serial)) {
                return; // held for a while; or the veto closed, removed or reconfigured
            }
            if (veto == HeartbeatHandler.VETO_CLOSE_NOW || h.goodbyeSaid()) {
                // Told its goodbye under an earlier configuration (whose grace a switch to one without
                // guards did not keep): not told again; the age closes it now.
                if (h.announceClose(ctx, CloseReason.MAX_AGE, now - g.birth, false)) {
                    h.closeOnce(ctx);
                }
                return;
            }
            ctx.fireUserEventTriggered(new HeartbeatGoodbyeEvent(CloseReason.MAX_AGE, Duration.ofNanos(graceNanos)));
            if (!h.canStillAct(serial)) {
                return; // the application closed, removed or reconfigured in reaction
            }
            if (twoPhase && warn(h, ctx, g, now)) {
                return;
            }
            h.goodbyeBegun();
            g.goodbyeBegan(GuardState.SAID, now);
            ChannelFuture written = sayGoodbye(h, ctx, goodbye, CloseReason.MAX_AGE);
            if (graceNanos == 0 && h.announceClose(ctx, CloseReason.MAX_AGE, now - g.birth, false)) {
                h.closeAfter(ctx, written); // (the veto was asked before the goodbye)
            }
            return;
        }
        long at = g.goodbyeAt();
        if (now - (at + graceNanos) >= 0) {
            if (h.announceClose(ctx, CloseReason.MAX_AGE, now - g.birth)) {
                h.closeOnce(ctx);
            }
        } else if (phase == GuardState.WARNED && now - (at + warningWaitNanos()) >= 0) {
            finish(h, ctx, g); // no answer to the goodbye's ping in time: the final half anyway
        }
    }

    /** Event loop: the first half of a two-phase goodbye; false if the probe has none to give now. */
    private boolean warn(HeartbeatHandler h, ChannelHandlerContext ctx, GuardState g, long now) {
        Object warning;
        Object ping;
        try {
            warning = goodbye.newGoodbyeWarning(ctx, CloseReason.MAX_AGE);
            if (warning == null) {
                return false;
            }
            ping = goodbye.newPing(ctx, GOODBYE_TOKEN);
        } catch (Throwable t) {
            h.monitor().actionFailed(h, t);
            return false;
        }
        h.goodbyeBegun();
        g.goodbyeBegan(GuardState.WARNED, now);
        ctx.write(warning);
        ctx.writeAndFlush(ping);
        return true;
    }

    /** Event loop: the final half of a two-phase goodbye. */
    private void finish(HeartbeatHandler h, ChannelHandlerContext ctx, GuardState g) {
        g.goodbyeSaid();
        sayGoodbye(h, ctx, goodbye, CloseReason.MAX_AGE);
    }

    /**
     * Event loop, on the read path while a two-phase goodbye waits: consumes the answer to the
     * goodbye's ping and sends the final half. The answer proves the peer has seen the first half, so
     * every stream it opened before is known, as gRPC's server reasons.
     *
     * @return whether {@code msg} was that answer (released here)
     */
    boolean onInbound(HeartbeatHandler h, ChannelHandlerContext ctx, GuardState g, Object msg) {
        if (g.phase() != GuardState.WARNED || !goodbye.isAnswer(msg) || goodbye.tokenOf(msg) != GOODBYE_TOKEN) {
            return false;
        }
        ReferenceCountUtil.release(msg);
        finish(h, ctx, g);
        return true;
    }

    /** Event loop: writes and flushes {@code probe}'s goodbye for {@code reason}; null if there is none. */
    static ChannelFuture sayGoodbye(HeartbeatHandler h, ChannelHandlerContext ctx, Probe probe, CloseReason reason) {
        if (probe == null) {
            return null;
        }
        Object bye;
        try {
            bye = probe.newGoodbye(ctx, reason);
        } catch (Throwable t) {
            h.monitor().actionFailed(h, t);
            return null;
        }
        return bye == null ? null : ctx.writeAndFlush(bye);
    }

    /**
     * Event loop: closes {@code ctx}'s channel once {@code written} (a goodbye's write) completes,
     * and at most {@link #GOODBYE_WRITE_WAIT_NANOS} later if the write hangs (a peer that reads
     * nothing). One scheduled task per close.
     */
    static void closeWhenWritten(ChannelHandlerContext ctx, ChannelFuture written) {
        written.addListener(f -> ctx.close());
        ctx.executor().schedule(() -> ctx.close(), GOODBYE_WRITE_WAIT_NANOS, TimeUnit.NANOSECONDS);
    }
}
