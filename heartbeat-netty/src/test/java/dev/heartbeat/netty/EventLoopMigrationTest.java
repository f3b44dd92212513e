/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.READER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.heartbeat.core.ManualTicker;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A channel that is deregistered from its event loop and registered on another one keeps its
 * Heartbeat: idle events, idle closes and pings are carried out on the new event loop's thread, and
 * the channel's wheel entry leaves when the channel closes. Mostly in virtual time (an unstarted
 * monitor on a {@link ManualTicker}, driven with {@link HeartbeatMonitor#runOnce()}) on the local
 * transport with real event loop threads; two tests use a real worker.
 */
class EventLoopMigrationTest {

    /** An action may come one tick (1.05 ms) after its deadline; virtual time moves in 1 ms steps. */
    private static final long LATE = 3;
    /** The longest any real-time wait may take before the test fails. */
    private static final long WAIT_SECONDS = 10;

    private static final HeartbeatConfig EVENTS_1S = HeartbeatConfig.events()
            .readerIdle(Duration.ofSeconds(1)).build();
    private static final HeartbeatConfig CLOSE_1S = HeartbeatConfig.closeWhenIdle()
            .readerIdle(Duration.ofSeconds(1)).build();

    /** Starts near the end of the long range, so virtual time wraps during the tests. */
    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(2));
    // No timer slack: these tests assert exact delivery times (CoalescingTest covers the default).
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
            .maxCoalescing(Duration.ZERO).build();
    private final DefaultEventLoop clientLoop = new DefaultEventLoop();
    private final DefaultEventLoop loopA = new DefaultEventLoop();
    private final DefaultEventLoop loopB = new DefaultEventLoop();
    private final List<EventLoopGroup> groups = new ArrayList<>(List.of(clientLoop, loopA, loopB));
    private final List<HeartbeatMonitor> monitors = new ArrayList<>(List.of(monitor));
    private final List<Channel> channels = new ArrayList<>();
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();

    @AfterEach
    void tearDown() {
        for (Channel ch : channels) {
            ch.close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        for (EventLoopGroup group : groups) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
        for (EventLoopGroup group : groups) {
            group.terminationFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        for (HeartbeatMonitor m : monitors) {
            m.close();
        }
    }

    // ------------------------------------------------------------------ probes

    /** What a probe saw, and on which thread. */
    record Seen(Object what, Thread thread, boolean inEventLoop) {
    }

    /** After the Heartbeat handler: records the user events and reads that reach it. */
    static final class Probe extends ChannelInboundHandlerAdapter {
        final BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            seen.add(new Seen(evt, Thread.currentThread(), ctx.executor().inEventLoop()));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            seen.add(new Seen(msg, Thread.currentThread(), ctx.executor().inEventLoop()));
            ReferenceCountUtil.release(msg);
        }
    }

    /** Before the Heartbeat handler: records the close it sends toward the head. */
    static final class CloseWatch extends ChannelOutboundHandlerAdapter {
        final BlockingQueue<Seen> closes = new LinkedBlockingQueue<>();

        @Override
        public void close(ChannelHandlerContext ctx, ChannelPromise promise) throws Exception {
            closes.add(new Seen("close", Thread.currentThread(), ctx.executor().inEventLoop()));
            super.close(ctx, promise);
        }
    }

    /**
     * A client, the server-side child channel that carries the Heartbeat handler, and the child's
     * probes (kept here: a closed channel's pipeline lets go of its handlers).
     */
    record Link(Channel client, Channel child, Probe probe, CloseWatch watch) {
        Link(Channel client, Channel child) {
            this(client, child, child.pipeline().get(Probe.class), child.pipeline().get(CloseWatch.class));
        }
    }

    private ChannelInitializer<Channel> childInit(HeartbeatMonitor m, HeartbeatConfig config) {
        return new ChannelInitializer<Channel>() {
            @Override
            protected void initChannel(Channel ch) {
                ch.pipeline().addLast("watch", new CloseWatch());
                ch.pipeline().addLast("heartbeat", m.newHandler(config));
                ch.pipeline().addLast("probe", new Probe());
                accepted.add(ch);
            }
        };
    }

    // ------------------------------------------------------------------ local transport plumbing

    /** A local server whose children live on {@link #loopA}. */
    private Channel localServer(HeartbeatMonitor m, HeartbeatConfig config) {
        Channel server = new ServerBootstrap()
                .group(loopA, loopA)
                .channel(LocalServerChannel.class)
                .childHandler(childInit(m, config))
                .bind(LocalAddress.ANY).syncUninterruptibly().channel();
        channels.add(server);
        return server;
    }

    /** Connects a client and waits until its child channel is registered and active on {@link #loopA}. */
    private Link connect(Channel server) throws InterruptedException {
        Channel client = new Bootstrap()
                .group(clientLoop)
                .channel(LocalChannel.class)
                .handler(new ChannelInboundHandlerAdapter())
                .connect(server.localAddress()).syncUninterruptibly().channel();
        channels.add(client);
        Channel child = accepted.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(child, "the server accepted the connection");
        channels.add(child);
        loopA.submit(() -> { }).syncUninterruptibly(); // registration (and Heartbeat's start) is done by then
        assertTrue(child.isActive());
        assertSame(loopA, child.eventLoop());
        return new Link(client, child);
    }

    /** Deregisters the channel from its loop and registers it on {@code target}. */
    private static void migrate(Channel ch, EventLoop target) {
        assertTrue(ch.deregister().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertFalse(ch.isRegistered());
        assertTrue(ch.isActive(), "deregistering does not disconnect");
        Future<Void> registered = target.register(ch);
        assertTrue(registered.awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(registered.isSuccess(), () -> "registered on the new loop: " + registered.cause());
        assertTrue(ch.isRegistered());
        assertSame(target, ch.eventLoop());
    }

    private static Thread threadOf(EventLoop loop) {
        return loop.submit(Thread::currentThread).syncUninterruptibly().getNow();
    }

    /** Moves virtual time in 1 ms steps, running the worker after each, then lets the event loops catch up. */
    private void advance(long millis) {
        step(millis);
        settle();
    }

    /** Moves virtual time in 1 ms steps, running the worker after each; does not wait for the event loops. */
    private void step(long millis) {
        for (long i = 0; i < millis; i++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
        monitor.runOnce();
    }

    /**
     * Waits until every task the worker handed to an event loop has run: each loop runs tasks in
     * order, and an action that hops from the old loop to the new one is queued there before the
     * second round's marker.
     */
    private void settle() {
        for (int round = 0; round < 2; round++) {
            for (EventLoop loop : List.of(loopA, loopB, clientLoop)) {
                assertTrue(loop.submit(() -> { }).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
            }
        }
    }

    private static Seen next(BlockingQueue<Seen> queue, String what) throws InterruptedException {
        Seen s = queue.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        if (s == null) {
            fail("nothing seen within " + WAIT_SECONDS + " s: expected " + what);
        }
        return s;
    }

    private static void assertSeenOn(Thread expected, Object what, Seen seen) {
        assertEquals(what, seen.what());
        assertSame(expected, seen.thread(), () -> what + " on " + seen.thread().getName() + ", expected "
                + expected.getName());
        assertTrue(seen.inEventLoop(), "inside the channel's own event loop");
    }

    private static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + WAIT_SECONDS + " s: " + what);
            }
            Thread.sleep(5);
        }
    }

    // ------------------------------------------------------------------ virtual time

    @Test
    void idleEventsFollowTheChannelToItsNewEventLoop() throws Exception {
        Channel server = localServer(monitor, EVENTS_1S);
        Thread threadA = threadOf(loopA);
        Thread threadB = threadOf(loopB);
        Link moving = connect(server);
        Link staying = connect(server);
        monitor.runOnce();
        assertEquals(2, monitor.stats().timer().entries());

        advance(1000 + LATE);
        assertSeenOn(threadA, FIRST_READER_IDLE_STATE_EVENT, next(moving.probe().seen, "first event, old loop"));
        assertSeenOn(threadA, FIRST_READER_IDLE_STATE_EVENT, next(staying.probe().seen, "first event"));

        migrate(moving.child(), loopB);
        assertEquals(2, monitor.stats().channels(), "registering again does not count the channel twice");

        advance(1000);
        assertSeenOn(threadB, READER_IDLE_STATE_EVENT, next(moving.probe().seen, "second event, new loop"));
        assertSeenOn(threadA, READER_IDLE_STATE_EVENT, next(staying.probe().seen, "second event"));

        // Reads stamped on the new loop count: the next event comes a full timeout after the read, as a first one.
        assertTrue(moving.client().writeAndFlush("after the move").awaitUninterruptibly(WAIT_SECONDS,
                TimeUnit.SECONDS));
        assertSeenOn(threadB, "after the move", next(moving.probe().seen, "the read, on the new loop"));
        settle(); // the read is stamped at channelReadComplete, just after the probe saw it
        advance(999);
        assertTrue(moving.probe().seen.isEmpty(), () -> "never early: " + moving.probe().seen);
        advance(1 + LATE);
        assertSeenOn(threadB, FIRST_READER_IDLE_STATE_EVENT, next(moving.probe().seen, "event after the read"));
        assertSeenOn(threadA, READER_IDLE_STATE_EVENT, next(staying.probe().seen, "third event"));
        assertTrue(moving.probe().seen.isEmpty() && staying.probe().seen.isEmpty(), "nothing else");
        assertEquals(6, monitor.stats().readerIdleEvents());

        // Closing the migrated channel takes its entry out of the wheel; the other one stays.
        assertTrue(moving.client().close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(moving.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        settle(); // channelInactive, where Heartbeat lets go, runs just after the close future completes
        monitor.runOnce();
        assertEquals(1, monitor.stats().timer().entries(), "only the channel that stayed is left in the wheel");
        assertEquals(1, monitor.stats().channels());
        for (int i = 0; i < 3; i++) {
            advance(1000); // a period at a time: actions the loop has not run yet merge with newer ones
        }
        assertTrue(moving.probe().seen.isEmpty(), "a closed channel gets no events");
        assertEquals(3, staying.probe().seen.size(), "the other channel goes on");

        assertTrue(staying.client().close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(staying.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        settle();
        monitor.runOnce();
        HeartbeatStats stats = monitor.stats();
        assertEquals(0, stats.timer().entries());
        assertEquals(0, stats.channels());
        assertEquals(0, stats.timer().queueDepth());
        assertEquals(0, stats.actionFailures());
    }

    @Test
    void theIdleCloseHappensOnTheNewEventLoopAndLeavesNoEntry() throws Exception {
        Channel server = localServer(monitor, CLOSE_1S);
        Thread threadA = threadOf(loopA);
        Thread threadB = threadOf(loopB);
        Link moving = connect(server);
        Link staying = connect(server);
        monitor.runOnce();
        migrate(moving.child(), loopB);

        advance(999);
        assertTrue(moving.child().isOpen() && staying.child().isOpen(), "never early");
        advance(1 + LATE);
        assertSeenOn(threadB, "close", next(moving.watch().closes, "the idle close, on the new loop"));
        assertSeenOn(threadA, "close", next(staying.watch().closes, "the idle close"));
        assertTrue(moving.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(moving.client().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS),
                "the peer saw the close");
        assertTrue(staying.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));

        settle();
        monitor.runOnce();
        HeartbeatStats stats = monitor.stats();
        assertEquals(2, stats.closedReaderIdle());
        assertEquals(2, stats.closedTotal());
        assertEquals(0, stats.channels());
        assertEquals(0, stats.timer().entries(), "no entry left for either channel");
        advance(5000);
        assertTrue(moving.watch().closes.isEmpty() && staying.watch().closes.isEmpty(), "closed once");
        assertEquals(2, monitor.stats().closedTotal());
    }

    @Test
    void anActionHandedToTheOldLoopDuringTheMoveRunsOnTheNewOne() throws Exception {
        Channel server = localServer(monitor, EVENTS_1S);
        Thread threadB = threadOf(loopB);
        Link moving = connect(server);
        monitor.runOnce();

        moving.child().deregister().syncUninterruptibly();
        // Hold the old loop, so the action the worker hands it waits there while the channel moves on.
        CountDownLatch holding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        loopA.execute(() -> {
            holding.countDown();
            try {
                release.await(WAIT_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(holding.await(WAIT_SECONDS, TimeUnit.SECONDS));
        try {
            step(1000 + LATE); // the worker decides the first event while the channel is between loops
            assertEquals(1, monitor.stats().timer().expired(), "the first check came due and decided the event");
            assertTrue(moving.probe().seen.isEmpty(), "not delivered yet: the old loop is held");
            Future<Void> registered = loopB.register(moving.child());
            assertTrue(registered.awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS) && registered.isSuccess(),
                    "registered on the new loop while the old one is held");
        } finally {
            release.countDown();
        }
        settle();
        assertSeenOn(threadB, FIRST_READER_IDLE_STATE_EVENT, next(moving.probe().seen,
                "the in-flight event, hopped to the new loop"));
        assertTrue(moving.probe().seen.isEmpty(), "delivered once");

        advance(1000);
        assertSeenOn(threadB, READER_IDLE_STATE_EVENT, next(moving.probe().seen, "the next event"));
        assertEquals(0, monitor.stats().actionFailures());
    }

    @Test
    void closingTheMonitorLeavesMigratedChannelsOpenAndLeaksNothing() throws Exception {
        Channel server = localServer(monitor, EVENTS_1S);
        Thread threadB = threadOf(loopB);
        Link moving = connect(server);
        Link staying = connect(server);
        monitor.runOnce();
        migrate(moving.child(), loopB);
        advance(500);
        assertEquals(2, monitor.stats().timer().entries());

        monitor.close();
        assertTrue(monitor.isClosed());
        assertEquals(0, monitor.stats().timer().entries(), "the wheel let go of its entries");
        assertThrows(IllegalStateException.class, monitor::runOnce);
        ticker.advance(10, TimeUnit.SECONDS);
        settle();
        assertTrue(moving.child().isActive() && staying.child().isActive(), "channels stay open");
        assertTrue(moving.probe().seen.isEmpty() && staying.probe().seen.isEmpty(), "and quiet");
        assertEquals(2, monitor.stats().channels());

        assertTrue(moving.client().writeAndFlush("still here").awaitUninterruptibly(WAIT_SECONDS,
                TimeUnit.SECONDS));
        assertSeenOn(threadB, "still here", next(moving.probe().seen, "a read after the monitor closed"));
        // The handler can still be moved and closed without a worker.
        migrate(moving.child(), loopA);
        assertTrue(moving.client().close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(staying.client().close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(moving.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(staying.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        settle();
        HeartbeatStats stats = monitor.stats();
        assertEquals(0, stats.channels());
        assertEquals(0, stats.timer().entries());
        assertEquals(0, stats.timer().queueDepth(), "no request is held for a closed worker");
        assertEquals(0, stats.closedTotal());
    }

    // ------------------------------------------------------------------ real worker

    @Test
    void closingARunningMonitorLeavesChannelsOpenAndLeaksNothing() throws Exception {
        HeartbeatMonitor running = HeartbeatMonitor.builder().threadName("heartbeat-close-test").build()
                .startWorker();
        monitors.add(running);
        long timeoutNanos = TimeUnit.MILLISECONDS.toNanos(300);
        Channel server = localServer(running, HeartbeatConfig.events().readerIdle(Duration.ofNanos(timeoutNanos))
                .build());
        long connectStart = System.nanoTime(); // before either channel's Heartbeat started
        Link moving = connect(server);
        Link staying = connect(server);
        migrate(moving.child(), loopB);
        awaitTrue("both channels in the wheel",
                () -> running.stats().channels() == 2 && running.stats().timer().entries() == 2);

        assertTrue(running.close(Duration.ofSeconds(WAIT_SECONDS)), "the worker thread ended");
        long closedAfter = System.nanoTime() - connectStart;
        settle(); // actions handed over before the worker ended have run now
        int seenBefore = moving.probe().seen.size() + staying.probe().seen.size();
        if (closedAfter < timeoutNanos) {
            assertEquals(0, seenBefore, "the monitor closed before any deadline, so nothing fired");
        }
        assertEquals(0, running.stats().timer().entries(), "the wheel let go of its entries");
        assertEquals(2, running.stats().channels());

        // Several timeouts pass with no worker: nothing happens to the channels.
        long quietUntil = System.nanoTime() + 3 * timeoutNanos;
        while (System.nanoTime() - quietUntil < 0) {
            Thread.sleep(20);
        }
        settle();
        assertEquals(seenBefore, moving.probe().seen.size() + staying.probe().seen.size(), "no event after close");
        assertTrue(moving.child().isActive() && staying.child().isActive(), "channels stay open");

        assertTrue(moving.client().close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(staying.client().close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(moving.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(staying.child().closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        settle();
        HeartbeatStats stats = running.stats();
        assertEquals(0, stats.channels());
        assertEquals(0, stats.timer().entries());
        assertEquals(0, stats.timer().queueDepth());
        assertEquals(-1, stats.workerCpuNanos(), "the worker thread is gone");
    }

    @SuppressWarnings("deprecation") // Netty 4.2 deprecates NioEventLoopGroup; 4.1, the baseline, has no successor
    private static EventLoopGroup nioGroup() {
        return new NioEventLoopGroup(1);
    }

    @Test
    void idleEventsAndTheIdleCloseFollowAnNioChannelToItsNewEventLoop() throws Exception {
        HeartbeatMonitor running = HeartbeatMonitor.builder().threadName("heartbeat-nio-migration-test").build()
                .startWorker();
        monitors.add(running);
        EventLoopGroup groupA = nioGroup();
        EventLoopGroup groupB = nioGroup();
        EventLoopGroup clientGroup = nioGroup();
        groups.addAll(List.of(groupA, groupB, clientGroup));
        EventLoop newLoop = groupB.next();
        Thread threadB = threadOf(newLoop);

        Channel server = new ServerBootstrap()
                .group(groupA, groupA)
                .channel(NioServerSocketChannel.class)
                .childHandler(childInit(running, HeartbeatConfig.events().readerIdle(Duration.ofMillis(200)).build()))
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).syncUninterruptibly().channel();
        channels.add(server);
        Channel client = new Bootstrap()
                .group(clientGroup)
                .channel(NioSocketChannel.class)
                .handler(new ChannelInboundHandlerAdapter())
                .connect(server.localAddress()).syncUninterruptibly().channel();
        channels.add(client);
        Channel child = accepted.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(child, "the server accepted the connection");
        channels.add(child);
        Link link = new Link(client, child);
        awaitTrue("the child is active", () -> running.stats().channels() == 1);

        migrate(child, newLoop);
        // Whatever the old loop saw is history; of the events after the move at most the first was
        // already on its way to the old loop (it then hops), every later one starts on the new loop.
        link.probe().seen.clear();
        next(link.probe().seen, "an event after the move");
        assertSeenOn(threadB, READER_IDLE_STATE_EVENT, next(link.probe().seen, "a later event"));

        // From now on close idle channels: the close, too, is done on the new loop.
        running.reconfigure(child, HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMillis(200)).build());
        assertSeenOn(threadB, "close", next(link.watch().closes, "the idle close, on the new loop"));
        assertTrue(child.closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        assertTrue(client.closeFuture().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS), "the peer saw it");
        awaitTrue("the wheel is empty",
                () -> running.stats().channels() == 0 && running.stats().timer().entries() == 0);
        assertEquals(1, running.stats().closedReaderIdle());
        assertEquals(0, running.stats().actionFailures());
    }
}
