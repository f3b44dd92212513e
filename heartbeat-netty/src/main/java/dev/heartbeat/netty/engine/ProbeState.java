/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.Probe;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.ReferenceCountUtil;

/**
 * The state of a ping configuration whose probe recognises its answers (see {@link Probe}): the
 * token of the latest ping, how many pings await an answer, when the latest was answered, and the
 * channel's round-trip time (the {@link RttEstimator} this extends, for its two longs). Allocated
 * only for such configurations; the ping policy's own state (when a ping was decided and written,
 * the pings missed) is in the handler's slots for every ping configuration. The token and counts
 * are the event loop's alone; {@link #answeredAt} and the estimate are read by the worker and by
 * {@code HeartbeatMonitor.rttOf} (opaque). 48 bytes ({@code HandlerLayoutTest}).
 */
public final class ProbeState extends RttEstimator {

    private static final VarHandle ANSWERED_AT;
    private static final VarHandle ANSWERS;
    /** {@link #answers}: an answer of ours was ever seen (the sign bit). */
    private static final int EVER_ANSWERED = 1 << 31;
    /**
     * {@link #answers}: the latest ping's outcome (acked or missed) is counted, or it has none to
     * count (its write failed). Claimed once, by the event loop at its answer or by the worker.
     */
    private static final int OUTCOME_CLAIMED = 1 << 30;
    /** {@link #answers}: the pings written since the last answer of ours (saturating at this). */
    private static final int UNANSWERED = ~(EVER_ANSWERED | OUTCOME_CLAIMED);

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            ANSWERED_AT = lookup.findVarHandle(ProbeState.class, "answeredAt", long.class);
            ANSWERS = lookup.findVarHandle(ProbeState.class, "answers", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Event loop only: the latest ping's token; random at the first ping, then + 1 per ping. */
    private long latestToken;
    /**
     * The pings written since the last answer of ours ({@link #UNANSWERED}, saturating; the event
     * loop's alone), whether an answer of ours was ever seen ({@link #EVER_ANSWERED}, read by the
     * worker), and whether the latest ping's outcome is counted ({@link #OUTCOME_CLAIMED}, set by
     * either thread): one word, so that the state is 48 bytes, not 56. Changed by CAS (the event loop
     * at a ping, a failed write or an answer; the worker when it counts an outcome), read plain by
     * the event loop for its own bits and opaque by others.
     */
    @SuppressWarnings("unused") // written through ANSWERS
    private int answers;
    /** Ticker time of the latest answer to the latest ping; meaningful once {@link #EVER_ANSWERED} is set. Opaque. */
    @SuppressWarnings("unused") // accessed through ANSWERED_AT
    private long answeredAt;

    /** Event loop: a state whose first token is random ({@code random}'s if a test fixed it, else its own). */
    ProbeState(Randomness random) {
        latestToken = random == null ? ThreadLocalRandom.current().nextLong() : random.firstToken();
    }

    /** Event loop: the token of the ping about to be made. */
    long nextToken() {
        return latestToken + 1;
    }

    /** Event loop: the ping of {@link #nextToken()} is being written; its outcome is not counted yet. */
    public void wrote() {
        latestToken++;
        int a;
        do {
            a = (int) ANSWERS.getVolatile(this);
        } while (!ANSWERS.compareAndSet(this, a,
                ((a & UNANSWERED) != UNANSWERED ? a + 1 : a) & ~OUTCOME_CLAIMED));
    }

    /** Event loop: the latest ping's write failed: it has no outcome to count. */
    public void writeFailed() {
        // Tokens must stay consecutive over the pings counted, and for in-order probes a ping that never
        // left must not take the place of one that did: the failed one was the latest (one ping per timeout).
        latestToken--;
        int a;
        do {
            a = (int) ANSWERS.getVolatile(this);
        } while (!ANSWERS.compareAndSet(this, a, ((a & UNANSWERED) > 0 ? a - 1 : a) | OUTCOME_CLAIMED));
    }

    /**
     * Event loop or worker: claims the counting of the latest written ping's outcome; true for the
     * one caller that may count it (acked or missed), false if it is counted already.
     */
    boolean claimOutcome() {
        int a;
        do {
            a = (int) ANSWERS.getVolatile(this);
            if ((a & OUTCOME_CLAIMED) != 0) {
                return false;
            }
        } while (!ANSWERS.compareAndSet(this, a, a | OUTCOME_CLAIMED));
        return true;
    }

    /**
     * Event loop, for every inbound message: records an answer to one of our pings, and counts the
     * latest ping acked at its answer (unless counted already); returns true if the probe consumes it
     * (then released here, and not passed on).
     */
    public boolean onInbound(HeartbeatHandler h, BoundConfig bound, ChannelHandlerContext ctx, Object msg,
            long lastRead) {
        Probe probe = bound.config.probe;
        int unanswered = answers & UNANSWERED;
        int c = probe.classify(msg, latestToken, unanswered);
        if (c >= 0) {
            int ever = answers & EVER_ANSWERED;
            long rtt = -1;
            if (c == 0) { // the latest ping written
                long now = bound.ticker.nanoTime();
                if (h.pingOnWire()) { // and no newer one decided since: its write time is the stamp, an RTT sample
                    rtt = now - h.pingWritten();
                    addSample(rtt);
                    if (bound.config.tuner != null) { // before the answer is recorded: it looks at the previous one
                        AdaptiveInterval.answered(h, bound.config, this, ctx.channel(), lastRead);
                    }
                }
                // Recorded whether or not the worker has decided the next ping since (which takes the ping off
                // the wire): a re-ping decided before this answer and not yet written must find it answered.
                ANSWERED_AT.setOpaque(this, now); // before the flag: a reader that sees the flag sees the time
                ever = EVER_ANSWERED;
            }
            int a;
            do {
                a = (int) ANSWERS.getVolatile(this);
            } while (!ANSWERS.compareAndSet(this, a, ever | c | (a & OUTCOME_CLAIMED)));
            if (rtt >= 0 && claimOutcome()) {
                bound.monitor.pingAcked(bound, rtt); // at the answer: a close right after it loses no count
            }
            if (probe.consumes(c)) {
                bound.monitor.answerConsumed();
                ReferenceCountUtil.release(msg);
                return true;
            }
        } else if (c == Probe.NOT_AN_ANSWER && unanswered >= ApiAccess.api().misplacementPings() && !everAnswered()) {
            ApiAccess.api().reportMissingAnswers(probe, ctx.channel(), unanswered);
        }
        return false;
    }

    /** Worker or event loop: ticker time of the latest answer to the latest ping; see {@link #answeredSince}. */
    long answeredAt() {
        return (long) ANSWERED_AT.getOpaque(this);
    }

    /** Worker or event loop: whether the latest ping was answered at or after {@code time}. */
    public boolean answeredSince(long time) {
        return everAnswered() && (long) ANSWERED_AT.getOpaque(this) - time >= 0;
    }

    /** Any thread: whether an answer of ours was ever seen (opaque). */
    private boolean everAnswered() {
        return ((int) ANSWERS.getOpaque(this) & EVER_ANSWERED) != 0;
    }
}
