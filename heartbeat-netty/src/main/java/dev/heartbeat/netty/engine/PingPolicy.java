/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatConfig;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.DefaultChannelPromise;
import io.netty.util.concurrent.Future;

/**
 * The ping policy ({@link HeartbeatConfig#ping(Probe)}): after an interval of silence (the peer's, or
 * ours with {@code whenWriterIdle}) the worker decides a ping and the event loop writes it; the
 * worker then waits for the answer the {@link AckMode} asks for, and after {@code maxMissedPings}
 * pings in a row went unanswered for their timeout, the event loop closes the channel.
 *
 * <p>A miss is counted only for a ping the event loop has really written (see
 * {@link HeartbeatHandler#pingOnWire}), or tried to write and could not, and only once the timeout
 * has passed since that write or attempt: a lagging event loop delays the verdict instead of closing
 * a peer that was never pinged. Fail closed: a ping whose write failed or whose probe threw (a probe
 * placed where its frame type is refused) counts as missed when the peer stays silent for its timeout
 * after the attempt, so a silent peer is closed ({@link CloseReason#PING_TIMEOUT}) within the same
 * bound, interval + maxMissedPings x timeout, whether or not its pings could be written; a read since
 * the failed ping's decision proves the peer alive (in every ack mode) and forgives the misses. Such
 * a ping counts as failed in the metrics, not as missed.
 *
 * <p>While a ping waits for its answer the worker looks at least every interval, so a prompt answer
 * keeps the cadence at one ping per interval of silence even when the timeout is longer than the
 * interval.
 *
 * <p>With {@code closeWhenReaderIdle}, a liveness check runs beside the pings: the channel is closed
 * ({@link CloseReason#READER_IDLE}) once nothing was read for that long, judged from the read stamp
 * alone, so it needs no state of its own, and every re-arm is capped at its deadline.
 *
 * <p>Metrics: each ping written counts once at most, as acked or as missed, whichever comes first.
 * Acked: at its matched answer, on the event loop, so a channel closed right after the answer keeps
 * the count; or, answered by other traffic ({@link AckMode#ANY_INBOUND}), when the worker next finds
 * it settled (within the timeout; a channel closed before that does not count it). Missed: when its
 * timeout passes (then it is not acked later, even if the close it led to is vetoed and the answer
 * comes after all). A ping the worker finds settled before the event loop wrote it counts as
 * neither, as it was never sent. With a probe that matches answers, the {@link ProbeState} holds
 * the once-only claim both threads take; without one, only the worker counts.
 *
 * <p>Stateless. Per channel: the handler's stamps, its judgement word (flags and the pings missed in
 * a row), its policy slots (when the pending ping was decided and written) and on-wire flag, and a
 * {@link ProbeState} if the probe matches answers.
 */
public final class PingPolicy extends HandlerPolicy {

    public static final PingPolicy INSTANCE = new PingPolicy();

    // Action bits, worker -> event loop.
    /** Ping: the channel has been silent for the interval. */
    static final int SEND_PING = 1;
    /** Ping again after a missed answer: due because of the miss, not because of idleness. */
    static final int RESEND_PING = 1 << 1;
    /** Close: too many pings in a row went unanswered. */
    static final int PING_TIMEOUT = 1 << 2;
    /** Close: nothing was read for {@code closeWhenReaderIdle}. */
    static final int READER_IDLE_CLOSE = 1 << 3;

    /** Pings: their answers are timed from when they are written, so they may wait for a lazy hand-off. */
    private static final int DEFERRABLE = SEND_PING | RESEND_PING;

    // Judgement flags (worker only).
    /** A ping was decided and its answer is awaited. */
    private static final int AWAITING_ANSWER = 1;
    /**
     * The pending ping is counted as missed already (its close was decided, and is still awaited or
     * was vetoed): it counts as neither acked nor missed again. Cleared when a ping is decided.
     */
    private static final int OUTCOME_COUNTED = 1 << 1;
    /**
     * The pings missed in a row, in the rest of the policy's 16 bits of the judgement word: 14 bits
     * hold up to 16,383, above {@link HeartbeatConfig#MAX_MISSED_PINGS}.
     */
    private static final int MISSED_SHIFT = 2;
    private static final int MISSED_BITS = 0xFFFF & -(1 << MISSED_SHIFT);

    private PingPolicy() {
    }

    @Override
    public HeartbeatConfig.Policy kind() {
        return HeartbeatConfig.Policy.PING;
    }

    @Override
    int deferrableBits() {
        return DEFERRABLE;
    }

    @Override
    boolean tracksReads(Plan cfg) {
        return true; // reads answer pings in every ack mode, and drive them unless whenWriterIdle
    }

    @Override
    boolean tracksWrites(Plan cfg) {
        return cfg.pingWhenWriterIdle;
    }

    @Override
    public void describe(Plan cfg, StringBuilder s) {
        s.append(", interval=").append(cfg.owner.pingInterval()).append(", timeout=").append(cfg.owner.pingTimeout())
                .append(", maxMissedPings=").append(cfg.maxMissedPings).append(", jitter=").append(cfg.jitter)
                .append(cfg.pingWhenWriterIdle ? ", whenWriterIdle" : ", whenReaderIdle")
                .append(", probe=").append(cfg.probe).append(", ackMode=").append(cfg.ackMode);
        if (cfg.readerCloseNanos > 0) {
            s.append(", closeWhenReaderIdle=").append(cfg.owner.closeWhenReaderIdle());
        }
        if (cfg.adaptiveMaxNanos > 0) {
            s.append(", adaptiveTimeout=[").append(cfg.owner.adaptiveTimeoutMin()).append(", ")
                    .append(cfg.owner.adaptiveTimeoutMax()).append(']');
        }
    }

    /**
     * A {@link ProbeState} if the probe matches answers (an existing one is kept); else whatever the
     * handler has: the ping state itself is in the handler's slots.
     */
    @Override
    Object sideFor(Plan cfg, Object current, Channel channel, long now, Randomness random) {
        return !cfg.matchesAnswers || current instanceof ProbeState ? current : new ProbeState(random);
    }

    // ------------------------------------------------------------------ worker

    @Override
    void start(HeartbeatHandler h, Plan cfg, long start) {
        clearMissedPings(h);
        h.pingSlotsFrom(start); // no stale stamp of another policy reads as a ping's failed write (seed 209)
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        Plan cfg = bound.config;
        long read = h.lastReadOpaque();
        boolean busy = h.readingOpaque();
        h.awaitAnswer(true); // the finer coalescing window, until the interval returns clear it
        ProbeState probe = cfg.matchesAnswers ? h.probeState() : null;
        if (cfg.matchesAnswers && probe == null) {
            // A reconfiguration away from this configuration is under way (see probeState): its request decides.
            return verdict(h, now + Math.min(cfg.pingTimeoutNanos, cfg.pingIntervalNanos), 0);
        }
        // The reader-idle close (closeWhenReaderIdle), when it is on: due a timeout after the last read.
        long silentSince = busy ? now : read;
        if (cfg.readerCloseNanos > 0 && now - silentSince >= cfg.readerCloseNanos) {
            // Look again if it is vetoed; while the veto holds a close, every interval, as below, so that traffic
            // during the hold starts the next interval on time (seed 20331: pinged 353 ms after an answer, at 74).
            long again = closeHeld(h) ? Math.min(cfg.pingTimeoutNanos, cfg.pingIntervalNanos) : cfg.readerCloseNanos;
            return verdict(h, now + again, READER_IDLE_CLOSE);
        }
        long timeout = answerTimeoutNanos(cfg, probe);
        long poll = Math.min(timeout, cfg.pingIntervalNanos);
        if ((h.judgement() & AWAITING_ANSWER) != 0) {
            if (answered(cfg, probe, busy, read, h.pingDecidedAt())) {
                // Answered (a read stamped at the very time of the decision counts: it may have come
                // after it, and the peer was alive at that time either way): no missed pings.
                if (h.pingOnWire() && (h.judgement() & OUTCOME_COUNTED) == 0
                        && (probe == null || probe.claimOutcome())) { // else counted at its answer
                    bound.monitor.pingAcked(bound, rttNanos(h, probe));
                }
                h.judgement(h.judgement() & ~AWAITING_ANSWER);
                clearMissedPings(h);
            } else if (!h.pingOnWire() && attemptFailed(h, now)) {
                // Fail closed: a peer silent since is judged as if the ping went unanswered; one that
                // talked since is alive (under the matched modes too: no ping of ours reached it).
                if (busy || read - h.pingDecidedAt() >= 0) {
                    h.judgement(h.judgement() & ~AWAITING_ANSWER);
                    clearMissedPings(h);
                } else {
                    long due = h.pingWritten() + timeout;
                    if (now - due < 0) {
                        return verdict(h, cfg, silentSince, earliest(due, now + poll), 0);
                    }
                    return missed(h, cfg, silentSince, now, poll);
                }
            } else if (!h.pingOnWire()) {
                // Not written yet (the event loop lags), or skipped: wait, then decide afresh.
                long giveUp = h.pingDecidedAt() + cfg.pingTimeoutNanos;
                if (now - giveUp < 0) {
                    return verdict(h, cfg, silentSince, earliest(giveUp, now + poll), 0);
                }
                h.judgement(h.judgement() & ~AWAITING_ANSWER);
            } else {
                if (cfg.ackMode == AckMode.MATCHED_EXTENDS && busy) { // traffic pushes the deadline out (Envoy)
                    return verdict(h, cfg, silentSince, now + poll, 0);
                }
                long answerDue = answerDue(cfg, timeout, h.pingWritten(), read);
                if (now - answerDue < 0) {
                    return verdict(h, cfg, silentSince, earliest(answerDue, now + poll), 0);
                }
                if ((h.judgement() & OUTCOME_COUNTED) == 0) {
                    if (probe == null || probe.claimOutcome()) { // else answered just now, and counted acked
                        bound.monitor.pingMissed(bound);
                    }
                    h.judgement(h.judgement() | OUTCOME_COUNTED);
                } else if (closeHeld(h)) {
                    // Its close is held by the veto, whose re-check performs it: meanwhile look for an answer every
                    // interval, as while the ping waited. The hold lets the channel's other checks go on
                    // (CloseDecision#extend), and an answer during it starts the next interval of silence, whose ping
                    // is not to wait for the hold's end (seed 9169: a hold of 115 ms, an interval of 31 ms, a
                    // timeout of 186 ms: pinged 278 ms after the answer). No close handed over again either.
                    return verdict(h, cfg, silentSince, now + poll, 0);
                }
                return missed(h, cfg, silentSince, now, poll);
            }
        }
        if (probe != null && (h.judgement() & MISSED_BITS) != 0 && probe.answeredSince(h.pingDecidedAt())) {
            // The latest ping written was answered after the re-ping decided for its miss, which was given up
            // unwritten: the answer settles it as it would have while it waited (see ProbeState.onInbound).
            clearMissedPings(h);
        } else if (!cfg.ackMode.needsMatching() && (h.judgement() & MISSED_BITS) != 0
                && (busy || read - h.pingDecidedAt() >= 0)) {
            // Any inbound answers: a read since the latest ping settles the streak. (Its close was decided and
            // then dropped by the event loop, which saw the read, while the hand-off waited for the budget.)
            clearMissedPings(h);
        }
        long base = cfg.pingWhenWriterIdle ? h.lastWriteOpaque() : read;
        if (busy && !cfg.pingWhenWriterIdle) {
            h.awaitAnswer(false);
            return verdict(h, cfg, silentSince, now + cfg.pingIntervalNanos, 0);
        }
        long due = base + cfg.pingIntervalNanos + jitterNanos(h, bound);
        if (now - due < 0) {
            h.awaitAnswer(false);
            return verdict(h, cfg, silentSince, due, 0);
        }
        h.judgement(h.judgement() | AWAITING_ANSWER);
        return decide(h, cfg, silentSince, SEND_PING, now, poll);
    }

    /** Worker: no pings missed in a row (a configuration starts, or a ping was answered). */
    private static void clearMissedPings(HeartbeatHandler h) {
        h.judgement(h.judgement() & ~MISSED_BITS);
    }

    /** Worker: counts a missed ping; returns how many are missed in a row now (saturating at the largest setting). */
    private static int countMissedPing(HeartbeatHandler h) {
        int word = h.judgement();
        int missed = (word & MISSED_BITS) >>> MISSED_SHIFT;
        if (missed < HeartbeatConfig.MAX_MISSED_PINGS) {
            missed++;
            h.judgement((word & ~MISSED_BITS) | missed << MISSED_SHIFT);
        }
        return missed;
    }

    /** Worker: the pending ping is missed: close after {@code maxMissedPings} in a row, else ping again. */
    private static int missed(HeartbeatHandler h, Plan cfg, long silentSince, long now, long poll) {
        if (countMissedPing(h) >= cfg.maxMissedPings) {
            // The close is on its way; look again if it is vetoed.
            return verdict(h, cfg, silentSince, now + cfg.pingTimeoutNanos, PING_TIMEOUT);
        }
        return decide(h, cfg, silentSince, RESEND_PING, now, poll);
    }

    /** Worker: whether the veto holds a close of this channel until its re-check (opaque). */
    private static boolean closeHeld(HeartbeatHandler h) {
        GuardState g = h.guardState();
        return g != null && g.held();
    }

    /**
     * Worker, while the decided ping is not on the wire: whether the event loop tried to write it and
     * could not (the write failed, or the probe threw): then it stamped the attempt, at or after the
     * decision, and cleared the on-wire flag. A ping not written yet still has an older stamp (a
     * stamp from another policy's use of the slot, in the future, is no attempt either).
     */
    private static boolean attemptFailed(HeartbeatHandler h, long now) {
        long attempted = h.pingWritten();
        return attempted - h.pingDecidedAt() >= 0 && now - attempted >= 0;
    }

    /** Worker: decides a ping ({@code kind} is {@link #SEND_PING} or {@link #RESEND_PING}) at {@code now}. */
    private static int decide(HeartbeatHandler h, Plan cfg, long silentSince, int kind, long now,
            long poll) {
        h.judgement(h.judgement() & ~OUTCOME_COUNTED);
        h.pingDecided(now);
        return verdict(h, cfg, silentSince, now + poll, kind);
    }

    /**
     * Worker: ends a judgement of {@code cfg}: the entry is checked again at {@code next}, or when the
     * reader-idle close comes due ({@code closeWhenReaderIdle} after {@code silentSince}) if that is on
     * and earlier.
     */
    private static int verdict(HeartbeatHandler h, Plan cfg, long silentSince, long next, int bits) {
        return HandlerPolicy.verdict(h,
                cfg.readerCloseNanos > 0 ? earliest(next, silentSince + cfg.readerCloseNanos) : next, bits);
    }

    /**
     * Worker or event loop: whether the ping decided at {@code sentAt} is settled. Any read since
     * settles it under {@link AckMode#ANY_INBOUND}; only the probe's answer (to the latest ping, read
     * at or after the decision) under the matched modes.
     */
    private static boolean answered(Plan cfg, ProbeState probe, boolean busy, long read, long sentAt) {
        if (cfg.ackMode == AckMode.ANY_INBOUND) {
            return busy || read - sentAt >= 0;
        }
        return probe != null && probe.answeredSince(sentAt);
    }

    /**
     * Worker or event loop: when the ping written at {@code written} is missed, unless answered: a
     * timeout after its write, or under {@link AckMode#MATCHED_EXTENDS} a timeout after the latest
     * read since its write ({@code read}).
     */
    private static long answerDue(Plan cfg, long timeout, long written, long read) {
        return cfg.ackMode == AckMode.MATCHED_EXTENDS && read - written > 0 ? read + timeout : written + timeout;
    }

    /**
     * Event loop: whether the written ping, judged missed by the worker, is no longer missed now: it
     * was answered, or under {@link AckMode#MATCHED_EXTENDS} traffic since pushed its deadline out.
     * The worker's rule, applied to the current stamps.
     */
    private static boolean notMissed(Plan cfg, ProbeState probe, boolean busy, long read, long written,
            long now) {
        if (answered(cfg, probe, busy, read, written)) {
            return true;
        }
        return cfg.ackMode == AckMode.MATCHED_EXTENDS
                && (busy || now - answerDue(cfg, answerTimeoutNanos(cfg, probe), written, read) < 0);
    }

    /**
     * Worker: how long the written ping waits for its answer: the configured timeout, or with
     * {@code adaptiveTimeout} and a round-trip sample, {@code clamp(SRTT + 4 * RTTVAR, min, max)}.
     */
    static long answerTimeoutNanos(Plan cfg, ProbeState probe) {
        if (cfg.adaptiveMaxNanos == 0 || probe == null) {
            return cfg.pingTimeoutNanos;
        }
        long srtt = probe.smoothedNanos();
        return srtt == 0 ? cfg.pingTimeoutNanos
                : RttEstimator.timeoutNanos(srtt, probe.variationNanos(), cfg.adaptiveMinNanos, cfg.adaptiveMaxNanos);
    }

    /**
     * Worker: the round-trip time of the pending ping, which {@link #answered} found settled: from its
     * write to its matched answer if the probe matched one, else -1 (an any-inbound answer).
     */
    private static long rttNanos(HeartbeatHandler h, ProbeState probe) {
        return probe != null && probe.answeredSince(h.pingDecidedAt()) ? probe.answeredAt() - h.pingWritten() : -1;
    }

    /**
     * A fixed per-channel share of the jitter, from the identity hash (or the number a test's
     * {@link Randomness} fixes for the handler): no state, no shared random.
     */
    private static long jitterNanos(HeartbeatHandler h, BoundConfig bound) {
        Plan cfg = bound.config;
        if (cfg.jitter == 0) {
            return 0;
        }
        Randomness random = bound.monitor.randomness;
        int hash = (random == null ? System.identityHashCode(h) : random.channelHash(h)) * 0x9E3779B9; // golden ratio
        double unit = (hash >>> 8) / (double) (1 << 24);
        return (long) (cfg.pingIntervalNanos * cfg.jitter * unit);
    }

    // ------------------------------------------------------------------ event loop

    /** Writes the ping, or closes, that {@code bits} ask for, unless the current stamps say it is no longer due. */
    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        // Present if the probe matches answers: this thread made it before it published cfg.
        ProbeState probe = cfg.matchesAnswers ? h.probeState() : null;
        long read = h.lastReadOpaque();
        boolean busy = h.readingOpaque();
        if ((bits & READER_IDLE_CLOSE) != 0) {
            if (!busy && now - read >= cfg.readerCloseNanos) {
                CloseSequence.close(h, ctx, CloseReason.READER_IDLE, now - read);
                return;
            }
            // Else read since the verdict: the worker sees it and waits. A ping handed over with it still goes
            // out: the re-check of a held close joins the held bits to the ping the worker decided during the
            // hold, and without that ping the next close would be the peer's first chance lost (seed 1703).
        }
        long written = h.pingWritten();
        if ((bits & PING_TIMEOUT) != 0) {
            if (!(h.pingOnWire() ? notMissed(cfg, probe, busy, read, written, now) : busy || read - written >= 0)) {
                if (CloseSequence.announce(h, ctx, CloseReason.PING_TIMEOUT, now - read, true)) {
                    if (cfg.tuner != null) {
                        AdaptiveInterval.lost(h, cfg, ctx.channel()); // died while idle, if the ping probed that
                    }
                    CloseSequence.closeWithGoodbye(h, ctx, CloseReason.PING_TIMEOUT);
                }
                return;
            }
            // Else answered after all, just now, or (MATCHED_EXTENDS) traffic moved its deadline; or the last ping
            // could not be written (then written is the attempt) and the peer talked since. A ping handed over with
            // it still goes out, as with the reader-idle close above: the re-check of a held close joins the held
            // bits to the ping the worker decided after the answer it found during the hold (seed 9435: dropped,
            // the next ping came a ping timeout later, when the worker gave the unwritten one up).
        }
        if ((bits & RESEND_PING) != 0) {
            if (notMissed(cfg, probe, busy, read, written, now)) {
                // The previous ping was answered just now, or (MATCHED_EXTENDS) traffic moved its deadline:
                // the worker sees it and waits; a re-ping now would be early.
                return;
            }
        } else if ((bits & SEND_PING) != 0) {
            long base = cfg.pingWhenWriterIdle ? h.lastWriteOpaque() : read;
            if (busy || now - base < cfg.pingIntervalNanos) {
                return; // activity since the verdict: no ping needed; the worker sees it and waits
            }
        } else {
            return;
        }
        GuardState g = h.guardState();
        if (g != null) {
            // A ping goes out (or is tried) while a ping-timeout close is held: the worker decides none while it
            // holds one, so the streak that close was for was answered, and the held close is dropped here (seed
            // 44: performed at its re-check against the new ping; seed 419: a re-ping for the new ping's miss),
            // and its episode ends with it unless another close is held. The new ping's own close, if it comes,
            // is asked afresh, or joins the other close's hold, and is performed at its re-check: not dropped as
            // the old one's (seed 10025: closed a whole maxCloseHold after the hold it joined; seed 11275: a
            // hold it joined only to be dropped, asked after that hold's end). Only a held ping timeout: a ping
            // written during the hold of another close (a max age) is the streak's own, and a ping-timeout close
            // decided later joins that hold (seed 11427: dropped at the re-check, then asked afresh once the max
            // age's goodbye ended the episode, and held a second maxCloseHold).
            g.release(PING_TIMEOUT);
        }
        Object ping;
        try {
            ping = cfg.probe.newPing(ctx, probe != null ? probe.nextToken() : 0);
        } catch (Throwable t) {
            h.pingWrote(now); // the attempt's time, for the worker's fail-closed judgement,
            h.pingOffWire(); // and no ping on the wire
            h.bound().monitor.pingFailed(h, t);
            ctx.fireExceptionCaught(t);
            return;
        }
        h.pingWrote(now);
        if (probe != null) {
            probe.wrote();
        }
        // From the tail by default, so encoders (and the handler's write stamp) see the ping (Probe.writePing).
        if (ApiAccess.api().writesFromTail(cfg.probe)) {
            // The write's promise carries the handler to one shared listener: nothing allocated beyond the
            // promise that writeAndFlush(ping) would have made anyway.
            ctx.channel().writeAndFlush(ping, new PingWrite(ctx.channel(), h)).addListener(PING_WRITTEN);
        } else {
            ApiAccess.api().writePing(cfg.probe, ctx, ping).addListener(f -> writeDone(h, f));
        }
    }

    /** The listener of every {@link PingWrite}: stateless, shared. */
    private static final ChannelFutureListener PING_WRITTEN = f -> writeDone(((PingWrite) f).handler, f);

    /**
     * The promise of a ping written from the tail (see {@link Probe#writesFromTail}), with the handler
     * whose ping it is, for {@link #PING_WRITTEN}: one object per ping where a promise and a capturing
     * listener were two. The field takes what would be the promise's alignment padding (48 B either way
     * with compressed references).
     */
    static final class PingWrite extends DefaultChannelPromise {

        /** The handler that wrote the ping. */
        final HeartbeatHandler handler;

        PingWrite(Channel channel, HeartbeatHandler handler) {
            super(channel);
            this.handler = handler;
        }
    }

    /**
     * Event loop: a ping's write completed. A failed ping is counted as failed, not sent; the worker
     * judges a peer silent since the attempt as if the ping went unanswered (fail closed).
     */
    private static void writeDone(HeartbeatHandler h, Future<? super Void> future) {
        BoundConfig bound = h.bound();
        if (future.isSuccess()) {
            bound.monitor.pingSent(bound);
        } else {
            h.pingOffWire();
            ProbeState probe = bound.matchesAnswers ? h.probeState() : null;
            if (probe != null) { // else a reconfiguration dropped it, and the ping with it
                probe.writeFailed();
            }
            bound.monitor.pingFailed(h, future.cause());
        }
    }
}
