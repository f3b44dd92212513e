/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.RttEstimator;
import java.time.Duration;
import java.util.Objects;

/**
 * A channel's round-trip time as measured by its pings, in the terms of RFC 6298: the smoothed
 * round-trip time (SRTT) and the round-trip time variation (RTTVAR), from the answers to pings
 * (samples are the time from writing a ping to reading its matched answer, on the event loop).
 *
 * @param smoothed SRTT: an exponentially weighted mean of the samples (weight 1/8 to the newest)
 * @param variation RTTVAR: an exponentially weighted mean deviation (weight 1/4 to the newest)
 */
public record Rtt(Duration smoothed, Duration variation) {

    /**
     * Checks both values.
     *
     * @throws IllegalArgumentException if either is negative
     */
    public Rtt {
        Objects.requireNonNull(smoothed, "smoothed");
        Objects.requireNonNull(variation, "variation");
        if (smoothed.isNegative() || variation.isNegative()) {
            throw new IllegalArgumentException("an RTT cannot be negative: smoothed " + smoothed + ", variation "
                    + variation);
        }
    }

    /**
     * RFC 6298's retransmission-timeout formula, {@code smoothed + 4 * variation}, within
     * {@code [min, max]}: how long an answer may reasonably take.
     *
     * @throws IllegalArgumentException if {@code min} is negative or after {@code max}
     */
    public Duration timeout(Duration min, Duration max) {
        return Duration.ofNanos(RttEstimator.timeoutNanos(smoothed.toNanos(), variation.toNanos(),
                min.toNanos(), max.toNanos()));
    }
}
