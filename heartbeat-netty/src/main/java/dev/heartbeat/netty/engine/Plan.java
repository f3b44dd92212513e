/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.AdaptiveKeepAlive;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.Probe;

/**
 * A configuration as the engine runs it: every setting in nanoseconds, what follows from them (the shortest
 * timeout, the coalescing window, whether reads and writes matter) and the ordered rules they compile to.
 * Made once by its {@link HeartbeatConfig}, which is the public value; the engine (the handler, the rules, the
 * monitor's engine) reads only this, and reaches the configuration it came from through {@link #owner}, to
 * report it ({@code configOf}) or derive another from it ({@link #withInterval}). Immutable.
 */
public final class Plan {

    /** A plan's natural coalescing window is its finest timeout / 2^this, rounded down to a power of two. */
    public static final int COALESCING_SHIFT = 6;

    /** The natural coalescing window for a finest timeout of {@code finestNanos} (see {@link #coalescingNanos}). */
    public static long coalescingWindow(long finestNanos) {
        return Long.highestOneBit(finestNanos >>> COALESCING_SHIFT);
    }

    /** The configuration this plan was made from. */
    public final HeartbeatConfig owner;
    /** What the handler decides and does under this configuration: one stateless instance per policy. */
    public final HandlerPolicy policy;
    public final long readerIdleNanos;
    public final long writerIdleNanos;
    public final long allIdleNanos;
    public final boolean observeOutput;
    public final long pingIntervalNanos;
    public final long pingTimeoutNanos;
    public final int maxMissedPings;
    public final double jitter;
    public final boolean pingWhenWriterIdle;
    /**
     * How pings are made and their answers recognised: a {@link PingFactoryProbe} for
     * {@link HeartbeatConfig#ping(PingFactory)}.
     */
    public final Probe probe;
    public final AckMode ackMode;
    /** The ping policy's reader-idle close (see {@link HeartbeatConfig.Builder#closeWhenReaderIdle}); 0 when off. */
    public final long readerCloseNanos;
    /** The adaptive answer timeout's bounds (see {@link HeartbeatConfig.Builder#adaptiveTimeout}); both 0 when off. */
    public final long adaptiveMinNanos;
    public final long adaptiveMaxNanos;
    /** Whether the handler must look at inbound messages for answers (the probe matches them). */
    public final boolean matchesAnswers;
    /** The shortest enabled timeout: how soon after activity the first check is due. */
    final long shortestNanos;
    /**
     * The natural coalescing window: the largest power of two of nanoseconds that is at most 1/64 of
     * the shortest timeout (ping timeouts included), so a deadline is delivered late by under 1.6% of
     * it. The monitor caps it (see {@code HeartbeatMonitor.Builder#maxCoalescing}).
     */
    public final long coalescingNanos;
    /** The per-peer interval tuner (see {@link HeartbeatConfig.Builder#adaptiveInterval}), or null. */
    final AdaptiveKeepAlive<java.net.SocketAddress> tuner;
    /** The lifecycle guards and the goodbye probe, or null for neither (see {@link Guards}). */
    public final Guards guards;
    /** Whether the policy itself has a timeout (a configuration may have only guards). */
    final boolean policyTracks;
    /** Whether reads matter to this configuration: the read path stamps only then. */
    final boolean tracksReads;
    /** Whether writes matter to this configuration: the write path listens only then. */
    final boolean tracksWrites;
    /**
     * The rules this configuration compiles to, in the order they are performed (see {@link Rule}):
     * the drain, the guards', the overload's, and the main policy last; made once, shared by every
     * channel of the configuration.
     */
    private final Rule[] rules;
    /** The rules that look at inbound messages (see {@link Rule#onInbound}); those of {@link #rules}. */
    private final Rule[] inboundRules;

    public Plan(HeartbeatConfig owner, HandlerPolicy policy, long readerIdleNanos, long writerIdleNanos,
            long allIdleNanos,
            boolean observeOutput, long pingIntervalNanos, long pingTimeoutNanos, int maxMissedPings, double jitter,
            boolean pingWhenWriterIdle, Probe probe, AckMode ackMode, long readerCloseNanos, long adaptiveMinNanos,
            long adaptiveMaxNanos, AdaptiveKeepAlive<java.net.SocketAddress> tuner, Guards guards) {
        this.owner = owner;
        this.policy = policy;
        this.readerIdleNanos = readerIdleNanos;
        this.writerIdleNanos = writerIdleNanos;
        this.allIdleNanos = allIdleNanos;
        this.observeOutput = observeOutput;
        this.pingIntervalNanos = pingIntervalNanos;
        this.pingTimeoutNanos = pingTimeoutNanos == 0 ? pingIntervalNanos : pingTimeoutNanos;
        this.maxMissedPings = maxMissedPings;
        this.jitter = jitter;
        this.pingWhenWriterIdle = pingWhenWriterIdle;
        this.probe = probe;
        this.ackMode = ackMode;
        this.readerCloseNanos = readerCloseNanos;
        this.adaptiveMinNanos = adaptiveMinNanos;
        this.adaptiveMaxNanos = adaptiveMaxNanos;
        this.matchesAnswers = probe != null && probe.matching() != Probe.Matching.NONE;
        long shortest = Long.MAX_VALUE;
        long[] timeouts = {readerIdleNanos, writerIdleNanos, allIdleNanos, pingIntervalNanos, readerCloseNanos};
        for (long t : timeouts) {
            if (t > 0) {
                shortest = Math.min(shortest, t);
            }
        }
        this.policyTracks = shortest != Long.MAX_VALUE;
        this.tuner = tuner;
        this.guards = guards;
        if (guards != null && guards.any()) {
            shortest = Math.min(shortest, guards.firstLookNanos());
        }
        this.shortestNanos = shortest;
        long finest = Math.min(shortest, pingTimeoutNanos > 0 ? pingTimeoutNanos : Long.MAX_VALUE);
        finest = Math.min(finest, adaptiveMinNanos > 0 ? adaptiveMinNanos : Long.MAX_VALUE);
        this.coalescingNanos = finest == Long.MAX_VALUE ? 0 : coalescingWindow(finest);
        this.tracksReads = policy.tracksReads(this);
        this.tracksWrites = policy.tracksWrites(this) || (guards != null && guards.writeStallNanos > 0);
        this.rules = compileRules();
        this.inboundRules = guards != null && guards.twoPhase ? new Rule[] {MaxAgeRule.INSTANCE} : new Rule[0];
    }

    /** The ordered list of rules this configuration uses (see {@link #rules}). */
    private Rule[] compileRules() {
        java.util.List<Rule> list = new java.util.ArrayList<>(6);
        list.add(DrainRule.INSTANCE); // every channel can be drained: a drain is terminal
        if (guards != null) {
            guards.addRules(list);
        }
        if (OverloadRule.applies(this)) {
            list.add(OverloadRule.INSTANCE);
        }
        if (policyTracks) {
            list.add(policy);
        }
        return list.toArray(new Rule[0]);
    }

    /** The rules of this configuration, in the order they are performed (shared: never changed). */
    public Rule[] rules() {
        return rules;
    }

    /** The rules that inspect inbound messages (shared: never changed). */
    Rule[] inboundRules() {
        return inboundRules;
    }

    /** Whether the channel needs a {@link GuardState}. */
    boolean hasGuardState() {
        return guards != null && guards.any();
    }

    /** Whether any timeout is enabled. */
    boolean tracksAnything() {
        return shortestNanos != Long.MAX_VALUE;
    }

    /** This plan with the ping interval {@code intervalNanos} ({@link HeartbeatConfig#withInterval}). */
    Plan withInterval(long intervalNanos) {
        ApiAccess api = ApiAccess.api();
        return api.planOf(api.withInterval(owner, intervalNanos));
    }

    /** This plan with its ping interval doubled ({@link HeartbeatConfig#withDoubledInterval}). */
    Plan withDoubledInterval() {
        ApiAccess api = ApiAccess.api();
        return api.planOf(api.withDoubledInterval(owner));
    }

    /** The configuration's own description. */
    @Override
    public String toString() {
        return owner.toString();
    }
}
