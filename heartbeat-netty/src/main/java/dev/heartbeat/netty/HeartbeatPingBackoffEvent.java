/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.Objects;

/**
 * Fired down the pipeline when the peer told a pinging channel that it pings too often (an HTTP/2
 * GOAWAY {@code ENHANCE_YOUR_CALM} {@code too_many_pings}, a WebSocket Close 1008
 * {@code too_many_pings}) and Heartbeat doubled the channel's ping interval, as gRPC clients do. The
 * peer is usually closing the connection: remember the interval for the next one (for example with
 * {@code AdaptiveKeepAlive.tooManyPings(peer)}).
 */
public final class HeartbeatPingBackoffEvent {

    private final Duration interval;

    HeartbeatPingBackoffEvent(Duration interval) {
        this.interval = Objects.requireNonNull(interval, "interval");
    }

    /** The channel's ping interval from now on. */
    public Duration interval() {
        return interval;
    }

    @Override
    public String toString() {
        return "HeartbeatPingBackoffEvent(interval " + interval + ")";
    }
}
