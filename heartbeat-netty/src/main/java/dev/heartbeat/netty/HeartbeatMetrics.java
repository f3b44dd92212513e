/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Binds a {@link HeartbeatMonitor}'s counters to a Micrometer {@link MeterRegistry}: moved to
 * {@link dev.heartbeat.netty.micrometer.HeartbeatMetrics}, to which this forwards (the same meters).
 * The only class of this package that uses Micrometer.
 *
 * @deprecated since 0.2: use {@link dev.heartbeat.netty.micrometer.HeartbeatMetrics}, which has the same
 *     constructors; this forwarder is removed in a later release.
 */
@Deprecated(since = "0.2", forRemoval = true)
public final class HeartbeatMetrics implements MeterBinder {

    private final dev.heartbeat.netty.micrometer.HeartbeatMetrics delegate;

    /**
     * Binds {@code monitor}'s counters, with no extra tags.
     *
     * @deprecated use {@link dev.heartbeat.netty.micrometer.HeartbeatMetrics#HeartbeatMetrics(HeartbeatMonitor)}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public HeartbeatMetrics(HeartbeatMonitor monitor) {
        this.delegate = new dev.heartbeat.netty.micrometer.HeartbeatMetrics(monitor);
    }

    /**
     * Binds {@code monitor}'s counters, each with {@code tags}.
     *
     * @deprecated use
     *     {@link dev.heartbeat.netty.micrometer.HeartbeatMetrics#HeartbeatMetrics(HeartbeatMonitor, Iterable)}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public HeartbeatMetrics(HeartbeatMonitor monitor, Iterable<Tag> tags) {
        this.delegate = new dev.heartbeat.netty.micrometer.HeartbeatMetrics(monitor, tags);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        delegate.bindTo(registry);
    }
}
