/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;

import dev.heartbeat.netty.CloseReason;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.ReferenceCountUtil;

/**
 * The echo protocol, after {@code LineBasedFrameDecoder}: each line (a {@code ByteBuf} without its
 * line ending) is written back with a {@code \n}; {@code PING} is answered {@code PONG}. One instance
 * serves every connection (no per-connection state), so a connection costs only its pipeline.
 *
 * <p>Bytes are echoed as they came: a line that is not valid UTF-8 is counted, not refused. A line
 * over the limit is answered {@code ERR line too long}, counted and the connection closed; any other
 * exception is counted and closes only its own connection. Before a close for idleness the server
 * writes {@code BYE <REASON>} ({@code BYE PING_TIMEOUT}, say); with {@code --police-pings}, the policing
 * ({@link LineProbe}) writes {@code BYE PING_ABUSE} before it closes a client that sends PING too often.
 */
@ChannelHandler.Sharable
final class LineHandler extends EchoHandler {

    private static final ByteBuf NEWLINE = constant("\n");
    private static final ByteBuf PONG = constant("PONG\n");
    private static final ByteBuf TOO_LONG = constant("ERR line too long\n");
    /** The server's ping in ping mode. */
    static final ByteBuf PING_LINE = constant("PING\n");
    /** The goodbye line of each close reason, {@code BYE READER_IDLE} and so on. */
    private static final Map<CloseReason, ByteBuf> BYE = new EnumMap<>(CloseReason.class);

    static {
        for (CloseReason r : CloseReason.values()) {
            BYE.put(r, constant(goodbye(r) + "\n"));
        }
    }

    LineHandler(DemoCounters counters) {
        super(counters);
    }

    @Override
    boolean saysGoodbyeAhead() {
        return true; // the line ping probe has no goodbye: BYE is this handler's, at the age
    }

    private static ByteBuf constant(String s) {
        return Unpooled.unreleasableBuffer(
                Unpooled.directBuffer(s.length()).writeBytes(s.getBytes(StandardCharsets.US_ASCII)));
    }

    /** A new ping line: a duplicate (own indices, release is a no-op) of one shared buffer. */
    static ByteBuf pingLine() {
        return PING_LINE.duplicate();
    }

    /** The goodbye line for a close reason, without its newline: {@code BYE PING_TIMEOUT}. */
    static String goodbye(CloseReason reason) {
        return "BYE " + reason.name();
    }

    /** The goodbye line for a close reason, with its newline: a duplicate of a shared buffer. */
    static ByteBuf goodbyeLine(CloseReason reason) {
        return BYE.get(reason).duplicate();
    }

    @Override
    void sayGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        ctx.writeAndFlush(goodbyeLine(reason), ctx.voidPromise());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf)) {
            ReferenceCountUtil.release(msg);
            return;
        }
        ByteBuf line = (ByteBuf) msg;
        if (LineProbe.isPing(line)) {
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

    @Override
    boolean handle(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof TooLongFrameException || cause.getCause() instanceof TooLongFrameException) {
            counters.closedMaxLine.increment();
            ctx.writeAndFlush(TOO_LONG.duplicate(), ctx.voidPromise());
            ctx.close();
            return true;
        }
        return false;
    }
}
