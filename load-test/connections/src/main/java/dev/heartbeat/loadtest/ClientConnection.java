/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ByteProcessor;
import io.netty.util.ReferenceCountUtil;

/**
 * The client side of one connection, and the only handler in its pipeline: it plays the
 * connection's {@link Role}, parses the server's lines without a decoder (a few bytes of state, no
 * buffer: the echo protocol's lines here are a number or {@code PING}) and tells its
 * {@link ClientLoop} what happened. About 60 bytes besides the channel: the load test's own cost per
 * connection stays small next to what it measures.
 *
 * <p>Lines sent: the intended send time in decimal nanoseconds (active), {@code PONG} (answers and
 * keep-alives). Lines understood: a number (an echo), {@code PING}; anything else is ignored.
 *
 * <p>Confined to the channel's event loop, except {@link #connectStart}, {@link #attempts} and
 * {@link #loop}, written by the connecting thread before the channel is registered (the registration
 * hand-off orders them before every read on the loop).
 */
final class ClientConnection extends ChannelInboundHandlerAdapter implements ByteProcessor {

    private static final byte LINE_START = 0;
    private static final byte NUMBER = 1;
    private static final byte P = 2;
    private static final byte PI = 3;
    private static final byte PIN = 4;
    private static final byte PING = 5;
    private static final byte OTHER = 6;

    /** The global index: fixes the role, the send phase and the moment of death. */
    final int index;
    final Role role;
    /** Whether a correct server closes this connection during the run. */
    final boolean expectsClose;

    /** The clock read just before the (latest) connect attempt started. */
    long connectStart;
    /** Connect attempts made so far (the connecting thread, then the connect listener). */
    int attempts;
    /**
     * The clock read when the connect completed (as this event loop saw it), or just before the
     * latest line was written.
     */
    long lastActivity;
    /** Whether a line was written, so {@link #lastActivity} is a send and not the connect. */
    private boolean sentLine;

    /** The loop this connection's channel is registered with, chosen before connecting. */
    ClientLoop loop;
    private Channel channel;
    private byte lineState;
    private boolean closed;
    private long number;

    ClientConnection(int index, Role role, boolean expectsClose) {
        this.index = index;
        this.role = role;
        this.expectsClose = expectsClose;
    }

    /**
     * The earliest moment a correct server may close this connection, as of its last activity: from
     * the clock read before the line was written, or before the connect started. The server's own
     * stamp of that activity can only be later, so a close before this moment is premature.
     */
    long safeDueNanos(Scenario scenario) {
        return (sentLine ? lastActivity : connectStart) + scenario.closeWindowNanos();
    }

    /**
     * The moment the server was due to act, as closely as the client can tell: as
     * {@link #safeDueNanos} but from the connect's completion rather than its start, so that a slow
     * connect (the servers' accept queues, a cold JIT) is not counted as lateness of the idle
     * handling. A correct server may close up to the connect time before it; lateness is measured
     * from here and counted as 0 then.
     */
    long estimatedDueNanos(Scenario scenario) {
        return lastActivity + scenario.closeWindowNanos();
    }

    boolean isClosed() {
        return closed;
    }

    Channel channel() {
        return channel;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        lastActivity = System.nanoTime();
        loop.connected(this, lastActivity);
        ctx.fireChannelActive();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        long now = System.nanoTime();
        if (!closed) {
            closed = true;
            loop.closed(this, now);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof ByteBuf) {
                ((ByteBuf) msg).forEachByte(this);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    /** One byte of input: advances the line state; a newline ends the line. */
    @Override
    public boolean process(byte b) {
        if (b == '\n') {
            byte state = lineState;
            lineState = LINE_START;
            if (state == NUMBER) {
                loop.echoReceived(this, number, System.nanoTime());
            } else if (state == PING) {
                loop.pingReceived(this, System.nanoTime());
            }
            return true;
        }
        switch (lineState) {
            case LINE_START:
                if (b >= '0' && b <= '9') {
                    lineState = NUMBER;
                    number = (long) b - '0';
                } else {
                    lineState = b == 'P' ? P : OTHER;
                }
                break;
            case NUMBER:
                if (b >= '0' && b <= '9' && number < Long.MAX_VALUE / 10 - 10) {
                    number = number * 10 + (b - '0');
                } else {
                    lineState = OTHER;
                }
                break;
            case P:
                lineState = b == 'I' ? PI : OTHER;
                break;
            case PI:
                lineState = b == 'N' ? PIN : OTHER;
                break;
            case PIN:
                lineState = b == 'G' ? PING : OTHER;
                break;
            case PING:
                lineState = b == '\r' ? PING : OTHER;
                break;
            default:
                break;
        }
        return true;
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated in ChannelHandler, current in ChannelInboundHandler
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (loop != null) {
            loop.error(this, cause);
        }
        ctx.close();
    }

    /** Writes a line of ASCII: stamps the activity first, so the server's own stamp can only be later. */
    void sendLine(long numberOrMinusOne) {
        ByteBuf buf = channel.alloc().buffer(21);
        if (numberOrMinusOne < 0) {
            buf.writeByte('P').writeByte('O').writeByte('N').writeByte('G');
        } else {
            writeDecimal(buf, numberOrMinusOne);
        }
        buf.writeByte('\n');
        lastActivity = System.nanoTime();
        sentLine = true;
        channel.writeAndFlush(buf, channel.voidPromise());
    }

    static void writeDecimal(ByteBuf buf, long value) {
        if (value == 0) {
            buf.writeByte('0');
            return;
        }
        long divisor = 1;
        while (value / divisor >= 10) {
            divisor *= 10;
        }
        for (; divisor > 0; divisor /= 10) {
            buf.writeByte((int) ('0' + (value / divisor) % 10));
        }
    }
}
