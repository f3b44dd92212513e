/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Plan;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;

/**
 * Whether a Heartbeat handler sits where its probes work: after the decoder that makes the probe's
 * answers ({@code Http2FrameCodec}, the WebSocket frame decoder and not behind a protocol handler that
 * drops Pongs, {@code MqttDecoder}). Each built-in probe judges its own place ({@link Probe#placement});
 * this class decides what to do about it, once per channel.
 *
 * <p>When: as the handler starts, and if it does not fit then, again one task on the handler's
 * executor later. A {@code ChannelInitializer} adds its handlers one by one to a channel that is
 * already registered, and an accepted channel is already active, so the handler starts before the
 * handlers added after it exist: a codec before it is there (and then it fits, with no task), one added
 * after it is not yet. The task runs once the initializer (and the registration that runs it) is done,
 * before any ping, which comes an interval later. A codec added later still (ALPN, an h2c upgrade)
 * cannot be judged then: that is a WARN.
 *
 * <table>
 * <caption>What a placement gets</caption>
 * <tr><th>Placement</th><th>Verdict</th><th>Why</th></tr>
 * <tr><td>the ping probe on the wrong side of its codec, with an ack mode that needs its answers
 *     ({@code MATCHED_ONLY}, {@code MATCHED_EXTENDS})</td><td>refused: an {@link IllegalStateException}
 *     down the pipeline from the handler (naming the handlers and the fix), and the channel closed</td>
 *     <td>it can never work: no answer ever reaches the handler, so every live peer that stays quiet
 *     would be closed for {@code PING_TIMEOUT}, later and with no word of why. Closing at once is the
 *     same outcome, told at the first connection</td></tr>
 * <tr><td>the same with {@code ANY_INBOUND}</td><td>WARN</td><td>any read still settles a ping (the
 *     peer's answer reaches the handler as bytes), so live peers stay open; the answers are not
 *     recognised (no RTT, not kept from the application)</td></tr>
 * <tr><td>the goodbye probe on the wrong side of its codec</td><td>WARN</td><td>only the goodbye is
 *     at stake, not the channel's liveness</td></tr>
 * <tr><td>no codec to judge by (not added yet, or another HTTP/2 handler)</td><td>WARN</td><td>the
 *     pipeline cannot be judged</td></tr>
 * </table>
 * A WARN is logged once per probe, however many channels find it; custom probes are not judged (the
 * WARN about missing answers after three pings is their check).
 *
 * <h2>For probe writers</h2>
 * The public part of this class is what a probe's {@link Probe#placement} override works with: the
 * {@link Finding} it returns, and three helpers that read a pipeline ({@link #first}, {@link #self},
 * {@link #subject}). The built-in probes of {@code dev.heartbeat.netty.probe} use exactly these. What the
 * handler does about a finding (the check above) stays inside this package: it reads the configuration.
 * Everything here is immutable, and the helpers only read the pipeline.
 */
public final class ProbePlacement {

    /* Why this class is in dev.heartbeat.netty and not in .probe: the check is the handler's (it runs as
     * the handler starts, reads the configuration's ping and goodbye probes and its ack mode, and closes
     * the channel), and Probe#placement, in this package, returns a Finding: in .probe, the base package
     * would depend on the probe package and the configuration's internals would have to be public. */

    /** What a probe finds about the place of the handler at a context. */
    public enum Verdict {
        /** The handler is where the probe works, or the probe cannot tell (custom probes). */
        FITS,
        /** The handler is on the wrong side of the probe's codec: the answers never reach it. */
        WRONG,
        /** The pipeline has nothing to judge by. */
        UNKNOWN
    }

    /**
     * A verdict and, unless it FITS, the sentence that says what is wrong and the fix.
     *
     * @param verdict where the handler is, for the probe
     * @param problem what is wrong and the fix, naming the handlers (begin it with {@link #subject}); null
     *     when it FITS
     */
    public record Finding(Verdict verdict, String problem) {
        /** The handler is where the probe works, or the probe cannot tell. */
        public static final Finding FITS = new Finding(Verdict.FITS, null);

        /** Checks that a finding that does not fit says why. */
        public Finding {
            Objects.requireNonNull(verdict, "verdict");
            if (verdict != Verdict.FITS) {
                Objects.requireNonNull(problem, "problem");
            }
        }

        /** The handler is on the wrong side of the probe's codec; {@code problem} says so and the fix. */
        public static Finding wrong(String problem) {
            return new Finding(Verdict.WRONG, problem);
        }

        /** The pipeline has nothing to judge by; {@code problem} says so and where the handler goes. */
        public static Finding unknown(String problem) {
            return new Finding(Verdict.UNKNOWN, problem);
        }
    }

    /** What the check did: for tests and callers that want to know. */
    enum Outcome {
        SILENT, WARNED, REFUSED
    }

    private ProbePlacement() {
    }

    /**
     * Event loop, when the handler at {@code ctx} starts under {@code cfg}: if every probe of {@code cfg}
     * already fits where the handler is (its codec is before it, or the probe cannot tell), nothing more;
     * otherwise the check runs one task later (see the class comment), once the pipeline is complete. A
     * configuration without a probe costs nothing, one that fits a walk of the pipeline and no task.
     */
    static void checkSoon(ChannelHandlerContext ctx, Plan cfg) {
        Probe ping = cfg.matchesAnswers ? cfg.probe : null;
        Probe bye = cfg.owner.goodbye().orElse(null);
        if (!fits(ping, ctx) || (bye != ping && !fits(bye, ctx))) {
            ctx.executor().execute(() -> check(ctx, cfg));
        }
    }

    /** Whether {@code probe} is null or fits where the handler at {@code ctx} is, now. */
    private static boolean fits(Probe probe, ChannelHandlerContext ctx) {
        return probe == null || probe.placement(ctx).verdict() == Verdict.FITS;
    }

    /**
     * Checks now: refuses, warns or says nothing (see the class comment). Nothing for a removed
     * handler or a closed channel.
     */
    static Outcome check(ChannelHandlerContext ctx, Plan cfg) {
        if (ctx.isRemoved() || !ctx.channel().isOpen()) {
            return Outcome.SILENT;
        }
        Outcome outcome = Outcome.SILENT;
        Probe ping = cfg.matchesAnswers ? cfg.probe : null;
        if (ping != null) {
            Finding f = ping.placement(ctx);
            if (f.verdict() == Verdict.WRONG && cfg.ackMode.needsMatching()) {
                ctx.fireExceptionCaught(new IllegalStateException(f.problem() + " (ackMode " + cfg.ackMode
                        + " needs the answers: without them every quiet peer would be closed for PING_TIMEOUT; "
                        + "the channel is closed)"));
                ctx.channel().close();
                return Outcome.REFUSED;
            }
            if (f.verdict() == Verdict.WRONG) {
                ping.warnPlacement(ctx.channel(), f.problem() + " (with ackMode ANY_INBOUND any read still settles "
                        + "a ping, but its answers are not recognised: no RTT)");
                outcome = Outcome.WARNED;
            } else if (f.verdict() == Verdict.UNKNOWN) {
                ping.warnPlacement(ctx.channel(), f.problem());
                outcome = Outcome.WARNED;
            }
        }
        Probe bye = cfg.owner.goodbye().orElse(null);
        if (bye != null && bye != ping) {
            Finding f = bye.placement(ctx);
            if (f.verdict() != Verdict.FITS) {
                bye.warnPlacement(ctx.channel(), f.problem() + " (for its goodbye)");
                outcome = Outcome.WARNED;
            }
        }
        return outcome;
    }

    // ---- for the probes' placement methods

    /**
     * A handler's place in a pipeline: its index from the head, its name and the handler.
     *
     * @param index its index from the pipeline's head (0 for the first handler), -1 if it is not there
     * @param name its name in the pipeline
     * @param handler the handler
     */
    public record Place(int index, String name, ChannelHandler handler) {
        /** How messages call it: its name and class, as {@code 'name' (SimpleClassName)}. */
        public String quoted() {
            return "'" + name + "' (" + handler.getClass().getSimpleName() + ")";
        }
    }

    /** The first handler of {@code pipeline} (from the head) that {@code test} accepts, or null. */
    public static Place first(ChannelPipeline pipeline, Predicate<ChannelHandler> test) {
        int i = 0;
        for (Map.Entry<String, ChannelHandler> e : pipeline) {
            if (test.test(e.getValue())) {
                return new Place(i, e.getKey(), e.getValue());
            }
            i++;
        }
        return null;
    }

    /** The place of the handler at {@code ctx}: index -1 if it is no longer in the pipeline. */
    public static Place self(ChannelHandlerContext ctx) {
        ChannelHandler self = ctx.handler();
        Place p = first(ctx.pipeline(), h -> h == self);
        return p != null ? p : new Place(-1, ctx.name(), self);
    }

    /** "Heartbeat's handler 'name' (probe name) on channel": how every problem begins. */
    public static String subject(ChannelHandlerContext ctx, Probe probe) {
        return "Heartbeat's handler '" + ctx.name() + "' (probe " + probe.name() + ") on " + ctx.channel();
    }
}
