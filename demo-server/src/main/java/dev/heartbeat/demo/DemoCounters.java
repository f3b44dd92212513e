/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.util.concurrent.atomic.LongAdder;

/**
 * The server's own counters, bumped on event loops (LongAdder: no contention between loops). With
 * {@code --idle-impl netty} the A/B handlers also count idle events, pings and idle closes here;
 * with Heartbeat those come from the monitor's {@code HeartbeatStats}.
 */
public final class DemoCounters {

    final LongAdder open = new LongAdder();
    final LongAdder accepted = new LongAdder();
    final LongAdder linesEchoed = new LongAdder();
    final LongAdder pongsSent = new LongAdder();
    final LongAdder invalidUtf8Lines = new LongAdder();
    final LongAdder connectionErrors = new LongAdder();
    final LongAdder closedMaxLine = new LongAdder();

    // A/B handlers (netty impl) only.
    final LongAdder readerIdleEvents = new LongAdder();
    final LongAdder writerIdleEvents = new LongAdder();
    final LongAdder allIdleEvents = new LongAdder();
    final LongAdder pingsSent = new LongAdder();
    final LongAdder closedReaderIdle = new LongAdder();
    final LongAdder closedPingTimeout = new LongAdder();

    /** Connections open now. */
    public long openConnections() {
        return open.sum();
    }

    /** Connections accepted since start. */
    public long acceptedConnections() {
        return accepted.sum();
    }

    /** Lines echoed (a PING answered PONG is not an echo). */
    public long linesEchoed() {
        return linesEchoed.sum();
    }

    /** Connections closed for a line over the limit. */
    public long closedMaxLine() {
        return closedMaxLine.sum();
    }
}
