/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.WriteTracker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultEventExecutorGroup;
import io.netty.util.concurrent.EventExecutorGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A Heartbeat handler on an executor of its own ({@code pipeline.addLast(group, name, handler)}), not
 * the channel's event loop: every change of its state happens on that executor, including the ones
 * of the {@link WriteTracker} a reconfiguration to track writes adds. On the local transport with
 * real threads and a real worker; it waits on latches, with timeouts, never for a timer.
 */
@SuppressWarnings("deprecation") // Netty 4.2 deprecates what 4.1, the baseline, has no successor for
class OwnExecutorTest {

    private static final long WAIT_SECONDS = 20;
    private static final int CHANNELS = 12;
    private static final int MESSAGES = 2_000;
    private static final Duration IDLE = Duration.ofMillis(150);

    private final EventLoopGroup loops = new DefaultEventLoopGroup(2);
    private final EventExecutorGroup heartbeats = new DefaultEventExecutorGroup(2);
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().threadName("heartbeat-own-executor-test")
            .build().startWorker();
    private final List<Channel> channels = new ArrayList<>();
    private final BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();

    @AfterEach
    void tearDown() {
        for (Channel ch : channels) {
            ch.close().awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        }
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        heartbeats.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS);
        monitor.close();
    }

    /**
     * After the Heartbeat handler, on the event loop: echoes every read with the void promise, and
     * notes the idle kinds that reach it once the test says the traffic is over.
     */
    static final class Echo extends ChannelInboundHandlerAdapter {
        volatile boolean quiet;
        final Set<IdleState> seen = ConcurrentHashMap.newKeySet();
        final CountDownLatch idle;

        Echo(CountDownLatch idle) {
            this.idle = idle;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.writeAndFlush(msg, ctx.voidPromise());
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (quiet && evt instanceof IdleStateEvent e && seen.add(e.state())) {
                idle.countDown();
            }
        }
    }

    /** The client: counts the echoes. */
    static final class Client extends ChannelInboundHandlerAdapter {
        final CountDownLatch echoed;

        Client(CountDownLatch echoed) {
            this.echoed = echoed;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            int bytes = ((ByteBuf) msg).readableBytes();
            ReferenceCountUtil.release(msg);
            for (int i = 0; i < bytes; i++) {
                echoed.countDown();
            }
        }
    }

    @Test
    void aHandlerOnItsOwnExecutorReconfiguredToTrackWritesKeepsBeingJudged() throws Exception {
        HeartbeatConfig readerOnly = HeartbeatConfig.events().readerIdle(IDLE).build();
        HeartbeatConfig both = HeartbeatConfig.events().readerIdle(IDLE).writerIdle(IDLE).build();
        HeartbeatConfig bothLonger = HeartbeatConfig.events().readerIdle(IDLE.plusMillis(10))
                .writerIdle(IDLE.plusMillis(10)).build();
        CountDownLatch idle = new CountDownLatch(2 * CHANNELS);
        CountDownLatch echoed = new CountDownLatch(CHANNELS * MESSAGES);
        LocalAddress address = new LocalAddress("heartbeat-own-executor-" + System.nanoTime());
        Channel server = new ServerBootstrap().group(loops).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(heartbeats, "heartbeat", monitor.newHandler(readerOnly));
                        ch.pipeline().addLast("echo", new Echo(idle));
                        accepted.add(ch);
                    }
                }).bind(address).syncUninterruptibly().channel();
        channels.add(server);
        List<Channel> clients = new ArrayList<>();
        List<Channel> children = new ArrayList<>();
        for (int i = 0; i < CHANNELS; i++) {
            Channel client = new Bootstrap().group(loops).channel(LocalChannel.class).handler(new Client(echoed))
                    .connect(address).syncUninterruptibly().channel();
            channels.add(client);
            clients.add(client);
            Channel child = accepted.poll(WAIT_SECONDS, TimeUnit.SECONDS);
            assertNotNull(child, "accepted");
            channels.add(child);
            children.add(child);
        }
        for (Channel child : children) {
            assertTrue(monitor.reconfigure(child, both), "reconfigured to track writes");
        }
        for (Channel child : children) {
            ChannelHandlerContext hb = child.pipeline().context("heartbeat");
            // The reconfiguration runs on the handler's executor: a task after it finds it done.
            assertTrue(hb.executor().submit(() -> { }).awaitUninterruptibly(WAIT_SECONDS, TimeUnit.SECONDS));
            ChannelHandlerContext tracker = child.pipeline().context(WriteTracker.class);
            assertNotNull(tracker, "a write tracker was added");
            assertSame(hb.executor(), tracker.executor(), "the tracker runs on the handler's executor");
        }

        // Reads on the handler's executor, echoes with the void promise through the tracker, and
        // reconfigurations in between: each changes the handler's state.
        for (int m = 0; m < MESSAGES; m++) {
            for (Channel client : clients) {
                client.writeAndFlush(Unpooled.wrappedBuffer(new byte[] {(byte) m}));
            }
            if (m % 10 == 0) {
                for (Channel child : children) {
                    monitor.reconfigure(child, m % 20 == 0 ? bothLonger : both);
                }
            }
        }
        assertTrue(echoed.await(WAIT_SECONDS, TimeUnit.SECONDS), "every message echoed");
        for (Channel child : children) {
            ((Echo) child.pipeline().get("echo")).quiet = true;
        }

        boolean all = idle.await(WAIT_SECONDS, TimeUnit.SECONDS);
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < CHANNELS; i++) {
            Set<IdleState> seen = ((Echo) children.get(i).pipeline().get("echo")).seen;
            Set<IdleState> want = EnumSet.of(IdleState.READER_IDLE, IdleState.WRITER_IDLE);
            want.removeAll(seen);
            if (!want.isEmpty()) {
                missing.add("channel " + i + " never fired " + want);
            }
        }
        assertTrue(all, "every channel is judged after the traffic: " + missing);
        assertEquals(List.of(), missing);
    }
}
