/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

/**
 * A test's source for the randomness Heartbeat draws per channel, so that a seeded run in virtual time
 * repeats exactly ({@code InteractionModelTest}). Set only on a manual monitor
 * ({@code HeartbeatMonitor.Builder#manual(Randomness)}); a monitor without one (every production monitor) draws
 * as it always has: {@code ThreadLocalRandom} for the max-age jitter and the first ping token, the
 * handler's identity hash for its share of the ping jitter. Called on the threads that draw them (the
 * event loop, the worker): a manual monitor runs both on the test's thread.
 */
public interface Randomness {

    /** The max-age jitter draw of a channel starting with, or switching to, its first guards: in [0, 1). */
    double ageJitterDraw();

    /** The token before the first ping of a channel whose probe matches answers ({@link ProbeState}). */
    long firstToken();

    /**
     * The number a channel's share of the ping jitter comes from (in production its handler's identity
     * hash): the same for every call with one handler, so that its share is fixed for its life.
     */
    int channelHash(HeartbeatHandler handler);
}
