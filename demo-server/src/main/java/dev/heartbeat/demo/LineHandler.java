/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The echo protocol, after {@code LineBasedFrameDecoder}: each line (a {@code ByteBuf} without its
 * line ending) is written back with a {@code \n}; {@code PING} is answered {@code PONG}. One instance
 * serves every connection (no per-connection state), so a connection costs only its pipeline.
 *
 * <p>Bytes are echoed as they came: a line that is not valid UTF-8 is counted, not refused. A line
 * over the limit is answered {@code ERR line too long}, counted and the connection closed; any other
 * exception is counted and closes only its own connection.
 */
@ChannelHandler.Sharable
final class LineHandler extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(LineHandler.class);

    private static final ByteBuf NEWLINE = constant("\n");
    private static final ByteBuf PONG = constant("PONG\n");
    private static final ByteBuf TOO_LONG = constant("ERR line too long\n");
    /** The server's ping in ping mode. */
    static final ByteBuf PING_LINE = constant("PING\n");

    private final DemoCounters counters;

    LineHandler(DemoCounters counters) {
        this.counters = counters;
    }

    private static ByteBuf constant(String s) {
        return Unpooled.unreleasableBuffer(
                Unpooled.directBuffer(s.length()).writeBytes(s.getBytes(StandardCharsets.US_ASCII)));
    }

    /** A new ping line: a duplicate (own indices, release is a no-op) of one shared buffer. */
    static ByteBuf pingLine() {
        return PING_LINE.duplicate();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        counters.accepted.increment();
        counters.open.increment();
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        counters.open.decrement();
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ByteBuf line = (ByteBuf) msg;
        if (isPing(line)) {
            line.release();
            counters.pongsSent.increment();
            ctx.write(PONG.duplicate(), ctx.voidPromise());
            return;
        }
        if (!ByteBufUtil.isText(line, StandardCharsets.UTF_8)) {
            counters.invalidUtf8Lines.increment();
        }
        counters.linesEchoed.increment();
        ctx.write(line, ctx.voidPromise());
        ctx.write(NEWLINE.duplicate(), ctx.voidPromise());
    }

    private static boolean isPing(ByteBuf line) {
        int i = line.readerIndex();
        return line.readableBytes() == 4
                && line.getByte(i) == 'P' && line.getByte(i + 1) == 'I'
                && line.getByte(i + 2) == 'N' && line.getByte(i + 3) == 'G';
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush(); // one flush per read batch, not per line
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        // A client that sends but does not read: stop reading until its echoes drain, so its
        // pending writes cannot grow without bound.
        Channel ch = ctx.channel();
        ch.config().setAutoRead(ch.isWritable());
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            return; // the event policy: already counted by the monitor or the A/B handler
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated in ChannelHandler, current in ChannelInboundHandler
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Channel ch = ctx.channel();
        if (!ch.isOpen()) {
            return; // already closing: count each connection once
        }
        if (cause instanceof TooLongFrameException || cause.getCause() instanceof TooLongFrameException) {
            counters.closedMaxLine.increment();
            ctx.writeAndFlush(TOO_LONG.duplicate(), ctx.voidPromise());
            ctx.close();
            return;
        }
        counters.connectionErrors.increment();
        if (cause instanceof IOException) {
            LOG.debug("{}: {}", ch, cause.toString()); // resets and the like: routine with many clients
        } else {
            LOG.warn("{}: closing after an unexpected exception", ch, cause);
        }
        ctx.close();
    }
}
