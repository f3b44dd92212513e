/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * A model check of the promise behind {@code closeWhenReaderIdle}'s build check: a ping configuration
 * driven by read silence that builds never closes a silent channel before its first ping, whatever its
 * jitter. Random configurations near the boundary (seeded; {@code -Dheartbeat.seed=N} replays a run),
 * 20 silent channels each, on a monitor with the default tick and coalescing, in virtual time moved in
 * 1 ms steps (a worker that keeps up).
 */
class FirstPingModelTest {

    private static final int CONFIGS = Integer.getInteger("heartbeat.firstPingConfigs", 150);
    private static final int CHANNELS = 20;

    @Test
    void aConfigurationThatBuildsNeverClosesASilentChannelBeforeItsFirstPing() {
        long seed = Long.getLong("heartbeat.seed", System.nanoTime());
        System.out.println("FirstPingModelTest: seed " + seed + " (replay with -Dheartbeat.seed=" + seed + ")");
        SplittableRandom r = new SplittableRandom(seed);
        int built = 0;
        int refused = 0;
        int channels = 0;
        for (int i = 0; i < CONFIGS; i++) {
            long intervalMs = 10L + r.nextInt(1000);
            double jitter = r.nextInt(4) == 0 ? 0 : r.nextDouble();
            // From just past the interval to past the latest first ping (the jittered interval, a coalescing
            // window of up to 1/64 of it and two ticks): both sides of the boundary.
            long closeMs = intervalMs + 1 + r.nextLong(6 + (long) (intervalMs * (jitter * 1.15 + 0.05)));
            HeartbeatConfig cfg;
            try {
                cfg = HeartbeatConfig.ping(ch -> "PING").interval(Duration.ofMillis(intervalMs)).jitter(jitter)
                        .closeWhenReaderIdle(Duration.ofMillis(closeMs)).build();
            } catch (IllegalStateException e) {
                refused++;
                continue;
            }
            built++;
            String failure = run(cfg);
            if (failure != null) {
                fail("seed " + seed + ", config " + i + " (interval " + intervalMs + " ms, jitter " + jitter
                        + ", closeWhenReaderIdle " + closeMs + " ms): " + failure);
            }
            channels += CHANNELS;
        }
        System.out.println("FirstPingModelTest: " + built + " built (" + channels + " silent channels, each pinged "
                + "before any close), " + refused + " refused");
        assertTrue(built > CONFIGS / 10 && refused > CONFIGS / 10, built + " built, " + refused + " refused");
    }

    /** Runs 20 silent channels of {@code cfg} until each is pinged or closed: a message if one closed first. */
    private static String run(HeartbeatConfig cfg) {
        ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(1)); // wraps on the way
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        List<EmbeddedChannel> open = new ArrayList<>();
        try {
            for (int c = 0; c < CHANNELS; c++) {
                open.add(new EmbeddedChannel(monitor.newHandler(cfg)));
            }
            monitor.runOnce();
            long limit = cfg.closeWhenReaderIdle().toMillis() + cfg.pingInterval().toMillis() + 100;
            int closedFirst = 0;
            long firstAt = -1;
            for (long ms = 1; ms <= limit && !open.isEmpty(); ms++) {
                ticker.advance(1, TimeUnit.MILLISECONDS);
                monitor.runOnce();
                for (int c = open.size() - 1; c >= 0; c--) {
                    EmbeddedChannel ch = open.get(c);
                    ch.runPendingTasks();
                    // A closed channel writes nothing: a ping in its outbound was written before any close.
                    boolean pinged = ch.readOutbound() != null;
                    if (pinged || !ch.isOpen()) {
                        if (!pinged) {
                            closedFirst++;
                            firstAt = firstAt < 0 ? ms : firstAt;
                        }
                        ch.finishAndReleaseAll();
                        open.remove(c);
                    }
                }
            }
            if (closedFirst > 0) {
                return closedFirst + " of " + CHANNELS + " silent channels closed before their first ping (the first "
                        + "at " + firstAt + " ms)";
            }
            return open.isEmpty() ? null : open.size() + " channels neither pinged nor closed by " + limit + " ms";
        } finally {
            open.forEach(EmbeddedChannel::finishAndReleaseAll);
            monitor.close();
        }
    }
}
