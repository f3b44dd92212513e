/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.CloseVeto;
import dev.heartbeat.netty.JitterMode;
import dev.heartbeat.netty.Probe;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import java.util.List;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * The lifecycle guards' settings of a configuration: maximum connection age (with jitter, grace and a
 * protocol goodbye), write stall, maximum unwritable time, and the close veto with its bound.
 * Immutable, held by the {@link Plan} that sets one (null otherwise); validated by the
 * builder. The guards' decisions are rules ({@link MaxAgeRule}, {@link WriteStallRule},
 * {@link UnwritableRule}) and the veto is part of the {@link CloseSequence}; their per-channel state is
 * a {@link GuardState} side object.
 */
public final class Guards {

    /** How often {@code holdWhile} asks again while work is in flight. */
    public static final long HOLD_RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The default bound of a close veto's holds, per episode. */
    public static final long DEFAULT_MAX_HOLD_NANOS = TimeUnit.MINUTES.toNanos(5);

    /**
     * How many times per write-stall timeout a channel is looked at: a stall is closed after at least
     * the timeout without a byte leaving and at most 1 + 1/LOOKS of it (plus the coalescing window).
     */
    static final int STALL_LOOKS = 4;
    /** How long the first half of a two-phase goodbye waits for the peer's answer: gRPC's 10 s (at most grace / 2). */
    static final long WARNING_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    /** The token of the ping that closes the first half of a two-phase goodbye ("heartbye"). */
    static final long GOODBYE_TOKEN = 0x6865617274627965L;

    public final long maxAgeNanos;
    public final double ageJitter;
    public final JitterMode jitterMode;
    public final long graceNanos;
    public final long writeStallNanos;
    public final long maxUnwritableNanos;
    /** Whose goodbye to write at max age and in a drain; null for none (the goodbye event only). */
    public final Probe goodbye;
    /** Whether the max-age goodbye has two halves (a probe that has them, and a grace to use them in). */
    final boolean twoPhase;
    /** Whether the goodbye is the protocol's last word ({@link Probe#goodbyeEndsConversation}). */
    private final boolean lastWord;
    /** Asked before a close, or null. */
    final CloseVeto veto;
    /** The longest the veto may hold the closes of one episode. */
    final long maxHoldNanos;

    /**
     * The guards of a channel that said its goodbye and was switched to a configuration without guard state: no
     * guard but the close at the end of the grace it was told (its {@link GuardState} counts that end from its
     * goodbye time, as a grace of 0).
     */
    static final Guards CARRIED = new Guards(0, 0, JitterMode.UP_ONLY, 0, 0, 0, null, null, DEFAULT_MAX_HOLD_NANOS);

    /** The guards {@code cfg}'s guard state follows: its own, or {@link #CARRIED} for a configuration without. */
    static Guards of(Plan cfg) {
        return cfg.hasGuardState() ? cfg.guards : CARRIED;
    }

    public Guards(long maxAgeNanos, double ageJitter, JitterMode jitterMode, long graceNanos, long writeStallNanos,
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

    /** Appends the rules these guards need to a configuration's list, in their order of performing. */
    void addRules(List<Rule> rules) {
        if (!any()) {
            return; // a goodbye probe alone serves the drain: no state, no rule
        }
        if (maxUnwritableNanos > 0) {
            rules.add(UnwritableRule.INSTANCE);
        }
        if (writeStallNanos > 0) {
            rules.add(WriteStallRule.INSTANCE);
        }
        rules.add(MaxAgeRule.INSTANCE); // also without a max age: a goodbye's grace outlives a reconfiguration
    }

    /** Whether any guard or a veto is set (a goodbye probe alone serves the drain, which needs no state). */
    boolean any() {
        return maxAgeNanos > 0 || writeStallNanos > 0 || maxUnwritableNanos > 0 || veto != null;
    }

    /** The soonest a guard can need a look after the channel starts: folded into the configuration's first check. */
    long firstLookNanos() {
        long first = Long.MAX_VALUE;
        if (maxAgeNanos > 0) {
            first = ApiAccess.api().shortestAge(jitterMode, maxAgeNanos, ageJitter);
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

    public void describe(StringBuilder s) {
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

    /**
     * Event loop: the guard state for a channel starting or switching to these guards at {@code now}; its
     * max-age jitter is drawn from {@code random} if a test fixed it (else null: ThreadLocalRandom).
     */
    GuardState sideFor(Object policySide, Object current, Channel channel, long now, long previousGraceNanos,
            Randomness random) {
        GuardState previous = current instanceof GuardState g ? g : null;
        long birth = previous != null ? previous.birth : now;
        double draw = previous != null ? previous.jitterDraw
                : random == null ? ThreadLocalRandom.current().nextDouble() : random.ageJitterDraw();
        long age = maxAgeNanos == 0 ? 0 : ApiAccess.api().jitteredAge(jitterMode, maxAgeNanos, ageJitter, draw);
        // A goodbye said under the previous guards keeps the end of the grace it announced (a terminal decision):
        // its start moves by the difference of the graces, so that start + this grace is that end.
        return new GuardState(policySide, birth, draw, birth + age, maxUnwritableNanos > 0, !channel.isWritable(), now,
                previous, previousGraceNanos - graceNanos);
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
    public static boolean writesHideProgress(Channel channel) {
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
}
