/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.Objects;

/** What a {@link CloseVeto} decides about a close Heartbeat is about to make. Immutable. */
public final class CloseDecision {

    /** The close goes ahead as planned (the issue tracker's {@code CONTINUE}). */
    public static final CloseDecision PROCEED = new CloseDecision(0, false);
    /**
     * The close goes ahead at once: at a channel's maximum age this skips the goodbye and its grace;
     * elsewhere it is {@link #PROCEED}.
     */
    public static final CloseDecision CLOSE_NOW = new CloseDecision(0, true);

    private final long extendNanos;
    private final boolean now;

    private CloseDecision(long extendNanos, boolean now) {
        this.extendNanos = extendNanos;
        this.now = now;
    }

    /**
     * Keeps the channel open and asks again {@code delay} later (a delay under 10 ms: 10 ms later, when
     * the monitor's worker looks for the hold), if it is still due to close then
     * (traffic in between puts an idle close off as usual); the channel's other checks go on
     * meanwhile. Held closes of one episode add up to at most the configuration's
     * {@link HeartbeatConfig.Builder#maxCloseHold}, after which the close goes ahead without asking.
     *
     * @param delay at least 1 ms, at most {@link HeartbeatConfig#MAX_TIMEOUT}
     */
    public static CloseDecision extend(Duration delay) {
        Objects.requireNonNull(delay, "delay");
        if (delay.compareTo(HeartbeatConfig.MIN_TIMEOUT) < 0 || delay.compareTo(HeartbeatConfig.MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("extend needs a delay between 1 ms and 2^61 ns: " + delay);
        }
        return new CloseDecision(delay.toNanos(), false);
    }

    /** The delay of {@link #extend}, or zero for {@link #PROCEED} and {@link #CLOSE_NOW}. */
    public Duration delay() {
        return Duration.ofNanos(extendNanos);
    }

    long extendNanos() {
        return extendNanos;
    }

    boolean closesNow() {
        return now;
    }

    @Override
    public String toString() {
        return now ? "CLOSE_NOW" : extendNanos == 0 ? "PROCEED" : "extend(" + delay() + ")";
    }
}
