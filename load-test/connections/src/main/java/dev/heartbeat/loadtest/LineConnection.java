/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

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
 * keep-alives), and the edge roles' input: single bytes (trickle), {@code PING} (pingflood), random
 * binary lines starting with 0xFF (junk), one over-long line (longline). Lines understood: a number (an
 * echo), {@code PING}, {@code PONG}, {@code ERR line too long}, a line starting with 0xFF (junk echoed);
 * anything else is ignored.
 *
 * <p>Confined to the channel's event loop, except {@link #connectStart}, {@link #attempts} and
 * {@link #loop}, written by the connecting thread before the channel is registered (the registration
 * hand-off orders them before every read on the loop).
 */
final class ClientConnection extends ChannelInboundHandlerAdapter implements ByteProcessor {

    private static final byte LINE_START = 0;
    private static final byte NUMBER = 1;
    private static final byte WORD = 2;
    private static final byte JUNK = 3;
    private static final byte OTHER = 4;

    /** The first byte of every junk line: never valid in UTF-8, never a digit or a word's start. */
    static final byte JUNK_START = (byte) 0xFF;
    /** The longest junk line's random part: well below any {@code --max-line}. */
    private static final int MAX_JUNK_BYTES = 64;

    /** The server's lines this parser knows, by index: bit {@code 1 << index} of {@link #words}. */
    private static final byte[][] WORDS = {ascii("PING"), ascii("PONG"), ascii("ERR line too long")};
    private static final int WORD_PING = 0;
    private static final int WORD_PONG = 1;
    private static final int WORD_TOO_LONG = 2;
    private static final byte PING_LINE_BYTES = 5;

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
    /** In state {@link #WORD}: the words the line still matches, and how many bytes of them it matched. */
    private byte words;
    private byte wordLength;
    /** Bytes a trickle connection has sent, none of them a newline. */
    private int trickled;
    /** Whether this connection has sent more than {@code --max-line} bytes without a newline, and when. */
    private boolean overLong;
    private long overLongAt;
    /** Whether the server answered {@code ERR line too long}. */
    private boolean refusedLine;
    /** Soak: whether this connection replaces one the client closed, and whether the client closed this one. */
    boolean reopened;
    boolean closedByClient;

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

    /** Whether this connection has sent more than {@code --max-line} bytes without a newline. */
    boolean sentOverLongLine() {
        return overLong;
    }

    /** When the byte that made its line over-long was written; only if {@link #sentOverLongLine}. */
    long overLongAt() {
        return overLongAt;
    }

    /** Whether the server answered {@code ERR line too long}: its line decoder closes the connection. */
    boolean refusedLine() {
        return refusedLine;
    }

    Channel channel() {
        return channel;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        if (role == Role.HALFOPEN) {
            channel.config().setAutoRead(false); // before the first read: the loop turns it back on
        }
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
            endLine();
            return true;
        }
        switch (lineState) {
            case LINE_START:
                if (b >= '0' && b <= '9') {
                    lineState = NUMBER;
                    number = (long) b - '0';
                } else if (b == JUNK_START) {
                    lineState = JUNK;
                } else {
                    words = 0;
                    wordLength = 0;
                    matchWord(b);
                }
                break;
            case NUMBER:
                if (b >= '0' && b <= '9' && number < Long.MAX_VALUE / 10 - 10) {
                    number = number * 10 + (b - '0');
                } else {
                    lineState = OTHER;
                }
                break;
            case WORD:
                if (b != '\r') { // a CR before the newline is tolerated
                    matchWord(b);
                }
                break;
            default:
                break;
        }
        return true;
    }

    /** Keeps the words whose next byte is {@code b}; none left: the line is something else. */
    private void matchWord(byte b) {
        int still = 0;
        for (int w = 0; w < WORDS.length; w++) {
            boolean candidate = wordLength == 0 || (words & (1 << w)) != 0;
            if (candidate && WORDS[w].length > wordLength && WORDS[w][wordLength] == b) {
                still |= 1 << w;
            }
        }
        words = (byte) still;
        wordLength++;
        lineState = still == 0 ? OTHER : WORD;
    }

    private void endLine() {
        byte state = lineState;
        lineState = LINE_START;
        if (state == NUMBER) {
            loop.echoReceived(this, number, System.nanoTime());
        } else if (state == JUNK) {
            loop.junkEchoed(this);
        } else if (state == WORD) {
            if (matched(WORD_PING)) {
                loop.pingReceived(this, System.nanoTime());
            } else if (matched(WORD_PONG)) {
                loop.pongReceived(this);
            } else if (matched(WORD_TOO_LONG)) {
                refusedLine = true;
            }
        }
    }

    private boolean matched(int word) {
        return (words & (1 << word)) != 0 && WORDS[word].length == wordLength;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
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
        write(buf);
    }

    /** Trickle: writes one byte, never a newline; the one past {@code maxLine} makes the line over-long. */
    void sendTrickleByte(int maxLine) {
        ByteBuf buf = channel.alloc().buffer(1).writeByte('x');
        write(buf);
        if (++trickled > maxLine && !overLong) {
            overLong = true;
            overLongAt = lastActivity;
        }
    }

    /** Ping flood: writes {@code lines} PING lines at once. */
    void sendPings(int lines) {
        ByteBuf buf = channel.alloc().buffer(lines * PING_LINE_BYTES);
        for (int i = 0; i < lines; i++) {
            buf.writeBytes(WORDS[WORD_PING]).writeByte('\n');
        }
        write(buf);
    }

    /** Junk: one line of 0xFF and up to 64 random bytes (no newline among them), shorter than {@code maxLine}. */
    void sendJunk(SplittableRandom random, int maxLine) {
        int n = random.nextInt(Math.min(MAX_JUNK_BYTES, maxLine - 1));
        ByteBuf buf = channel.alloc().buffer(n + 2).writeByte(JUNK_START);
        for (int i = 0; i < n; i++) {
            int b = random.nextInt(256);
            buf.writeByte(b == '\n' ? 0xFE : b);
        }
        write(buf.writeByte('\n'));
    }

    /** Long line: {@code maxLine + 1} bytes, then a newline, in one write. */
    void sendLongLine(int maxLine) {
        ByteBuf buf = channel.alloc().buffer(maxLine + 2);
        buf.writeCharSequence("x".repeat(maxLine + 1), StandardCharsets.US_ASCII);
        write(buf.writeByte('\n'));
        overLong = true;
        overLongAt = lastActivity;
    }

    /** Stamps the activity first, so the server's own stamp can only be later, then writes and flushes. */
    private void write(ByteBuf buf) {
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
