/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

import dev.heartbeat.core.TimerStats;

/**
 * A snapshot of a {@link HeartbeatMonitor}'s counters, totals since it was built. Each value is
 * current when read; the set is not atomic.
 *
 * @param channels channels whose handler is active now
 * @param readerIdleEvents reader idle events fired (event policy)
 * @param writerIdleEvents writer idle events fired (event policy)
 * @param allIdleEvents all-idle events fired (event policy)
 * @param closedReaderIdle channels closed for reader idleness (close policies)
 * @param closedWriterIdle channels closed for writer idleness (close policies)
 * @param closedAllIdle channels closed for all idleness (close policies)
 * @param closedPingTimeout channels closed after too many unanswered pings (ping policy)
 * @param pingsSent pings written successfully (ping policy)
 * @param pingWriteFailures pings whose factory threw or whose write failed; they count as neither
 *     sent nor missed, and the ping policy tries again after the ping timeout
 * @param stallRechecks checks deferred because the worker was late by more than the stall threshold
 * @param coarseClockLateSpells times the worker, late, published the coarse write clock's next time after the last
 *     one had run out ({@link HeartbeatMonitor.Builder#coarseWriteClock}): the writes stamped meanwhile are judged as
 *     of when it published again, so checks on them came later than the resolution alone makes them, never sooner.
 *     A clock let go while the monitor had nothing to judge, and taken back, is not counted. 0 without the clock
 * @param actionFailures actions that threw on the event loop (a downstream handler)
 * @param dispatchRejected action batches an event loop refused because it was shutting down
 * @param dispatchFailures hand-offs of an action batch whose executor threw otherwise (an
 *     {@code OutOfMemoryError}, say); the batch is handed over again after the next worker cycle
 * @param staleVerdicts actions dropped on the event loop because they were decided under a
 *     configuration the channel no longer had
 * @param unmonitoredChannels channels that became active (or were reconfigured) after the monitor
 *     was closed, and so have no idle detection, or that became active on a monitor neither started
 *     nor {@code manual()}, which have none until it starts
 * @param workerCpuNanos CPU time of the worker thread and of the cycles a host ran for it (an estimate:
 *     see {@code TimerStats#hostedNanos}), or -1 if not running or not measurable
 * @param timer the wheel and worker counters: entries, expirations, re-arms, queue depth, lateness...
 * @param closedByReason channels Heartbeat closed, by reason (every reason present; see {@link #closed})
 * @param pingsByProbe the ping counters of each probe name the monitor has seen configured, by name
 *     (sorted); empty if no configuration pings
 */
public record HeartbeatStats(
        long channels,
        long readerIdleEvents,
        long writerIdleEvents,
        long allIdleEvents,
        long closedReaderIdle,
        long closedWriterIdle,
        long closedAllIdle,
        long closedPingTimeout,
        long pingsSent,
        long pingWriteFailures,
        long stallRechecks,
        long coarseClockLateSpells,
        long actionFailures,
        long dispatchRejected,
        long dispatchFailures,
        long staleVerdicts,
        long unmonitoredChannels,
        long workerCpuNanos,
        TimerStats timer,
        Map<CloseReason, Long> closedByReason,
        Map<String, ProbeStats> pingsByProbe) {

    /** Keeps an unmodifiable copy of {@code closedByReason}, which must count every {@link CloseReason}. */
    public HeartbeatStats {
        closedByReason = Collections.unmodifiableMap(new EnumMap<>(closedByReason));
        if (closedByReason.size() != CloseReason.values().length) {
            throw new IllegalArgumentException("closedByReason must count every CloseReason: " + closedByReason);
        }
        pingsByProbe = Collections.unmodifiableMap(new TreeMap<>(pingsByProbe));
    }

    /** The ping counters of the probe named {@code probe}, all zero if no configuration used it. */
    public ProbeStats pings(String probe) {
        ProbeStats p = pingsByProbe.get(probe);
        return p != null ? p : new ProbeStats(probe, 0, 0, 0, 0);
    }

    /** Channels Heartbeat closed for {@code reason}. */
    public long closed(CloseReason reason) {
        return closedByReason.get(reason);
    }

    /** Channels Heartbeat closed, for any reason. */
    public long closedTotal() {
        long total = 0;
        for (long n : closedByReason.values()) {
            total += n;
        }
        return total;
    }
}
