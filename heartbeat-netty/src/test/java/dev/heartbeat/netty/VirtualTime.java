/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
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

    /** Records the user events that reach it, and when (virtual ms since its world was made). */
    static class Recorder extends ChannelInboundHandlerAdapter {
        final List<Object> events = new ArrayList<>();
        final List<Long> times = new ArrayList<>();
        private final World world;

        Recorder(World world) {
            this.world = world;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
            times.add(world.elapsedMillis());
        }
    }

    /**
     * A test's virtual world: a ticker that starts {@code secondsBeforeWrap} seconds before nanoTime
     * wraps, a monitor on it without timer slack (tests assert exact delivery times), driven with
     * runOnce, and the channels to run and release. Close it after the test.
     */
    static final class World implements AutoCloseable {
        final ManualTicker ticker;
        final HeartbeatMonitor monitor;
        final List<EmbeddedChannel> channels = new ArrayList<>();

        /** The ticker's time when the world was made: {@link #elapsedMillis} counts from it. */
        final long start;

        World(long secondsBeforeWrap) {
            this(secondsBeforeWrap, b -> b);
        }

        /** The same, with the monitor's builder given to {@code tune} before it builds. */
        World(long secondsBeforeWrap, java.util.function.UnaryOperator<HeartbeatMonitor.Builder> tune) {
            ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(secondsBeforeWrap));
            start = ticker.nanoTime();
            monitor = tune.apply(HeartbeatMonitor.builder().manual().ticker(ticker).maxCoalescing(Duration.ZERO))
                    .build();
        }

        /** A channel of {@code handlers} (a Heartbeat handler among them), registered with the worker. */
        EmbeddedChannel channel(io.netty.channel.ChannelHandler... handlers) {
            EmbeddedChannel ch = new EmbeddedChannel(handlers);
            channels.add(ch);
            monitor.runOnce();
            return ch;
        }

        /**
         * Moves time on by {@code millis} in 1 ms steps, running a worker cycle and then the channels'
         * pending tasks after each: an event loop that keeps up, so actions happen at their times.
         */
        void step(long millis) {
            for (long i = 0; i < millis; i++) {
                advance(1);
            }
        }

        /** Virtual milliseconds since the world was made. */
        long elapsedMillis() {
            return (ticker.nanoTime() - start) / 1_000_000;
        }

        /** A handler that records the user events reaching it, and when (see {@link Recorder}). */
        Recorder recorder() {
            return new Recorder(this);
        }

        /** {@link VirtualTime#advance} for this world's channels. */
        void advance(long millis) {
            VirtualTime.advance(ticker, monitor, millis, channels);
        }

        @Override
        public void close() {
            for (EmbeddedChannel ch : channels) {
                ch.finishAndReleaseAll();
            }
            monitor.close();
        }
    }
}
