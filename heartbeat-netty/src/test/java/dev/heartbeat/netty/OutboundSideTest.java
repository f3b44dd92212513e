/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOutboundHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A handler is on the outbound side of the pipeline only where its configuration tracks writes, and a
 * handler made inbound-only still tracks writes exactly once it is reconfigured to (through its
 * {@link WriteTracker}). Virtual time, {@link EmbeddedChannel}.
 */
class OutboundSideTest {

    /** An action may come one tick (1.05 ms) after its deadline; the test clock moves in 1 ms steps. */
    private static final long LATE = 3;

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(30)); // wraps
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().ticker(ticker).maxCoalescing(Duration.ZERO)
            .build();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        monitor.close();
    }

    private EmbeddedChannel channel(ChannelHandler... handlers) {
        EmbeddedChannel ch = new EmbeddedChannel(handlers);
        channels.add(ch);
        return ch;
    }

    private void advance(long millis) {
        VirtualTime.advance(ticker, monitor, millis, channels);
    }

    private static HeartbeatConfig readerOnly() {
        return HeartbeatHandlerTest.events(1_000, 0, 0);
    }

    private static HeartbeatConfig writerIdle() {
        return HeartbeatHandlerTest.events(0, 1_000, 0);
    }

    private static int trackers(ChannelPipeline pipeline) {
        int n = 0;
        for (Map.Entry<String, ChannelHandler> e : pipeline) {
            n += e.getValue() instanceof WriteTracker ? 1 : 0;
        }
        return n;
    }

    @Test
    void onlyAConfigurationThatTracksWritesMakesAnOutboundHandler() {
        assertFalse(monitor.newHandler(readerOnly()) instanceof ChannelOutboundHandler, "reader idle");
        assertFalse(monitor.newHandler(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1)).build())
                instanceof ChannelOutboundHandler, "close on reader idle");
        assertFalse(monitor.newHandler(HeartbeatConfig.ping(ctx -> "PING").interval(Duration.ofSeconds(1)).build())
                instanceof ChannelOutboundHandler, "ping on silence");
        assertInstanceOf(ChannelOutboundHandler.class, monitor.newHandler(writerIdle()), "writer idle");
        assertInstanceOf(ChannelOutboundHandler.class, monitor.newHandler(HeartbeatHandlerTest.events(0, 0, 1_000)),
                "all idle");
        assertInstanceOf(ChannelOutboundHandler.class, monitor.newHandler(HeartbeatConfig.ping(ctx -> "PING")
                .interval(Duration.ofSeconds(1)).whenWriterIdle().build()), "client keep-alive");
    }

    @Test
    void anInboundHandlerReconfiguredToWriterIdleCountsTheWritesThatFollow() {
        HeartbeatHandlerTest.Recorder r = new HeartbeatHandlerTest.Recorder();
        EmbeddedChannel ch = channel(monitor.newHandler(readerOnly()), r);
        assertTrue(monitor.reconfigure(ch, writerIdle()));
        assertEquals(1, trackers(ch.pipeline()));

        advance(600);
        ch.writeAndFlush("x"); // completes at once on an EmbeddedChannel
        advance(999);
        assertTrue(r.events.isEmpty(), "never early: the write 999 ms ago counts, " + r.events);
        advance(1 + LATE);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), r.events);
    }

    @Test
    void aVoidPromiseWriteAfterTheReconfigurationCountsAtItsFlush() {
        HeartbeatHandlerTest.Recorder r = new HeartbeatHandlerTest.Recorder();
        EmbeddedChannel ch = channel(monitor.newHandler(readerOnly()), r);
        monitor.reconfigure(ch, writerIdle());

        advance(600);
        ch.write("x", ch.voidPromise());
        advance(300);
        ch.flush(); // the write is counted now, 900 ms after the reconfiguration
        advance(999);
        assertTrue(r.events.isEmpty(), "never early: counted at its flush, " + r.events);
        advance(1 + LATE);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), r.events);
    }

    @Test
    void theTrackerIsAddedOnceAndLeavesWithTheHandler() {
        ChannelHandler handler = monitor.newHandler(readerOnly());
        EmbeddedChannel ch = channel(handler, new HeartbeatHandlerTest.Sink());
        monitor.reconfigure(ch, writerIdle());
        monitor.reconfigure(ch, readerOnly());
        monitor.reconfigure(ch, HeartbeatHandlerTest.events(0, 0, 2_000));
        assertEquals(1, trackers(ch.pipeline()), "one tracker whatever the reconfigurations");

        ch.pipeline().remove(handler);
        assertEquals(0, trackers(ch.pipeline()), "removed with its handler");
        assertNull(ch.pipeline().get(WriteTracker.class));
        ch.writeAndFlush("x"); // nothing of Heartbeat's left on the path
        assertNotNull(ch.readOutbound());
    }

    @Test
    void aTrackerOfAConfigurationThatNoLongerTracksWritesPassesThemOn() {
        HeartbeatHandlerTest.Recorder r = new HeartbeatHandlerTest.Recorder();
        EmbeddedChannel ch = channel(monitor.newHandler(readerOnly()), r);
        monitor.reconfigure(ch, writerIdle());
        monitor.reconfigure(ch, readerOnly());

        ch.writeAndFlush("x");
        assertEquals("x", ch.readOutbound());
        advance(1_000 + LATE);
        assertEquals(1, r.events.size(), "the reader idle of the configuration in force: " + r.events);
        assertEquals(io.netty.handler.timeout.IdleState.READER_IDLE, ((io.netty.handler.timeout.IdleStateEvent)
                r.events.get(0)).state());
    }

    @Test
    void aDuplexHandlerNeedsNoTracker() {
        EmbeddedChannel ch = channel(monitor.newHandler(writerIdle()), new HeartbeatHandlerTest.Sink());
        monitor.reconfigure(ch, HeartbeatHandlerTest.events(0, 2_000, 0));
        assertEquals(0, trackers(ch.pipeline()));
    }
}
