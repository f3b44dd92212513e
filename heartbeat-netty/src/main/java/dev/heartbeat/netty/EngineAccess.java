/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;

import dev.heartbeat.netty.engine.ApiAccess;
import dev.heartbeat.netty.engine.Plan;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;

/**
 * The API package's side of {@link ApiAccess}: the engine's one way to the members of this package that are
 * not public. Installed by {@link HeartbeatConfig}'s static initialiser. Stateless.
 */
final class EngineAccess extends ApiAccess {

    @Override
    protected boolean isAnswer(Probe probe, Object msg) {
        return probe.isAnswer(msg);
    }

    @Override
    protected long tokenOf(Probe probe, Object answer) {
        return probe.tokenOf(answer);
    }

    @Override
    protected boolean isTooManyPings(Probe probe, Object msg) {
        return probe.isTooManyPings(msg);
    }

    @Override
    protected boolean writesFromTail(Probe probe) {
        return probe.writesFromTail();
    }

    @Override
    protected ChannelFuture writePing(Probe probe, ChannelHandlerContext ctx, Object ping) {
        return probe.writePing(ctx, ping);
    }

    @Override
    protected boolean reportMissingAnswers(Probe probe, Channel channel, int pingsWithoutAnswer) {
        return probe.reportMissingAnswers(channel, pingsWithoutAnswer);
    }

    @Override
    protected int misplacementPings() {
        return Probe.MISPLACEMENT_PINGS;
    }

    @Override
    protected void checkPlacementSoon(ChannelHandlerContext ctx, Plan plan) {
        ProbePlacement.checkSoon(ctx, plan);
    }

    @Override
    protected HeartbeatGoodbyeEvent goodbyeEvent(CloseReason reason, Duration grace) {
        return new HeartbeatGoodbyeEvent(reason, grace);
    }

    @Override
    protected HeartbeatPingBackoffEvent pingBackoffEvent(Duration interval) {
        return new HeartbeatPingBackoffEvent(interval);
    }

    @Override
    protected long extendNanos(CloseDecision decision) {
        return decision.extendNanos();
    }

    @Override
    protected boolean closesNow(CloseDecision decision) {
        return decision.closesNow();
    }

    @Override
    protected long jitteredAge(JitterMode mode, long ageNanos, double fraction, double u) {
        return mode.apply(ageNanos, fraction, u);
    }

    @Override
    protected long shortestAge(JitterMode mode, long ageNanos, double fraction) {
        return mode.shortest(ageNanos, fraction);
    }

    @Override
    protected Plan planOf(HeartbeatConfig config) {
        return config.plan;
    }

    @Override
    protected HeartbeatConfig withInterval(HeartbeatConfig config, long intervalNanos) {
        return config.withInterval(intervalNanos);
    }

    @Override
    protected HeartbeatConfig withDoubledInterval(HeartbeatConfig config) {
        return config.withDoubledInterval();
    }

    @Override
    protected PingCounters pingCounters(String probe) {
        return new PingCounters(probe);
    }

    @Override
    protected void countSent(PingCounters counters) {
        counters.sent.increment();
    }

    @Override
    protected void countAcked(PingCounters counters) {
        counters.acked.increment();
    }

    @Override
    protected void countMissed(PingCounters counters) {
        counters.missed.increment();
    }

    @Override
    protected boolean countFailed(PingCounters counters) {
        counters.failed.increment();
        return counters.firstFailure();
    }

    @Override
    protected ProbeStats snapshot(PingCounters counters) {
        return counters.snapshot();
    }
}
