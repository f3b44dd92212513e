/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.util.AbstractReferenceCounted;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ReferenceCounted;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The race that lost a drain's goodbye in CI: the server writes its goodbye and closes while the client is
 * in the middle of a write of its own. The client's write is held inside Netty's {@code LocalChannel.doWrite}
 * (a message whose {@code retain} waits), so the race is met every time, not by chance.
 */
class InOrderLocalChannelTest {

    private static final String BYE = "BYE DRAIN\n";

    @Test
    void whatThePeerWroteBeforeItsCloseIsReadEvenIfThisSideWasWriting() throws Exception {
        assertEquals(List.of(BYE), goodbyeRace(InOrderLocalChannel.class));
    }

    /**
     * Netty's own LocalChannel drops it (its read is queued behind the close, which releases it). If this
     * fails, Netty fixed it, and {@link InOrderLocalChannel} can go.
     */
    @Test
    void nettysLocalChannelDropsIt() throws Exception {
        assertEquals(List.of(), goodbyeRace(LocalChannel.class));
    }

    @Test
    void itsOwnCloseDropsWhatItHadNotReadAsBefore() throws Exception {
        EventLoopGroup group = new DefaultEventLoopGroup(1);
        try {
            List<String> read = new CopyOnWriteArrayList<>();
            Channel[] ends = connect(group, group, InOrderLocalChannel.class, read, false);
            Channel client = ends[0];
            ends[1].writeAndFlush(Unpooled.copiedBuffer(BYE, StandardCharsets.US_ASCII)).sync();
            client.close().sync();
            assertEquals(List.of(), read, "a close of its own is no reason to read");
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static List<String> goodbyeRace(Class<? extends LocalChannel> clientClass) throws Exception {
        EventLoopGroup servers = new DefaultEventLoopGroup(1);
        EventLoopGroup clients = new DefaultEventLoopGroup(1);
        try {
            List<String> read = new CopyOnWriteArrayList<>();
            Channel[] ends = connect(servers, clients, clientClass, read, true);
            Channel client = ends[0];
            Channel server = ends[1];
            HeldWrite held = new HeldWrite();
            client.writeAndFlush(held);
            assertTrue(held.entered.await(5, TimeUnit.SECONDS), "the client's write began");
            server.eventLoop().submit(() -> { // the client's loop is inside its write
                server.writeAndFlush(Unpooled.copiedBuffer(BYE, StandardCharsets.US_ASCII));
                server.close();
            }).sync();
            held.go.countDown();
            assertTrue(client.closeFuture().await(5, TimeUnit.SECONDS), "the client saw the close");
            client.eventLoop().submit(() -> { }).sync(); // anything its close left queued has run
            return read;
        } finally {
            clients.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            servers.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /**
     * The client's and the server's end of one connection, the client reading into {@code read} (without
     * {@code autoRead}, nothing: what the server writes stays queued on the client's end).
     */
    private static Channel[] connect(EventLoopGroup servers, EventLoopGroup clients,
            Class<? extends LocalChannel> clientClass, List<String> read, boolean autoRead) throws Exception {
        LocalAddress address = new LocalAddress("in-order-" + System.nanoTime());
        CompletableFuture<Channel> accepted = new CompletableFuture<>();
        new ServerBootstrap().group(servers).channel(LocalServerChannel.class)
                .childHandler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        accepted.complete(ctx.channel());
                    }

                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ReferenceCountUtil.release(msg);
                    }
                }).bind(address).sync();
        Channel client = new Bootstrap().group(clients).channel(clientClass).option(ChannelOption.AUTO_READ, autoRead)
                .handler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        ByteBuf b = (ByteBuf) msg;
                        read.add(b.toString(StandardCharsets.US_ASCII));
                        b.release();
                    }
                }).connect(address).sync().channel();
        return new Channel[] {client, accepted.get(5, TimeUnit.SECONDS)};
    }

    /**
     * A message whose {@code retain}, which {@code LocalChannel.doWrite} calls as it hands the message over,
     * waits for {@link #go}: the writing side stays in its write until then.
     */
    private static final class HeldWrite extends AbstractReferenceCounted {

        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch go = new CountDownLatch(1);

        @Override
        public ReferenceCounted retain() {
            entered.countDown();
            try {
                if (!go.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never let go");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return super.retain();
        }

        @Override
        public ReferenceCounted touch(Object hint) {
            return this;
        }

        @Override
        protected void deallocate() {
            // nothing held
        }
    }
}
