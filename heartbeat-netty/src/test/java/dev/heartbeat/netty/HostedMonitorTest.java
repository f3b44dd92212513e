/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A monitor whose cycles run on an event loop ({@link HeartbeatMonitor.Builder#hostedBy}), on the real
 * clock: the host runs them; a blocked or shut-down host hands them to the worker's own thread (the
 * watchdog) and other loops' channels are still served; never early in either case. Waits poll
 * observable state against generous deadlines; nothing sleeps for a timer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostedMonitorTest {

    private static final Duration IDLE = Duration.ofMillis(150);

    private final List<EventExecutorGroup> groups = new ArrayList<>();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private HeartbeatMonitor monitor;

    @AfterEach
    void tearDown() {
        if (monitor != null) {
            monitor.close();
        }
        for (EventExecutorGroup g : groups) {
            g.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** Records when each close reason arrives and on which thread. */
    static final class CloseRecorder extends ChannelInboundHandlerAdapter {
        final ConcurrentLinkedQueue<Thread> threads = new ConcurrentLinkedQueue<>();
        volatile long closedAt;

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof HeartbeatCloseEvent) {
                long at = System.nanoTime();
                threads.add(Thread.currentThread()); // before the volatile store the test waits for: it then sees it
                closedAt = at;
            }
            ctx.fireUserEventTriggered(evt);
        }
    }

    private DefaultEventLoop loop(String name) {
        DefaultEventLoop loop = new DefaultEventLoop((ThreadFactory) r -> new Thread(r, name));
        groups.add(loop);
        return loop;
    }

    /** A channel whose Heartbeat handler runs on {@code loop}, idle-closed after {@link #IDLE}. */
    @SuppressWarnings("deprecation") // addLast(group, ...): deprecated in Netty 4.2, still what users call
    private CloseRecorder watched(EventExecutor loop) {
        CloseRecorder recorder = new CloseRecorder();
        EmbeddedChannel ch = new EmbeddedChannel();
        HeartbeatConfig cfg = HeartbeatConfig.closeWhenIdle().readerIdle(IDLE).build();
        ch.pipeline().addLast(loop, monitor.newHandler(cfg)).addLast(loop, recorder);
        channels.add(ch);
        return recorder;
    }

    private static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            assertTrue(end - System.nanoTime() > 0, "timed out waiting: " + what);
            Thread.sleep(5); // polling observable state, not waiting for a timer
        }
    }

    @Test
    void theHostLoopRunsTheCycles() throws InterruptedException {
        DefaultEventLoop host = loop("host");
        DefaultEventLoop other = loop("other");
        // A watchdog period far beyond the test: only the host can have run the cycles.
        monitor = HeartbeatMonitor.builder().hostedBy(host).hostWatchdog(Duration.ofMinutes(1)).build().startWorker();
        long start = System.nanoTime();
        CloseRecorder onHost = watched(host);
        CloseRecorder onOther = watched(other);
        awaitTrue("both idle channels closed", () -> onHost.closedAt != 0 && onOther.closedAt != 0);
        assertTrue(onHost.closedAt - start >= IDLE.toNanos(), "never early");
        assertTrue(onOther.closedAt - start >= IDLE.toNanos(), "never early");
        assertEquals("host", onHost.threads.peek().getName(), "actions run on the channel's own loop");
        assertEquals("other", onOther.threads.peek().getName());
        assertEquals(0, monitor.stats().timer().hostTakeovers());
        assertTrue(monitor.stats().timer().hostedNanos() > 0);
        awaitTrue("both released", () -> monitor.stats().channels() == 0);
    }

    /**
     * Expected: while the host loop is blocked, the watchdog runs the cycles, so a channel of another
     * loop is still closed (late by up to about a watchdog period, never early) and the take-over is
     * counted; once the host runs again it gets the cycles back, and its own channel, whose action
     * waited for it, is closed on its own thread.
     */
    @Test
    void aBlockedHostHandsTheCyclesToTheWatchdog() throws InterruptedException {
        DefaultEventLoop host = loop("host");
        DefaultEventLoop other = loop("other");
        monitor = HeartbeatMonitor.builder().hostedBy(host).hostWatchdog(Duration.ofMillis(20)).build().startWorker();
        CloseRecorder onHost = watched(host);
        host.submit(() -> { }).syncUninterruptibly(); // registered while the host still runs
        CountDownLatch unblock = new CountDownLatch(1);
        host.execute(() -> {
            try {
                unblock.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            long start = System.nanoTime();
            CloseRecorder onOther = watched(other);
            awaitTrue("the other loop's idle channel closed", () -> onOther.closedAt != 0);
            assertTrue(onOther.closedAt - start >= IDLE.toNanos(), "never early");
            assertTrue(monitor.stats().timer().hostTakeovers() >= 1, "the watchdog took over");
            assertEquals(0, onHost.closedAt, "the host's own channel waits for its loop");
        } finally {
            unblock.countDown();
        }
        awaitTrue("the host's channel closed once its loop runs", () -> onHost.closedAt != 0);
        assertEquals("host", onHost.threads.peek().getName());
        long hosted = monitor.stats().timer().hostedNanos();
        CloseRecorder later = watched(other);
        awaitTrue("a later channel closed", () -> later.closedAt != 0);
        assertTrue(monitor.stats().timer().hostedNanos() > hosted, "the host runs cycles again");
    }

    @Test
    void aHostThatShutsDownLeavesTheCyclesToTheWatchdog() throws InterruptedException {
        DefaultEventLoop host = loop("host");
        DefaultEventLoop other = loop("other");
        monitor = HeartbeatMonitor.builder().hostedBy(host).hostWatchdog(Duration.ofMillis(20)).build().startWorker();
        host.shutdownGracefully(0, 0, TimeUnit.SECONDS).syncUninterruptibly();
        long start = System.nanoTime();
        CloseRecorder onOther = watched(other);
        awaitTrue("the other loop's idle channel closed", () -> onOther.closedAt != 0);
        assertTrue(onOther.closedAt - start >= IDLE.toNanos(), "never early");
        assertTrue(monitor.stats().timer().hostTakeovers() >= 1);
        assertTrue(monitor.close(Duration.ofSeconds(10)), "the worker still closes");
    }

    @Test
    void badHostSettingsAreRefused() {
        HeartbeatMonitor.Builder b = HeartbeatMonitor.builder();
        assertThrows(NullPointerException.class, () -> b.hostedBy(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> b.hostWatchdog(Duration.ofMillis(0)));
        assertTrue(e.getMessage().contains("watchdog") && e.getMessage().contains("PT0S"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.hostWatchdog(Duration.ofMinutes(2)));
        assertThrows(NullPointerException.class, () -> b.hostWatchdog(null));
    }
}
