/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

/**
 * How {@link HeartbeatConfig.Builder#maxAgeJitter} spreads each channel's maximum age around the
 * configured one, so that connections opened together do not all reach it together. Each channel
 * draws its own fraction {@code u}, uniform in {@code [0, 1)}, when it becomes active.
 */
public enum JitterMode {
    /** {@code age * (1 + fraction * (2u - 1))}: both ways, as gRPC-java's 0.9-1.1 x with fraction 0.1. */
    SYMMETRIC,
    /** {@code age * (1 - fraction * u)}: never longer than the age, as Reactor Netty's {@code maxLifeTimeVariance}. */
    DOWN_ONLY,
    /** {@code age * (1 + fraction * u)}: never shorter than the age, as Envoy's additive jitter. */
    UP_ONLY;

    /** The age of a channel that drew {@code u}, for {@code fraction} in [0, 1). */
    long apply(long ageNanos, double fraction, double u) {
        double factor = switch (this) {
            case SYMMETRIC -> 1 + fraction * (2 * u - 1);
            case DOWN_ONLY -> 1 - fraction * u;
            case UP_ONLY -> 1 + fraction * u;
        };
        return Math.max(1, (long) (ageNanos * factor));
    }

    /** The shortest age any channel can draw. */
    long shortest(long ageNanos, double fraction) {
        return this == UP_ONLY ? ageNanos : Math.max(1, (long) (ageNanos * (1 - fraction)));
    }
}
