/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.PingCounters;
import dev.heartbeat.core.Ticker;

/**
 * A configuration as one monitor runs it: a handler's one reference to both, so that it needs no
 * field of its own for its monitor (4 bytes a channel). Immutable, so any thread may read one it
 * finds; shared by the handlers of a monitor that use the same configuration (see
 * {@link MonitorEngine#bind}). What the hot path reads is copied here, so that it stays one load
 * from the handler, as it was through the monitor and the configuration.
 */
public final class BoundConfig {

    final MonitorEngine monitor;
    public final Plan config;
    /** The monitor's ticker. */
    final Ticker ticker;
    /** The monitor's coarse write clock, or null: writes are stamped with ticker readings. */
    final CoarseClock coarse;
    /** The configuration's {@code tracksReads}. */
    final boolean tracksReads;
    /** The configuration's {@code tracksWrites}. */
    final boolean tracksWrites;
    /** The configuration's {@code matchesAnswers}: the read path offers messages to the probe. */
    final boolean matchesAnswers;
    /**
     * Whether the read path looks at inbound messages: for the probe's answers ({@link #matchesAnswers})
     * or for the answer to a two-phase goodbye's ping.
     */
    final boolean inspectsReads;
    /** Whether the read path looks for the peer's {@code too_many_pings} (a ping configuration of such a probe). */
    final boolean watchesTooManyPings;
    /** Whether writability changes are stamped (the configuration has {@code maxUnwritable}). */
    final boolean watchesWritability;
    /** Whether a tracked write looks at the outbound buffer first (the configuration has {@code writeStall}). */
    final boolean watchesStall;
    /** The ping counters of the configuration's probe in this monitor; null unless it pings. */
    final PingCounters pings;

    BoundConfig(MonitorEngine monitor, Plan config) {
        this.monitor = monitor;
        this.config = config;
        this.ticker = monitor.ticker;
        this.coarse = monitor.coarseClock;
        this.tracksReads = config.tracksReads;
        this.tracksWrites = config.tracksWrites;
        this.matchesAnswers = config.matchesAnswers;
        this.watchesTooManyPings = config.policy instanceof PingPolicy && config.probe != null
                && config.probe.recognisesTooManyPings();
        this.inspectsReads = config.matchesAnswers || (config.guards != null && config.guards.twoPhase)
                || watchesTooManyPings;
        this.watchesWritability = config.guards != null && config.guards.maxUnwritableNanos > 0;
        this.watchesStall = config.guards != null && config.guards.writeStallNanos > 0;
        this.pings = config.probe == null ? null : monitor.pingCounters(config.probe);
    }
}
