/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.channel.ChannelHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;

/**
 * A server channel with the demo server's whole pipeline ({@link EchoPipeline}, Heartbeat idle
 * handling on a monitor in virtual time) and a client channel of the test's codecs, wired back to
 * back: {@link #exchange} carries the bytes each side wrote to the other. Time moves only by
 * {@link #advance}, one millisecond at a time, with a worker cycle after each. One thread.
 */
final class VirtualPair implements AutoCloseable {

    final ManualTicker ticker = new ManualTicker(0);
    final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
            .maxCoalescing(Duration.ZERO).build();
    final EchoPipeline echo;
    final EmbeddedChannel server;
    final EmbeddedChannel client;

    /**
     * @param config the server's settings (the idle impl must be heartbeat)
     * @param clientHandlers the client's pipeline: its codecs, then whatever the test reads from
     */
    VirtualPair(ServerConfig config, ChannelHandler... clientHandlers) {
        this.echo = EchoPipeline.withMonitor(config, monitor);
        this.server = new EmbeddedChannel(echo.initializer());
        this.client = new EmbeddedChannel(clientHandlers);
        monitor.runOnce(); // registers the server channel's handler
    }

    /** Carries what each side wrote to the other, until neither has anything left. */
    void exchange() {
        boolean moved = true;
        while (moved) { // until both are quiet
            boolean out = carry(server, client);
            moved = carry(client, server) || out;
        }
        if (!server.isOpen() && client.isOpen()) {
            client.close(); // the server's close reaches the client after its last bytes
        }
    }

    /** Runs {@code from}'s tasks and hands what it wrote to {@code to} (or drops it, if closed); whether any. */
    private static boolean carry(EmbeddedChannel from, EmbeddedChannel to) {
        boolean moved = false;
        from.runPendingTasks();
        for (Object b; (b = from.readOutbound()) != null; moved = true) {
            if (to.isOpen()) {
                to.writeInbound(b);
            } else {
                ReferenceCountUtil.release(b);
            }
        }
        return moved;
    }

    /** Moves virtual time on by {@code millis}, 1 ms at a time, running the worker and the exchange after each. */
    void advance(long millis) {
        for (long i = 0; i < millis; i++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
            exchange();
        }
    }

    @Override
    public void close() {
        server.finishAndReleaseAll();
        client.finishAndReleaseAll();
        monitor.close();
    }
}
