/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * The Micrometer binding of a {@link dev.heartbeat.netty.HeartbeatMonitor}'s counters:
 * {@link dev.heartbeat.netty.micrometer.HeartbeatMetrics}. The only package of heartbeat-netty that uses
 * Micrometer (an optional dependency: add {@code io.micrometer:micrometer-core} to your build to use it),
 * built on the public API and the {@link dev.heartbeat.netty.SampleSink} hook of
 * {@code dev.heartbeat.netty}.
 */
package dev.heartbeat.netty.micrometer;
