/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import dev.heartbeat.netty.engine.WriteClock;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A tracked write that completes on an event loop that runs tasks as they come is stamped once at the
 * end of the work under way, for every write completed in it (issue 29, goal 5: the clock read was most
 * of a tracked write's cost), and never early: an action that runs before that stamp pays it first. In
 * virtual time (a manual monitor on a {@link ManualTicker}) on the local transport, whose event loops are
 * real threads.
 */
class WriteClockTest {

    private static final long WAIT_SECONDS = 10;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private final ManualTicker ticker = new ManualTicker(0);
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
            .maxCoalescing(Duration.ZERO).build();
    private final DefaultEventLoop serverLoop = new DefaultEventLoop();
    private final DefaultEventLoop clientLoop = new DefaultEventLoop();
    private final List<Channel> channels = new ArrayList<>();
    private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
    private Channel server;
    private Channel child;

    @BeforeEach
    void connect() throws InterruptedException {
        HeartbeatConfig writerIdle = HeartbeatConfig.events().writerIdle(Duration.ofSeconds(1)).build();
        server = new ServerBootstrap().group(serverLoop, serverLoop).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast("heartbeat", monitor.newHandler(writerIdle));
                        ch.pipeline().addLast("events", new ChannelInboundHandlerAdapter() {
                            @Override
                            public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                                events.add(evt);
                            }
                        });
                        accepted.add(ch);
                    }
                }).bind(LocalAddress.ANY).syncUninterruptibly().channel();
        channels.add(server);
        child = connectOne();
    }

    /** Connects a client; returns the server's child channel, active, with the Heartbeat handler. */
    private Channel connectOne() throws InterruptedException {
        Channel client = new Bootstrap().group(clientLoop).channel(LocalChannel.class)
                .handler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ReferenceCountUtil.release(msg);
                    }
                }).connect(server.localAddress()).syncUninterruptibly().channel();
        channels.add(client);
        Channel accepted1 = accepted.poll(WAIT_SECONDS, TimeUnit.SECONDS);
        assertNotNull(accepted1, "the server accepted the connection");
        channels.add(accepted1);
        settle();
        assertTrue(accepted1.isActive());
        return accepted1;
    }

    @AfterEach
    void tearDown() {
        WriteClock.onEveryExecutor(false);
        for (Channel ch : channels) {
            ch.close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        serverLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        monitor.close();
    }

    /** Waits until the event loops ran every task queued so far (the clock's included: queued before). */
    private void settle() {
        for (int round = 0; round < 2; round++) {
            assertTrue(serverLoop.submit(() -> { }).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
            assertTrue(clientLoop.submit(() -> { }).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
        }
    }

    private static long lastWrite(Channel ch) {
        return ((HeartbeatHandler) ch.pipeline().get("heartbeat")).lastWriteOpaque();
    }

    private long lastWrite() {
        return lastWrite(child);
    }

    @Test
    void writesCompletedInOneRunAreStampedOnceAtItsEnd() {
        WriteClock.onEveryExecutor(true); // the clock in every turn, dense or not (see the last test)
        serverLoop.submit(() -> {
            ticker.advance(100, TimeUnit.MILLISECONDS);
            child.writeAndFlush("one"); // completed within its flush, by the local transport
            ticker.advance(3, TimeUnit.MILLISECONDS);
            child.writeAndFlush("two");
            ticker.advance(2, TimeUnit.MILLISECONDS); // the rest of the work under way
        }).syncUninterruptibly();
        settle();
        // Read after both completions (never earlier than IdleStateHandler's 103 ms for the second), once.
        assertEquals(105 * MS, lastWrite());
    }

    @Test
    void anActionBeforeTheClockPaysTheStampFirst() throws InterruptedException {
        WriteClock.onEveryExecutor(true); // the clock in every turn, dense or not (see the last test)
        // The worker finds the writer idle for its 1 s and hands the event over; a write completes on the loop
        // before the hand-off runs, and the clock's stamp is queued behind it.
        CountDownLatch handedOver = new CountDownLatch(1);
        serverLoop.execute(() -> {
            try {
                assertTrue(handedOver.await(WAIT_SECONDS, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            child.writeAndFlush("at 1 s");
        });
        ticker.advance(1, TimeUnit.SECONDS);
        monitor.runOnce();
        handedOver.countDown();
        settle();
        // IdleStateHandler stamps the write at 1 s in its listener and finds the writer busy: no event until 2 s.
        assertNull(events.poll(), "no writer-idle event at 1 s, when a write just completed");
        assertEquals(1000 * MS, lastWrite());
        ticker.advance(1, TimeUnit.SECONDS);
        monitor.runOnce();
        settle();
        assertEquals(FIRST_WRITER_IDLE_STATE_EVENT, events.poll(WAIT_SECONDS, TimeUnit.SECONDS));
    }

    /**
     * The clock only where it pays: sparse turns read the clock at once, but about one write in
     * {@link WriteClock#PROBE_EVERY} goes through it, and a turn of {@link WriteClock#DENSE} channels or more
     * keeps it in use for the next turns.
     */
    @Test
    void theClockIsUsedOnlyWhileTurnsAreDense() throws InterruptedException {
        List<Channel> four = new ArrayList<>(List.of(child));
        for (int i = 1; i < WriteClock.DENSE; i++) {
            four.add(connectOne());
        }
        // Sparse: one write a turn. Stamped at once (the time of the write), but for the probes.
        int turns = 8 * WriteClock.PROBE_EVERY;
        int deferred = 0;
        for (int turn = 0; turn < turns; turn++) {
            turn(List.of(child));
            deferred += lastWrite() == ticker.nanoTime() ? 1 : 0;
        }
        assertTrue(deferred >= turns / (2 * WriteClock.PROBE_EVERY) && deferred <= turns / (WriteClock.PROBE_EVERY / 2),
                deferred + " of " + turns + " sparse turns through the clock");
        // Dense: a probe that falls on the first write of a turn finds four channels in it.
        for (int turn = 0; turn < turns; turn++) {
            turn(four);
        }
        // From then on every turn goes through the clock: each stamp is the end of the turn.
        for (int turn = 0; turn < 3; turn++) {
            turn(four);
            for (Channel ch : four) {
                assertEquals(ticker.nanoTime(), lastWrite(ch));
            }
        }
    }

    /** One turn of the server's loop: each channel writes, 1 ms in, and the turn's work takes 1 ms more. */
    private void turn(List<Channel> writers) {
        serverLoop.submit(() -> {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            writers.forEach(ch -> ch.writeAndFlush("line"));
            ticker.advance(1, TimeUnit.MILLISECONDS);
        }).syncUninterruptibly();
        settle();
    }
}
