/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.ApiAccess;
import dev.heartbeat.netty.engine.ClosePolicy;
import dev.heartbeat.netty.engine.EventPolicy;
import dev.heartbeat.netty.engine.Guards;
import dev.heartbeat.netty.engine.HandlerPolicy;
import dev.heartbeat.netty.engine.PingPolicy;
import dev.heartbeat.netty.engine.Plan;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.TimingWheel;

// Over 500 lines (listed in checkstyle.xml): the public builder, each setting with its validation and Javadoc; what
// the engine runs is the Plan this configuration makes (settings in nanoseconds, compiled rules).
/**
 * What a Heartbeat handler does about idleness: immutable, validated when built, shareable between
 * any number of channels. Start from one of the policies:
 *
 * <table>
 * <caption>Policies and their settings</caption>
 * <tr><th>Policy</th><th>Settings</th><th>On idleness</th></tr>
 * <tr><td>{@link #events()}</td><td>{@code readerIdle}, {@code writerIdle}, {@code allIdle}
 *     (0 disables), {@code observeOutput}</td>
 *     <td>fires Netty's {@link io.netty.handler.timeout.IdleStateEvent}s exactly as
 *     {@link io.netty.handler.timeout.IdleStateHandler} does: the drop-in replacement</td></tr>
 * <tr><td>{@link #closeWhenIdle()}</td><td>the same three timeouts, {@code observeOutput},
 *     {@code withTimeoutExceptions}</td>
 *     <td>closes the channel; with {@code withTimeoutExceptions()} first fires
 *     {@link io.netty.handler.timeout.ReadTimeoutException} (reader or all idle) or
 *     {@link io.netty.handler.timeout.WriteTimeoutException} (writer idle), as
 *     {@code ReadTimeoutHandler} does</td></tr>
 * <tr><td>{@link #ping(PingFactory)}</td><td>{@code interval}, {@code timeout} (default: the
 *     interval), {@code maxMissedPings} (default 3), {@code jitter} (default 0),
 *     {@code whenWriterIdle} (client keep-alive), {@code closeWhenReaderIdle} (default off)</td>
 *     <td>writes a ping when the peer has been silent (or, for keep-alive, when we have not written)
 *     for the interval; any inbound read answers it; after {@code maxMissedPings} pings without an
 *     answer, each waited for {@code timeout}, closes the channel</td></tr>
 * <tr><td>{@link #ping(Probe)}</td><td>as above, plus {@code ackMode} (default
 *     {@link AckMode#ANY_INBOUND}) and, with a matched ack mode, {@code adaptiveTimeout}</td>
 *     <td>pings with a protocol {@link Probe} (HTTP/2 PING, WebSocket Ping, MQTT PINGREQ, ...): its
 *     answers are recognised, kept from the application and give the channel's round-trip time
 *     ({@code HeartbeatMonitor.rttOf}); with a matched {@link AckMode} only the answer settles a
 *     ping</td></tr>
 * </table>
 *
 * <p>Every duration must be 0 (disabled, where allowed) or between 1 ms and 2<sup>61</sup> ns;
 * anything else fails with a message that names the setting and the value. Nothing is rounded
 * or clamped, with one documented exception: a deadline is acted on at most one wheel tick late.
 * A setting that would be ignored (a close hold without a veto, a veto that no close would ask,
 * {@code observeOutput} without writer or all idleness...) is refused by {@link Builder#build()},
 * with a message that names it and what would make it count.
 *
 * <pre>{@code
 * HeartbeatConfig dropIn = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(60)).build();
 * HeartbeatConfig gateway = HeartbeatConfig.closeWhenIdle().allIdle(Duration.ofMinutes(5)).build();
 * HeartbeatConfig keepAlive = HeartbeatConfig.ping(ch -> new PingFrame())
 *         .interval(Duration.ofSeconds(30)).maxMissedPings(2).jitter(0.1).build();
 * }</pre>
 */
public final class HeartbeatConfig {

    /** What happens when a channel is idle. */
    public enum Policy {
        /** Fire {@link io.netty.handler.timeout.IdleStateEvent}s, as {@code IdleStateHandler}. */
        EVENT,
        /** Close the channel. */
        CLOSE,
        /** Fire {@code ReadTimeoutException} or {@code WriteTimeoutException}, then close the channel. */
        CLOSE_WITH_EXCEPTION,
        /** Write pings and close the channel after too many go unanswered. */
        PING
    }

    /** The shortest positive timeout: finer deadlines are below the wheel's resolution. */
    public static final Duration MIN_TIMEOUT = Duration.ofMillis(1);
    /**
     * The most unanswered pings that can be allowed: a channel's ping state counts them in a short,
     * so any bound below 2^15 fits; 10,000 is far beyond any sane setting.
     */
    public static final int MAX_MISSED_PINGS = 10_000;
    static { // the engine's way to this package's members that are not public: before any Plan exists
        ApiAccess.install(new EngineAccess());
    }

    /** The longest timeout: deadlines must stay comparable by subtraction on a nanoTime clock. */
    public static final Duration MAX_TIMEOUT = Duration.ofNanos(TimingWheel.MAX_DELAY_NANOS);

    /** What the engine runs for this configuration: its settings in nanoseconds, and the rules they compile to. */
    final Plan plan;
    /**
     * The settings this configuration was built from: a private copy, never changed, the one source of
     * every derived configuration ({@link #toBuilder}), so that a derivation copies every setting, and
     * a setting added to the builder is carried over without a line of its own.
     */
    private final Builder settings;

    private HeartbeatConfig(Builder b) {
        this.settings = b.copy();
        this.plan = new Plan(this, b.policy, b.readerIdleNanos, b.writerIdleNanos, b.allIdleNanos, b.observeOutput,
                b.pingIntervalNanos, b.pingTimeoutNanos, b.maxMissedPings, b.jitter, b.pingWhenWriterIdle, b.probe,
                b.ackMode, b.readerCloseNanos, b.adaptiveMinNanos, b.adaptiveMaxNanos, b.tuner, b.guards());
    }


    /**
     * The drop-in policy: {@link io.netty.handler.timeout.IdleStateEvent}s with
     * {@code IdleStateHandler}'s semantics. Set at least one of the three timeouts.
     */
    public static Builder events() {
        return new Builder(EventPolicy.INSTANCE);
    }

    /** Close idle channels. Set at least one of the three timeouts. */
    public static Builder closeWhenIdle() {
        return new Builder(ClosePolicy.QUIETLY);
    }

    /**
     * Ping silent peers and close those that stop answering. Set the {@link Builder#interval}.
     *
     * @param factory makes each ping message; called on the channel's event loop
     */
    public static Builder ping(PingFactory factory) {
        Builder b = new Builder(PingPolicy.INSTANCE);
        b.probe = new PingFactoryProbe(Objects.requireNonNull(factory, "ping factory"));
        return b;
    }

    /**
     * Ping silent peers with a protocol probe and close those that stop answering: like
     * {@link #ping(PingFactory)}, but the probe's answers (an HTTP/2 PING ACK, a WebSocket Pong, an MQTT
     * PINGRESP) are recognised: kept from the application (if the probe consumes them), timed for the
     * channel's round-trip time, and, with a matched {@link Builder#ackMode}, the only thing that
     * settles a ping. Set the {@link Builder#interval}.
     *
     * @param probe makes pings and recognises answers, e.g.
     *     {@link dev.heartbeat.netty.probe.Probes#http2()}
     */
    public static Builder ping(Probe probe) {
        Builder b = new Builder(PingPolicy.INSTANCE);
        b.probe = Objects.requireNonNull(probe, "probe");
        return b;
    }

    /**
     * Exactly the settings of {@code new IdleStateHandler(observeOutput, readerIdle, writerIdle, allIdle, unit)}:
     * a timeout of 0 or less disables that kind, a positive one below {@link #MIN_TIMEOUT} is raised
     * to it, and all three disabled is valid and tracks nothing (as {@code IdleStateHandler(0, 0, 0)}).
     * One documented difference: a timeout beyond {@link #MAX_TIMEOUT} (2<sup>61</sup> ns, 73 years),
     * which {@code IdleStateHandler} saturates at {@code Long.MAX_VALUE} ns, is lowered to
     * {@code MAX_TIMEOUT}: neither fires within the life of a process.
     */
    public static HeartbeatConfig events(boolean observeOutput, long readerIdle, long writerIdle, long allIdle,
            TimeUnit unit) {
        Objects.requireNonNull(unit, "unit");
        Builder b = events().observeOutput(observeOutput);
        b.readerIdleNanos = idleStateHandlerNanos(readerIdle, unit);
        b.writerIdleNanos = idleStateHandlerNanos(writerIdle, unit);
        b.allIdleNanos = idleStateHandlerNanos(allIdle, unit);
        return new HeartbeatConfig(b);
    }

    /** A timeout as {@code IdleStateHandler} takes it, within this class's range (see the drop-in {@code events}). */
    private static long idleStateHandlerNanos(long time, TimeUnit unit) {
        if (time <= 0) {
            return 0;
        }
        long nanos = unit.toNanos(time); // saturates, as in IdleStateHandler
        return Math.min(Math.max(nanos, MIN_TIMEOUT.toNanos()), MAX_TIMEOUT.toNanos());
    }

    /** The policy. */
    public Policy policy() {
        return plan.policy.kind();
    }

    /** Reader idle timeout; zero when disabled. */
    public Duration readerIdle() {
        return Duration.ofNanos(plan.readerIdleNanos);
    }

    /** Writer idle timeout; zero when disabled. */
    public Duration writerIdle() {
        return Duration.ofNanos(plan.writerIdleNanos);
    }

    /** All-idle (neither read nor write) timeout; zero when disabled. */
    public Duration allIdle() {
        return Duration.ofNanos(plan.allIdleNanos);
    }

    /** Whether slow but progressing writes count as activity. */
    public boolean observeOutput() {
        return plan.observeOutput;
    }

    /** Ping interval; zero unless the policy is {@link Policy#PING}. */
    public Duration pingInterval() {
        return Duration.ofNanos(plan.pingIntervalNanos);
    }

    /** How long each ping waits for an answer; zero unless the policy is {@link Policy#PING}. */
    public Duration pingTimeout() {
        return Duration.ofNanos(plan.pingTimeoutNanos);
    }

    /** Unanswered pings before the channel is closed; zero unless the policy is {@link Policy#PING}. */
    public int maxMissedPings() {
        return plan.maxMissedPings;
    }

    /** The jitter, as a fraction of the ping interval. */
    public double jitter() {
        return plan.jitter;
    }

    /** Whether pings are sent when we have not written (keep-alive) rather than when the peer is silent. */
    public boolean pingWhenWriterIdle() {
        return plan.pingWhenWriterIdle;
    }

    /** The ping policy's reader-idle close: no read for this long closes the channel; zero when off. */
    public Duration closeWhenReaderIdle() {
        return Duration.ofNanos(plan.readerCloseNanos);
    }

    /**
     * The adaptive answer timeout's lower bound, or zero when the answer timeout is fixed (see
     * {@link Builder#adaptiveTimeout}).
     */
    public Duration adaptiveTimeoutMin() {
        return Duration.ofNanos(plan.adaptiveMinNanos);
    }

    /** The adaptive answer timeout's upper bound, or zero when the answer timeout is fixed. */
    public Duration adaptiveTimeoutMax() {
        return Duration.ofNanos(plan.adaptiveMaxNanos);
    }

    /** How a ping is settled; {@link AckMode#ANY_INBOUND} unless set (and for policies without pings). */
    public AckMode ackMode() {
        return plan.ackMode;
    }

    /** The maximum connection age (see {@link Builder#maxAge}); zero when off. */
    public Duration maxAge() {
        return Duration.ofNanos(plan.guards == null ? 0 : plan.guards.maxAgeNanos);
    }

    /** The maximum age's jitter fraction (see {@link Builder#maxAgeJitter}); zero when off. */
    public double maxAgeJitter() {
        return plan.guards == null ? 0 : plan.guards.ageJitter;
    }

    /** How the maximum age is jittered. */
    public JitterMode maxAgeJitterMode() {
        return plan.guards == null ? JitterMode.SYMMETRIC : plan.guards.jitterMode;
    }

    /** The grace after the maximum age's goodbye (see {@link Builder#maxAgeGrace}); zero for none. */
    public Duration maxAgeGrace() {
        return Duration.ofNanos(plan.guards == null ? 0 : plan.guards.graceNanos);
    }

    /** The write-stall timeout (see {@link Builder#writeStall}); zero when off. */
    public Duration writeStall() {
        return Duration.ofNanos(plan.guards == null ? 0 : plan.guards.writeStallNanos);
    }

    /** The longest a channel may stay unwritable (see {@link Builder#maxUnwritable}); zero when off. */
    public Duration maxUnwritable() {
        return Duration.ofNanos(plan.guards == null ? 0 : plan.guards.maxUnwritableNanos);
    }

    /** Whose goodbye is written at maximum age and in a drain, if any (see {@link Builder#goodbye}). */
    public java.util.Optional<Probe> goodbye() {
        return java.util.Optional.ofNullable(plan.guards == null ? null : plan.guards.goodbye);
    }

    /**
     * This ping configuration with its interval doubled (gRPC's back-off when a server says
     * {@code too_many_pings}), at most {@link #MAX_TIMEOUT}, and, when pings follow read silence with a
     * reader-idle close, with its first ping still due before that close (the check of
     * {@link Builder#build}); everything else as it is.
     */
    HeartbeatConfig withDoubledInterval() {
        long doubled = Math.min(MAX_TIMEOUT.toNanos(), plan.pingIntervalNanos * 2);
        if (plan.readerCloseNanos > 0 && !plan.pingWhenWriterIdle) {
            // The largest interval in [now, doubled] whose first ping still comes before the close (a
            // bisection: the bound grows with the interval).
            long fits = plan.pingIntervalNanos;
            long over = doubled + 1;
            while (over - fits > 1) {
                long mid = fits + (over - fits) / 2;
                if (settings.firstPingBoundNanos(mid) < plan.readerCloseNanos) {
                    fits = mid;
                } else {
                    over = mid;
                }
            }
            doubled = fits;
        }
        return withInterval(doubled);
    }

    /**
     * This ping configuration with the ping interval {@code intervalNanos}; everything else as it is,
     * the answer timeout included (where it defaulted to the interval, it stays the old interval).
     */
    HeartbeatConfig withInterval(long intervalNanos) {
        Builder b = toBuilder();
        b.pingIntervalNanos = intervalNanos;
        b.pingTimeoutNanos = plan.pingTimeoutNanos;
        return new HeartbeatConfig(b);
    }

    /**
     * This configuration's lifecycle settings (maximum age, write stall, unwritable bound, goodbye,
     * close veto and its bound) with a new idle policy: close after {@code readerIdleNanos} without a
     * read ({@link #closeWhenIdle()}, with timeout exceptions if this configuration has them), as
     * {@link MqttKeepAlive} needs after CONNECT. Every setting of the old idle policy (its timeouts,
     * or its pings) is replaced; the goodbye this configuration said (its ping probe's, if it had no
     * other) is kept.
     *
     * @throws IllegalStateException if the result would refuse to build (for example a
     *     {@code holdWhile} that only a ping configuration's reader-idle close could use is still used
     *     here: it holds the new reader-idle close)
     */
    HeartbeatConfig withReaderIdleClose(long readerIdleNanos) {
        Builder b = new Builder(plan.policy == ClosePolicy.WITH_EXCEPTION ? plan.policy : ClosePolicy.QUIETLY);
        b.guard = settings.guard.copy();
        if (b.guard.goodbye == null) {
            b.guard.goodbye = settings.probe; // the goodbye this configuration said, if any
        }
        b.readerIdleNanos = readerIdleNanos;
        return b.build();
    }

    /** A builder with every setting of this configuration: derivations change what they replace and build. */
    Builder toBuilder() {
        return settings.copy();
    }


    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("HeartbeatConfig[").append(plan.policy.kind());
        plan.policy.describe(plan, s);
        if (plan.guards != null) {
            plan.guards.describe(s);
        }
        return s.append(']').toString();
    }

    /**
     * Builds a {@link HeartbeatConfig}. Each setter checks its value at once; a setting that does not
     * apply to the chosen policy is refused with {@link IllegalStateException}.
     */
    public static final class Builder implements Cloneable {
        /** The policy: final in effect (only a copy changes it, see {@link #withTimeoutExceptions}). */
        private HandlerPolicy policy;
        private long readerIdleNanos;
        private long writerIdleNanos;
        private long allIdleNanos;
        private boolean observeOutput;
        private long pingIntervalNanos;
        private long pingTimeoutNanos;
        private int maxMissedPings;
        private double jitter;
        private boolean pingWhenWriterIdle;
        private Probe probe;
        private AckMode ackMode = AckMode.ANY_INBOUND;
        private long adaptiveMinNanos;
        private long adaptiveMaxNanos;
        private long readerCloseNanos;
        private AdaptiveKeepAlive<java.net.SocketAddress> tuner;
        /** The lifecycle settings: one object, so that a new idle policy keeps them all. */
        private GuardSettings guard = new GuardSettings();

        private Builder(HandlerPolicy policy) {
            this.policy = policy;
            this.maxMissedPings = pings() ? 3 : 0;
        }

        /** Reader idle timeout: no read for this long. {@code Duration.ZERO} disables it. */
        public Builder readerIdle(Duration timeout) {
            requireIdlePolicy("readerIdle");
            readerIdleNanos = timeoutNanos("readerIdle", timeout, true);
            return this;
        }

        /** Writer idle timeout: no completed write for this long. {@code Duration.ZERO} disables it. */
        public Builder writerIdle(Duration timeout) {
            requireIdlePolicy("writerIdle");
            writerIdleNanos = timeoutNanos("writerIdle", timeout, true);
            return this;
        }

        /** All-idle timeout: neither read nor completed write for this long. {@code Duration.ZERO} disables it. */
        public Builder allIdle(Duration timeout) {
            requireIdlePolicy("allIdle");
            allIdleNanos = timeoutNanos("allIdle", timeout, true);
            return this;
        }

        /**
         * Whether a write that is slow but progressing (bytes leaving the outbound buffer) counts as
         * activity for writer and all idleness, as {@code IdleStateHandler}'s {@code observeOutput}.
         * Off by default. On, it needs {@link #writerIdle} or {@link #allIdle} (checked by
         * {@link #build()}; the drop-in {@code events(observeOutput, ...)} takes it without, as
         * {@code IdleStateHandler} does).
         */
        public Builder observeOutput(boolean observe) {
            requireIdlePolicy("observeOutput");
            this.observeOutput = observe;
            return this;
        }

        /**
         * Close with {@code ReadTimeoutException} / {@code WriteTimeoutException} fired first. Needs an
         * idle timeout to fire on (checked by {@link #build()}).
         */
        public Builder withTimeoutExceptions() {
            if (!(policy instanceof ClosePolicy)) {
                throw new IllegalStateException("withTimeoutExceptions applies only to closeWhenIdle(), not to policy "
                        + policy.kind());
            }
            return copyAs(ClosePolicy.WITH_EXCEPTION);
        }

        /** Ping after this long without the trigger's activity. Required for the ping policy. */
        public Builder interval(Duration interval) {
            requirePingPolicy("interval");
            pingIntervalNanos = timeoutNanos("interval", interval, false);
            return this;
        }

        /**
         * How long each ping waits for its answer (what answers it is the {@link #ackMode}'s). Defaults to
         * the interval. With {@link #adaptiveTimeout}, the wait until the channel has a round-trip sample.
         */
        public Builder timeout(Duration timeout) {
            requirePingPolicy("timeout");
            pingTimeoutNanos = timeoutNanos("timeout", timeout, false);
            return this;
        }

        /** How many pings may go unanswered before the channel is closed; in [1, 10000], default 3. */
        public Builder maxMissedPings(int count) {
            requirePingPolicy("maxMissedPings");
            if (count < 1 || count > MAX_MISSED_PINGS) {
                throw new IllegalArgumentException("maxMissedPings must be in [1, " + MAX_MISSED_PINGS + "]: " + count);
            }
            this.maxMissedPings = count;
            return this;
        }

        /**
         * Spreads pings: each channel waits {@code interval * (1 + f)} for a fixed per-channel
         * {@code f} in {@code [0, fraction)}, so channels opened together do not ping together.
         * In [0, 1); 0 (the default) disables it. With a {@link #closeWhenReaderIdle} on read-driven
         * pings, the longest jittered interval must still come before the close (checked by {@link #build()}).
         */
        public Builder jitter(double fraction) {
            requirePingPolicy("jitter");
            if (!(fraction >= 0 && fraction < 1)) {
                throw new IllegalArgumentException("jitter must be in [0, 1): " + fraction);
            }
            this.jitter = fraction;
            return this;
        }

        /**
         * Client keep-alive: ping when we have not written for the interval, instead of when the peer
         * has been silent. Unanswered pings still close the channel.
         */
        public Builder whenWriterIdle() {
            requirePingPolicy("whenWriterIdle");
            this.pingWhenWriterIdle = true;
            return this;
        }

        /**
         * A liveness check beside the pings: closes the channel (reason
         * {@link CloseReason#READER_IDLE}, after its {@link HeartbeatCloseEvent}) when nothing was read
         * for {@code timeout}, whatever the pings do. With {@link #whenWriterIdle()} this is gRPC's
         * combination: keep-alive pings when we have not written (so NATs and proxies keep the
         * connection) and a close when the peer has not sent anything (so a dead peer is found
         * even while we keep writing to it). Off by default.
         *
         * @param timeout how long without a read closes; unless pings are driven by writer idleness,
         *     longer than the latest first ping of a silent channel: the {@link #interval} plus its
         *     largest {@link #jitter}, plus the configuration's coalescing window (1/64 of the interval
         *     at most) and two ticks of 1.05 ms (checked by {@link #build()}: else a channel could close
         *     before its first ping). A worker late by more than the margin (a pause longer than the
         *     timeout less the interval) may find the ping and the close due at once: the close comes
         *     without the ping, as when an action budget defers the ping that long
         */
        public Builder closeWhenReaderIdle(Duration timeout) {
            requirePingPolicy("closeWhenReaderIdle");
            readerCloseNanos = timeoutNanos("closeWhenReaderIdle", timeout, false);
            return this;
        }

        /**
         * What settles a ping: {@link AckMode#ANY_INBOUND} (any read; the default), or, for a probe that
         * recognises its answers, {@link AckMode#MATCHED_ONLY} (only the answer) or
         * {@link AckMode#MATCHED_EXTENDS} (only the answer; other reads push the ping's deadline out).
         */
        public Builder ackMode(AckMode mode) {
            requirePingPolicy("ackMode");
            this.ackMode = Objects.requireNonNull(mode, "ackMode");
            return this;
        }

        /**
         * Adapts each ping's answer timeout to the channel's round trip, as TCP's retransmission timer
         * does (RFC 6298): once a matched answer gave the channel an RTT sample, a ping waits
         * {@code clamp(SRTT + 4 * RTTVAR, min, max)} for its answer; before that, the fixed
         * {@link #timeout}. A peer that answers in 40 ms is then declared unresponsive after a few
         * hundred milliseconds instead of a timeout sized for the slowest peer, and a peer on a slow
         * link is not closed early. Needs a probe that recognises its answers and a matched
         * {@link #ackMode} (checked by {@link #build()}): any-inbound answers give no round trip to adapt to.
         *
         * @param min the shortest answer timeout, at least 1 ms
         * @param max the longest, at least {@code min} and at most {@link HeartbeatConfig#MAX_TIMEOUT}
         * @throws IllegalArgumentException if a bound is out of range or {@code min > max}
         */
        public Builder adaptiveTimeout(Duration min, Duration max) {
            requirePingPolicy("adaptiveTimeout");
            long minNanos = timeoutNanos("adaptiveTimeout min", min, false);
            long maxNanos = timeoutNanos("adaptiveTimeout max", max, false);
            if (minNanos > maxNanos) {
                throw new IllegalArgumentException("adaptiveTimeout min must not exceed max: min " + min + ", max "
                        + max);
            }
            this.adaptiveMinNanos = minNanos;
            this.adaptiveMaxNanos = maxNanos;
            return this;
        }

        /**
         * Ends every connection at this age, whatever its activity (gRPC's {@code maxConnectionAge},
         * Envoy's {@code max_connection_duration}): so that load spreads again over new servers, and
         * credentials and routes are picked up again. At the age, Heartbeat fires a
         * {@link HeartbeatGoodbyeEvent}, writes the {@link #goodbye} probe's goodbye (HTTP/2: GOAWAY,
         * in two halves with a PING between them when there is a grace; WebSocket: Close 1001), and
         * closes the channel (reason {@link CloseReason#MAX_AGE}) after the {@link #maxAgeGrace}, or
         * as soon as the goodbye is written (at most 1 s later) without one. Measured from the moment
         * the channel became active; any policy. {@code Duration.ZERO} (the default) disables it. A
         * channel reconfigured to a max age from a configuration with no lifecycle guard (no max age,
         * write stall, unwritable bound or close veto) is measured from that reconfiguration: the
         * handler keeps no activation time for channels that need none. An age already reached when
         * it is configured ends the channel at once.
         */
        public Builder maxAge(Duration age) {
            guard.maxAgeNanos = timeoutNanos("maxAge", age, true);
            return this;
        }

        /**
         * Spreads the maximum age per channel by up to {@code fraction} of it, in {@code mode}'s
         * direction, so that connections opened together (after a deploy) do not all reconnect
         * together. In [0, 1); 0 (the default) disables it. Needs {@link #maxAge}.
         */
        public Builder maxAgeJitter(double fraction, JitterMode mode) {
            if (!(fraction >= 0 && fraction < 1)) {
                throw new IllegalArgumentException("maxAgeJitter must be in [0, 1): " + fraction);
            }
            guard.ageJitter = fraction;
            guard.jitterMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * How long a connection at its maximum age may go on after its goodbye, to finish what it
         * started (gRPC's {@code maxConnectionAgeGrace}); the channel is closed at its end unless the
         * peer closed it first. {@code Duration.ZERO} (the default) closes as soon as the goodbye is
         * written. Needs {@link #maxAge}.
         */
        public Builder maxAgeGrace(Duration grace) {
            guard.graceNanos = timeoutNanos("maxAgeGrace", grace, true);
            return this;
        }

        /**
         * Closes a channel that has bytes waiting in its outbound buffer and has sent none of them for
         * {@code timeout} (reason {@link CloseReason#WRITE_STALL}), as nginx's {@code send_timeout} and
         * Go's {@code WriteByteTimeout} do: a peer that stopped reading, or a path that died with data in
         * flight. A slow peer that still takes bytes is never cut: any byte leaving (a write completing,
         * or progress on a large one) starts the timeout again. Messages written but not flushed count
         * as waiting. The channel is closed between {@code timeout} and 1.25 x {@code timeout} after
         * the last byte left; it is looked at every quarter of the timeout. Separate from writer idle,
         * which measures our silence, not the peer's. Any policy; {@code Duration.ZERO} disables it.
         *
         * <p>"Leaving" is leaving Netty's outbound buffer for the socket. On Linux the kernel wakes a
         * writer only once about a third of the socket's send buffer is free, and it autotunes that
         * buffer up to megabytes, so a peer that drains a few KiB a second can leave the outbound buffer
         * unmoved for seconds while the kernel sends steadily: with epoll, set
         * {@code EpollChannelOption.TCP_NOTSENT_LOWAT} (16 KiB, say) on the accepted channels, and the
         * kernel wakes the writer once fewer than half that many unsent bytes are left: a peer that takes
         * less than about the option's value in a timeout can still be closed. The load test's slow readers
         * (a read every third of a 250 ms stall, 8 KiB buffers) were all closed without it, and none with it.
         * An event loop that missed its looks (a GC pause, a thread without a core) wrote nothing meanwhile:
         * a look 1.5 x {@code timeout} or more after the last progress it saw starts the measurement again.
         */
        public Builder writeStall(Duration timeout) {
            guard.writeStallNanos = timeoutNanos("writeStall", timeout, true);
            return this;
        }

        /**
         * Closes a channel that stays unwritable ({@code !channel.isWritable()}: its outbound buffer
         * above the high water mark) for {@code timeout} (reason {@link CloseReason#UNWRITABLE}):
         * a bound on the memory a slow consumer can hold, whatever it still reads. Measured from the
         * writability change Netty fires; any policy. {@code Duration.ZERO} disables it.
         */
        public Builder maxUnwritable(Duration timeout) {
            guard.maxUnwritableNanos = timeoutNanos("maxUnwritable", timeout, true);
            return this;
        }

        /**
         * Whose goodbye to write, with the reason, before every close Heartbeat makes: at the
         * {@link #maxAge}, in a drain ({@code HeartbeatMonitor.drain}) and for every policy close
         * (idle, ping timeout, write stall, unwritable, overload):
         * {@link dev.heartbeat.netty.probe.Probes#http2()} (GOAWAY),
         * {@link dev.heartbeat.netty.probe.Probes#webSocket()} (Close 1001 "going away"), or a custom
         * {@link Probe} overriding {@link Probe#newGoodbye}. A channel is told one goodbye at most, whoever
         * closes it. The close waits for the goodbye's write, at most 1 s, except after a write stall or an
         * unwritable spell, where it would queue behind bytes the peer is not reading. Defaults to the ping
         * policy's probe; none for the other policies (then at max age and in a drain only the
         * {@link HeartbeatGoodbyeEvent} is fired, for the application to say its own goodbye).
         */
        public Builder goodbye(Probe probe) {
            guard.goodbye = Objects.requireNonNull(probe, "goodbye probe");
            return this;
        }

        /**
         * Asks {@code veto} on the event loop before every close Heartbeat makes (but drains and ping
         * abuse): it may let it go ahead, hold it for a while ({@link CloseDecision#extend}), or, at a
         * maximum age, close at once without the goodbye. Holds of one episode add up to at most
         * {@link #maxCloseHold} (5 min by default). Any policy that closes: {@link #events()} closes
         * only with a guard ({@link #maxAge}, {@link #writeStall}, {@link #maxUnwritable}), which
         * {@link #build()} checks. Replaces a {@link #holdWhile} set before.
         */
        public Builder beforeClose(CloseVeto veto) {
            guard.veto = Objects.requireNonNull(veto, "veto");
            guard.vetoHoldsIdleClosesOnly = false;
            return this;
        }

        /**
         * Idle closes (reader, writer or all idle) wait while {@code inFlight} says the application
         * has work in flight on the channel, asking again every second, as Armeria keeps connections
         * with requests in progress; bounded by {@link #maxCloseHold}. Call
         * {@code HeartbeatMonitor.resetReadTimeout(channel)} when the work ends to measure idleness
         * from then, as gRPC measures it from the last call. A shorthand for {@link #beforeClose}
         * (and replaces one set before); needs an idle close to hold: a timeout of
         * {@link #closeWhenIdle()}, or the ping policy's {@link #closeWhenReaderIdle} (checked by
         * {@link #build()}).
         */
        public Builder holdWhile(java.util.function.Predicate<io.netty.channel.Channel> inFlight) {
            Objects.requireNonNull(inFlight, "inFlight");
            CloseDecision recheck = CloseDecision.extend(Duration.ofNanos(Guards.HOLD_RECHECK_NANOS));
            beforeClose((ch, reason) -> (reason == CloseReason.READER_IDLE || reason == CloseReason.WRITER_IDLE
                    || reason == CloseReason.ALL_IDLE) && inFlight.test(ch) ? recheck : CloseDecision.PROCEED);
            guard.vetoHoldsIdleClosesOnly = true;
            return this;
        }

        /**
         * The longest a close veto may hold the closes of one episode (from the first hold until a
         * close goes ahead or the channel is no longer due to close); then the close goes ahead
         * without asking. Default 5 min; at least 1 ms. Needs a veto, {@link #beforeClose} or
         * {@link #holdWhile} (checked by {@link #build()}).
         */
        public Builder maxCloseHold(Duration bound) {
            guard.maxHoldNanos = timeoutNanos("maxCloseHold", bound, false);
            guard.maxHoldSet = true;
            return this;
        }

        /** The guards these settings make, or null for none. */
        private Guards guards() {
            GuardSettings g = guard;
            Probe bye = g.goodbye != null ? g.goodbye : probe;
            if (!g.guards() && bye == null && g.veto == null) {
                return null;
            }
            return new Guards(g.maxAgeNanos, g.ageJitter, g.jitterMode, g.graceNanos, g.writeStallNanos,
                    g.maxUnwritableNanos, bye, g.veto, g.maxHoldNanos);
        }

        /**
         * Client keep-alive behind unknown NATs: each channel pings at the interval {@code tuner} has
         * learned for its remote address ({@link AdaptiveKeepAlive#interval}; the {@link #interval}
         * set here serves channels without a remote address), reports back on its own pings, and
         * moves to the tuner's interval after each answer: an answer to a ping sent after that long
         * with nothing else either way (our previous ping's answer is no traffic) is a success; such a
         * ping unanswered at a close for {@link CloseReason#PING_TIMEOUT}, or when the channel is
         * closed by the peer (a reset), a failure; a {@code too_many_pings} from the peer a
         * {@link AdaptiveKeepAlive#tooManyPings}. Needs {@link #whenWriterIdle()} and a probe that
         * recognises its answers (checked by {@link #build()}).
         */
        public Builder adaptiveInterval(AdaptiveKeepAlive<java.net.SocketAddress> tuner) {
            requirePingPolicy("adaptiveInterval");
            this.tuner = Objects.requireNonNull(tuner, "tuner");
            return this;
        }

        /**
         * Builds the configuration.
         *
         * @throws IllegalStateException if the ping policy has no interval, or an idle policy no timeout
         *     (a configuration that watches nothing would be a silent no-op; to stop watching a channel,
         *     remove its handler), if the settings contradict each other, or if a setting would be
         *     ignored: each message names the setting and what would make it count
         */
        public HeartbeatConfig build() {
            if (guard.maxAgeNanos == 0 && (guard.ageJitter > 0 || guard.graceNanos > 0)) {
                throw new IllegalStateException((guard.ageJitter > 0 ? "maxAgeJitter" : "maxAgeGrace")
                        + " needs maxAge: call maxAge(Duration) too");
            }
            if (pings()) {
                checkPings();
            } else {
                checkIdle();
            }
            checkVeto();
            return new HeartbeatConfig(this);
        }

        private void checkPings() {
            if (pingIntervalNanos == 0) {
                throw new IllegalStateException("the ping policy needs an interval: call interval(Duration)");
            }
            if (ackMode.needsMatching() && probe.matching() == Probe.Matching.NONE) {
                throw new IllegalStateException("ackMode " + ackMode + " needs a probe that recognises its answers, "
                        + "but " + probe + " does not (Matching.NONE): use ANY_INBOUND, or ping(Probe) with a probe "
                        + "such as Probes.http2()");
            }
            if (readerCloseNanos > 0 && !pingWhenWriterIdle) {
                checkFirstPingBeforeClose();
            }
            if (adaptiveMaxNanos > 0 && (!ackMode.needsMatching() || probe.matching() == Probe.Matching.NONE)) {
                throw new IllegalStateException("adaptiveTimeout needs a probe that recognises its answers and a "
                        + "matched ackMode (MATCHED_ONLY or MATCHED_EXTENDS), to time the answers it adapts to; "
                        + "this has probe " + probe + " and ackMode " + ackMode);
            }
            if (tuner != null && (!pingWhenWriterIdle || probe.matching() == Probe.Matching.NONE)) {
                throw new IllegalStateException("adaptiveInterval needs whenWriterIdle() (a keep-alive, timed by our "
                        + "own silence) and a probe that recognises its answers (to tell a success); this has "
                        + (pingWhenWriterIdle ? "" : "pings on read silence and ") + "probe " + probe);
            }
        }

        /** A read-driven ping configuration with a reader-idle close: the close must come after the first ping. */
        private void checkFirstPingBeforeClose() {
            if (readerCloseNanos <= pingIntervalNanos) {
                throw new IllegalStateException("closeWhenReaderIdle (" + Duration.ofNanos(readerCloseNanos)
                        + ") needs to be longer than the interval (" + Duration.ofNanos(pingIntervalNanos) + ") when "
                        + "pings are driven by read silence, or the channel closes before its first ping: use "
                        + "whenWriterIdle() or a longer closeWhenReaderIdle");
            }
            long bound = firstPingBoundNanos(pingIntervalNanos);
            if (readerCloseNanos <= bound) {
                long jittered = pingIntervalNanos + (long) Math.ceil(pingIntervalNanos * jitter);
                throw new IllegalStateException("closeWhenReaderIdle (" + Duration.ofNanos(readerCloseNanos)
                        + ") needs to be longer than the latest first ping of a silent channel ("
                        + Duration.ofNanos(bound) + ": the interval " + Duration.ofNanos(pingIntervalNanos)
                        + (jitter > 0 ? " with jitter " + jitter + " (up to " + Duration.ofNanos(jittered) + ")" : "")
                        + ", then up to a coalescing window ("
                        + Duration.ofNanos(coalescingBoundNanos(pingIntervalNanos)) + ") and two ticks late) "
                        + "when pings are driven by read silence, or a channel closes before its first ping: use "
                        + "whenWriterIdle(), "
                        + (jitter > 0 ? "a smaller jitter " : "") + "or a longer closeWhenReaderIdle");
            }
        }

        /**
         * The latest a silent channel's first ping is decided, after its last read, with ping interval
         * {@code intervalNanos}: the interval with the largest share of the jitter (below
         * {@code interval * jitter}), delivered late by at most this configuration's coalescing window
         * and two wheel ticks: one for the wheel's resolution, one for the worker's wake-up (default
         * ticks, 1.05 ms; a monitor with a coarser tick, or a worker stalled longer, may decide later).
         */
        long firstPingBoundNanos(long intervalNanos) {
            return intervalNanos + (long) Math.ceil(intervalNanos * jitter) + coalescingBoundNanos(intervalNanos)
                    + 2 * TimingWheel.DEFAULT_TICK_NANOS;
        }

        /**
         * The coalescing window a configuration with ping interval {@code intervalNanos} has at most (see
         * {@code coalescingNanos}; its other timeouts can only make it finer, a monitor only cap it).
         */
        private long coalescingBoundNanos(long intervalNanos) {
            long finest = Math.min(intervalNanos, pingTimeoutNanos > 0 ? pingTimeoutNanos : intervalNanos);
            finest = Math.min(finest, adaptiveMinNanos > 0 ? adaptiveMinNanos : Long.MAX_VALUE);
            return Plan.coalescingWindow(finest);
        }

        private void checkIdle() {
            boolean timeouts = readerIdleNanos > 0 || writerIdleNanos > 0 || allIdleNanos > 0;
            if (!timeouts && !guard.guards()) {
                throw new IllegalStateException("policy " + policy.kind() + " needs a timeout: set readerIdle, "
                        + "writerIdle or allIdle to a positive duration (or a guard: maxAge, writeStall, "
                        + "maxUnwritable)");
            }
            if (policy == ClosePolicy.WITH_EXCEPTION && !timeouts) {
                throw new IllegalStateException("withTimeoutExceptions needs an idle timeout to fire on: set "
                        + "readerIdle, writerIdle or allIdle");
            }
            if (observeOutput && writerIdleNanos == 0 && allIdleNanos == 0) {
                throw new IllegalStateException("observeOutput needs writerIdle or allIdle: it changes how writes "
                        + "count, and reader idleness does not look at writes");
            }
        }

        /** The close veto and its bound: each needs a close to be asked about. */
        private void checkVeto() {
            GuardSettings g = guard;
            if (g.maxHoldSet && g.veto == null) {
                throw new IllegalStateException("maxCloseHold (" + Duration.ofNanos(g.maxHoldNanos) + ") needs a "
                        + "close veto to bound: call beforeClose(CloseVeto) or holdWhile(Predicate) too");
            }
            if (g.veto == null) {
                return;
            }
            if (g.vetoHoldsIdleClosesOnly && !closesWhenIdle()) {
                throw new IllegalStateException("holdWhile needs an idle close (READER_IDLE, WRITER_IDLE or ALL_IDLE) "
                        + "to hold, and policy " + policy.kind() + " makes none here: " + (pings()
                        ? "set closeWhenReaderIdle" : policy instanceof EventPolicy
                        ? "use closeWhenIdle() with a timeout" : "set readerIdle, writerIdle or allIdle")
                        + ", or use beforeClose(CloseVeto)");
            }
            if (policy instanceof EventPolicy && !g.guards()) {
                throw new IllegalStateException("beforeClose needs a close to be asked about: policy EVENT closes "
                        + "nothing by itself (and drains are not asked); add maxAge, writeStall or maxUnwritable, or "
                        + "use closeWhenIdle()");
            }
        }

        /** Whether this configuration closes channels for idleness (READER_IDLE, WRITER_IDLE, ALL_IDLE). */
        private boolean closesWhenIdle() {
            if (pings()) {
                return readerCloseNanos > 0;
            }
            return policy instanceof ClosePolicy && (readerIdleNanos > 0 || writerIdleNanos > 0 || allIdleNanos > 0);
        }

        /** A copy with {@code newPolicy}: every other setting as it is. */
        private Builder copyAs(HandlerPolicy newPolicy) {
            Builder b = copy();
            b.policy = newPolicy;
            return b;
        }

        /** A copy of every setting: {@code clone} copies each field, so that no derivation can forget one. */
        Builder copy() {
            try {
                Builder b = (Builder) super.clone();
                b.guard = guard.copy();
                return b;
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }

        /** Whether this builds a ping configuration (the settings of the two families exclude each other). */
        private boolean pings() {
            return policy instanceof PingPolicy;
        }

        private void requireIdlePolicy(String setting) {
            if (pings()) {
                throw new IllegalStateException(setting + " does not apply to the ping policy; use interval() "
                        + "and whenWriterIdle()");
            }
        }

        private void requirePingPolicy(String setting) {
            if (!pings()) {
                throw new IllegalStateException(setting + " applies only to the ping policy, not to " + policy.kind());
            }
        }

        private static long timeoutNanos(String name, Duration value, boolean zeroAllowed) {
            Objects.requireNonNull(value, name);
            if (value.isNegative()) {
                throw new IllegalArgumentException(name + " cannot be negative: " + value);
            }
            if (value.isZero()) {
                if (!zeroAllowed) {
                    throw new IllegalArgumentException(name + " must be positive: " + value);
                }
                return 0;
            }
            if (value.compareTo(MIN_TIMEOUT) < 0) {
                throw new IllegalArgumentException(name + (zeroAllowed ? " must be 0 (disabled) or at least 1ms: "
                        : " must be at least 1ms: ") + value);
            }
            if (value.compareTo(MAX_TIMEOUT) > 0) {
                throw new IllegalArgumentException(name + " must be at most 2^61 ns (about 73 years): " + value);
            }
            return value.toNanos();
        }
    }

    /**
     * The lifecycle settings of a builder (see {@link Guards} for what they do): one object, so that a
     * derivation that replaces the idle policy keeps every one of them, and a copy copies them all.
     */
    static final class GuardSettings implements Cloneable {
        private long maxAgeNanos;
        private double ageJitter;
        private JitterMode jitterMode = JitterMode.SYMMETRIC;
        private long graceNanos;
        private long writeStallNanos;
        private long maxUnwritableNanos;
        private Probe goodbye;
        private CloseVeto veto;
        /** Whether the veto came from {@code holdWhile}: it answers only for idle closes. */
        private boolean vetoHoldsIdleClosesOnly;
        private long maxHoldNanos = Guards.DEFAULT_MAX_HOLD_NANOS;
        /** Whether {@code maxCloseHold} was called (its default bounds a veto; set without one, it is refused). */
        private boolean maxHoldSet;

        /** Whether a guard that closes is set: maximum age, write stall or unwritable bound. */
        boolean guards() {
            return maxAgeNanos > 0 || writeStallNanos > 0 || maxUnwritableNanos > 0;
        }

        GuardSettings copy() {
            try {
                return (GuardSettings) super.clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }
}
