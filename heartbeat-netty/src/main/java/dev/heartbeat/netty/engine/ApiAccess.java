/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.time.Duration;

import dev.heartbeat.netty.CloseDecision;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatGoodbyeEvent;
import dev.heartbeat.netty.HeartbeatPingBackoffEvent;
import dev.heartbeat.netty.JitterMode;
import dev.heartbeat.netty.PingCounters;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.ProbeStats;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;

/**
 * What the engine needs of the public API's classes beyond their public members: a probe's protected hooks,
 * the package-private constructors of the events, the counters' writers, a configuration's plan. The API
 * package installs its one implementation when {@link HeartbeatConfig} is initialised, which happens before
 * any plan exists, so before the engine runs (the JDK's {@code SharedSecrets}, in small). This keeps those
 * members out of the public API while the engine lives in a package of its own.
 */
public abstract class ApiAccess {

    /** The installed implementation; written once, when {@link HeartbeatConfig} is initialised. */
    private static volatile ApiAccess installed;

    /** The one implementation's name: no other class may be one (this class is public for its sake only). */
    private static final String IMPLEMENTATION = "dev.heartbeat.netty.EngineAccess";

    /**
     * For the API package's implementation only.
     *
     * @throws IllegalStateException for any other class
     */
    protected ApiAccess() {
        if (!getClass().getName().equals(IMPLEMENTATION)) {
            throw new IllegalStateException("ApiAccess is internal to Heartbeat: " + getClass().getName());
        }
    }

    /**
     * Installs the API package's implementation; once.
     *
     * @throws IllegalStateException if one is installed already
     */
    public static void install(ApiAccess access) {
        if (installed != null) {
            throw new IllegalStateException("ApiAccess is installed already");
        }
        installed = access;
    }

    /** The implementation: the API package's, installed by {@link HeartbeatConfig}'s initialisation. */
    static ApiAccess api() {
        ApiAccess a = installed;
        if (a == null) {
            try { // a plan exists only once HeartbeatConfig is initialised: this runs only in tests of the engine alone
                Class.forName(HeartbeatConfig.class.getName(), true, ApiAccess.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException(e);
            }
            a = installed;
        }
        return a;
    }

    // ---------------------------------------------------------------- probes

    /** {@code probe.isAnswer(msg)}. */
    protected abstract boolean isAnswer(Probe probe, Object msg);

    /** {@code probe.tokenOf(answer)}. */
    protected abstract long tokenOf(Probe probe, Object answer);

    /** {@code probe.isTooManyPings(msg)}. */
    protected abstract boolean isTooManyPings(Probe probe, Object msg);

    /** Whether the probe writes its pings from the pipeline's tail. */
    protected abstract boolean writesFromTail(Probe probe);

    /** {@code probe.writePing(ctx, ping)}. */
    protected abstract ChannelFuture writePing(Probe probe, ChannelHandlerContext ctx, Object ping);

    /** The probe's one WARN about pings that go unanswered on {@code channel}; whether it logged now. */
    protected abstract boolean reportMissingAnswers(Probe probe, Channel channel, int pingsWithoutAnswer);

    /** How many pings without an answer make a probe suspect its placement. */
    protected abstract int misplacementPings();

    /** Checks, soon after the handler starts, that the plan's probes sit where their frames are. */
    protected abstract void checkPlacementSoon(ChannelHandlerContext ctx, Plan plan);

    // ---------------------------------------------------------------- events and values

    /** A new {@code HeartbeatGoodbyeEvent}. */
    protected abstract HeartbeatGoodbyeEvent goodbyeEvent(CloseReason reason, Duration grace);

    /** A new {@code HeartbeatPingBackoffEvent}. */
    protected abstract HeartbeatPingBackoffEvent pingBackoffEvent(Duration interval);

    /** A veto's extension in nanoseconds (0 for none). */
    protected abstract long extendNanos(CloseDecision decision);

    /** Whether a veto's decision is to close at once. */
    protected abstract boolean closesNow(CloseDecision decision);

    /** {@code mode}'s age for a channel that drew {@code u}. */
    protected abstract long jitteredAge(JitterMode mode, long ageNanos, double fraction, double u);

    /** The shortest age {@code mode} can draw. */
    protected abstract long shortestAge(JitterMode mode, long ageNanos, double fraction);

    // ---------------------------------------------------------------- configurations

    /** The plan of {@code config}. */
    protected abstract Plan planOf(HeartbeatConfig config);

    /** {@code config} with the ping interval {@code intervalNanos}, everything else kept. */
    protected abstract HeartbeatConfig withInterval(HeartbeatConfig config, long intervalNanos);

    /** {@code config} with its ping interval doubled (gRPC's back-off on {@code too_many_pings}). */
    protected abstract HeartbeatConfig withDoubledInterval(HeartbeatConfig config);

    // ---------------------------------------------------------------- ping counters

    /** New counters for the probe named {@code probe}. */
    protected abstract PingCounters pingCounters(String probe);

    /** Counts a ping written. */
    protected abstract void countSent(PingCounters counters);

    /** Counts a ping answered. */
    protected abstract void countAcked(PingCounters counters);

    /** Counts a ping missed. */
    protected abstract void countMissed(PingCounters counters);

    /** Counts a ping that failed; whether it is the first failure of its probe. */
    protected abstract boolean countFailed(PingCounters counters);

    /** The counters now. */
    protected abstract ProbeStats snapshot(PingCounters counters);
}
