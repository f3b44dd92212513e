/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Guards;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The write-stall guard's advice: an epoll channel without {@code TCP_NOTSENT_LOWAT} hides a slow
 * peer's progress from the outbound buffer the guard watches (the load test's slow readers were all
 * closed for WRITE_STALL without it), so Heartbeat warns once; with it set, or on another transport,
 * nothing to say.
 */
class NotSentLowatTest {

    @Test
    void anEmbeddedChannelHasNoSuchOption() {
        assertFalse(Guards.writesHideProgress(new EmbeddedChannel()));
    }

    @Test
    @SuppressWarnings("deprecation") // EpollEventLoopGroup: deprecated in Netty 4.2 only
    void anAcceptedEpollChannelHidesProgressUnlessTheLowWaterMarkIsSet() throws Exception {
        Assumptions.assumeTrue(Epoll.isAvailable(), "epoll is not available here");
        EventLoopGroup group = new EpollEventLoopGroup(1);
        try {
            assertTrue(accepted(group, 0), "unset: the kernel wakes the writer late");
            assertFalse(accepted(group, 16 * 1024), "set: it wakes it once 16 KiB are left unsent");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** Whether the server side of a loopback connection, with {@code lowat} set (0: unset), hides progress. */
    private static boolean accepted(EventLoopGroup group, long lowat) throws Exception {
        CompletableFuture<Boolean> hides = new CompletableFuture<>();
        ServerBootstrap server = new ServerBootstrap().group(group).channel(EpollServerSocketChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        hides.complete(Guards.writesHideProgress(ctx.channel()));
                        ctx.close();
                    }
                });
        if (lowat > 0) {
            server.childOption(EpollChannelOption.TCP_NOTSENT_LOWAT, lowat);
        }
        Channel listener = server.bind("127.0.0.1", 0).sync().channel();
        try {
            Channel client = new Bootstrap().group(group).channel(EpollSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter()).connect(listener.localAddress()).sync().channel();
            try {
                return hides.get(10, TimeUnit.SECONDS);
            } finally {
                client.close().sync();
            }
        } finally {
            listener.close().sync();
        }
    }
}
