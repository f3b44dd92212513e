/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.embedded.EmbeddedChannel;

/** Moving virtual time for a monitor driven with {@link HeartbeatMonitor#runOnce()}. */
final class VirtualTime {

    private VirtualTime() {
    }

    /**
     * Moves {@code ticker} on by {@code millis} in steps of 1 ms (as a worker that keeps up would see
     * time), running a worker cycle after each, then the channels' pending tasks (the actions).
     */
    static void advance(ManualTicker ticker, HeartbeatMonitor monitor, long millis, List<EmbeddedChannel> channels) {
        long remaining = TimeUnit.MILLISECONDS.toNanos(millis);
        long step = TimeUnit.MILLISECONDS.toNanos(1);
        while (remaining > 0) {
            long s = Math.min(step, remaining);
            ticker.advance(s);
            remaining -= s;
            monitor.runOnce();
        }
        monitor.runOnce();
        for (EmbeddedChannel ch : channels) {
            ch.runPendingTasks();
        }
    }
}
