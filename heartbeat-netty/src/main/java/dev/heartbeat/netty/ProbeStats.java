/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

/**
 * The ping counters of one probe (by {@link Probe#name()}) in a {@link HeartbeatStats} snapshot,
 * totals since the monitor was built. Each written ping ends up counted at most once as acked or
 * missed; one still waiting for its answer is neither.
 *
 * @param probe the probe's name ({@code http2}, {@code websocket}, {@code mqtt}, {@code custom}, ...)
 * @param sent pings written successfully
 * @param acked pings answered in time, by the configuration's {@link AckMode}: counted when a
 *     matched answer is read, or when the worker next finds a ping answered by other traffic
 * @param missed pings whose timeout passed without an answer
 * @param failed pings whose probe threw or whose write failed; neither sent nor missed (a peer that
 *     stays silent after them is closed all the same, as {@link CloseReason#PING_TIMEOUT})
 */
public record ProbeStats(String probe, long sent, long acked, long missed, long failed) {
}
