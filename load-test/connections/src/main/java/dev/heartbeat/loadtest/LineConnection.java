/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

import dev.heartbeat.netty.CloseReason;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.unix.IntegerUnixChannelOption;
import io.netty.util.ByteProcessor;
import io.netty.util.ReferenceCountUtil;

/**
 * The client side of one line-protocol connection, and the only handler in its pipeline: it plays the
 * connection's {@link Role}, parses the server's lines without a decoder (a few bytes of state, no
 * buffer: the echo protocol's lines here are a number, {@code PING} or a goodbye) and tells its
 * {@link ClientLoop} what happened. About 70 bytes besides the channel: the load test's own cost per
 * connection stays small next to what it measures.
 *
 * <p>Lines sent: the intended send time in decimal nanoseconds (active), {@code PONG} (answers and
 * keep-alives), and the edge roles' input: single bytes (trickle), {@code PING} (pingflood, flooder), random
 * binary lines starting with 0xFF (junk), one over-long line (longline). Lines understood: a number (an
 * echo), {@code PING}, {@code PONG}, {@code ERR line too long}, {@code BYE <REASON>} (the server's
 * goodbye before a close for idleness), a line starting with 0xFF (junk echoed); anything else is
 * ignored.
 */
final class LineConnection extends ClientConnection implements ByteProcessor {

    private static final byte LINE_START = 0;
    private static final byte NUMBER = 1;
    private static final byte WORD = 2;
    private static final byte JUNK = 3;
    private static final byte OTHER = 4;

    /** The first byte of every junk line: never valid in UTF-8, never a digit or a word's start. */
    static final byte JUNK_START = (byte) 0xFF;
    /** The longest junk line's random part: well below any {@code --max-line}. */
    private static final int MAX_JUNK_BYTES = 64;

    private static final int WORD_PING = 0;
    private static final int WORD_PONG = 1;
    private static final int WORD_TOO_LONG = 2;
    /** The first goodbye: {@code BYE} and each close reason follow, in the reasons' order. */
    private static final int WORD_BYE = 3;
    /** The server's lines this parser knows, by index: bit {@code 1 << index} of {@link #words}. */
    private static final byte[][] WORDS = words();
    private static final byte PING_LINE_BYTES = 5;
    /**
     * A stalled connection's socket buffers (the kernel doubles them) and the maximum segment it
     * announces: a typical Internet path's, where loopback's is 64 KiB. The server's socket send buffer
     * starts at a number of segments' worth, so on loopback megabytes would back up behind every stalled
     * connection before the server's own outbound buffer held a byte.
     */
    private static final int STALLED_SOCKET_BUFFER = 4096;
    private static final int STALLED_MSS = 1400;
    /** {@code setsockopt(IPPROTO_TCP, TCP_MAXSEG)}: Netty's epoll transport takes it as a raw option; NIO has none. */
    private static final ChannelOption<Integer> TCP_MAXSEG = new IntegerUnixChannelOption("TCP_MAXSEG", 6, 2);
    /** A stalled connection's outbound buffer: unwritable above 16 KiB pending, writable again below 8. */
    private static final WriteBufferWaterMark STALLED_WATER_MARK = new WriteBufferWaterMark(8192, 16384);
    /** The filler lines a stalled connection writes in each chunk, and their length with the newline. */
    private static final int STALL_CHUNK_LINES = 128;
    private static final int MAX_STALL_LINE = 64;

    private byte lineState;
    private long number;
    /** In state {@link #WORD}: the words the line still matches, and how many bytes of them it matched. */
    private int words;
    private byte wordLength;
    /** Bytes a trickle connection has sent, none of them a newline. */
    private int trickled;
    /** Whether this connection has sent more than {@code --max-line} bytes without a newline, and when. */
    private boolean overLong;
    private long overLongAt;
    /** Whether the server answered {@code ERR line too long}. */
    private boolean refusedLine;
    /** Stalled, slowreader: the bytes of filler lines written ({@link #fillUntilUnwritable}). */
    private long written;
    /** Slowreader: since when its channel is unwritable (0: writable), and the longest span so far, in ns. */
    private long unwritableSince;
    private long longestUnwritable;
    /** Slowreader: the bytes read back, and the most echoes not back yet seen before a read ({@link #echoBacklog}). */
    private long read;
    private long maxBacklog;
    /** Slowreader: its reads, as it saw them ({@link ReadLog}); null for the other roles. */
    private final ReadLog reads;

    LineConnection(int index, Role role, boolean expectsClose) {
        super(index, role, expectsClose);
        this.reads = role == Role.SLOWREADER ? new ReadLog() : null;
    }

    private static byte[][] words() {
        CloseReason[] reasons = CloseReason.values();
        byte[][] w = new byte[WORD_BYE + reasons.length][];
        w[WORD_PING] = ascii("PING");
        w[WORD_PONG] = ascii("PONG");
        w[WORD_TOO_LONG] = ascii("ERR line too long");
        for (int i = 0; i < reasons.length; i++) {
            w[WORD_BYE + i] = ascii("BYE " + reasons[i].name());
        }
        if (w.length > Integer.SIZE) {
            throw new AssertionError("more words than bits in an int: " + w.length);
        }
        return w;
    }


    @Override
    boolean sentOverLongLine() {
        return overLong;
    }

    @Override
    long overLongAt() {
        return overLongAt;
    }

    @Override
    boolean refusedLine() {
        return refusedLine;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof ByteBuf buf) {
                if (role == Role.SLOWREADER) { // the backlog only grows between two reads: its peak is now
                    maxBacklog = Math.max(maxBacklog, echoBacklog());
                    read += buf.readableBytes();
                    reads.read(System.nanoTime(), buf.readableBytes());
                }
                buf.forEachByte(this);
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
        words = still;
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
                if (loop.pingReceived(this, System.nanoTime())) {
                    sendPong();
                }
            } else if (matched(WORD_PONG)) {
                loop.pongReceived(this);
            } else if (matched(WORD_TOO_LONG)) {
                refusedLine = true;
            } else {
                for (int w = WORD_BYE; w < WORDS.length; w++) {
                    if (matched(w)) {
                        goodbye(CloseReason.values()[w - WORD_BYE]);
                    }
                }
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
    boolean sendEcho(long number) {
        ByteBuf buf = channel.alloc().buffer(21);
        writeDecimal(buf, number);
        write(buf.writeByte('\n'));
        return true;
    }

    @Override
    void sendKeepAlive() {
        sendPong();
    }

    @Override
    boolean canPing() {
        return true;
    }

    @Override
    Object newPing() {
        return pingLines(1);
    }

    /** A {@code PONG} line: the answer to a ping, and the keep-alive. */
    private void sendPong() {
        write(channel.alloc().buffer(5).writeBytes(WORDS[WORD_PONG]).writeByte('\n'));
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
        write(pingLines(lines));
    }

    private ByteBuf pingLines(int lines) {
        ByteBuf buf = channel.alloc().buffer(lines * PING_LINE_BYTES);
        for (int i = 0; i < lines; i++) {
            buf.writeBytes(WORDS[WORD_PING]).writeByte('\n');
        }
        return buf;
    }

    /**
     * Stalled, slowreader: small socket buffers and segments, before the connect (see {@link #STALLED_SOCKET_BUFFER});
     * an option the transport does not have is left as it is.
     */
    static void shrinkBuffers(Channel ch) {
        ChannelConfig config = ch.config();
        config.setOption(ChannelOption.SO_RCVBUF, STALLED_SOCKET_BUFFER);
        config.setOption(ChannelOption.SO_SNDBUF, STALLED_SOCKET_BUFFER);
        config.setOption(TCP_MAXSEG, STALLED_MSS);
        config.setWriteBufferWaterMark(STALLED_WATER_MARK);
    }

    /**
     * Stalled, slowreader: writes chunks of filler lines ({@code x}s, shorter than {@code maxLine}) until this channel
     * is unwritable, then flushes; the first call stamps {@link #stallStart}. A failed write is no error
     * (the server's close fails what is still queued).
     *
     * @return the bytes written
     */
    int fillUntilUnwritable(int maxLine) {
        stamp();
        if (unwritableSince != 0) { // writable again: called from channelWritabilityChanged
            longestUnwritable = Math.max(longestUnwritable, lastActivity - unwritableSince);
            unwritableSince = 0;
        }
        if (stallStart == 0) {
            stallStart = lastActivity;
        }
        int lineBytes = Math.min(MAX_STALL_LINE, maxLine);
        int bytes = 0;
        while (channel.isWritable()) {
            ByteBuf chunk = channel.alloc().buffer(STALL_CHUNK_LINES * lineBytes);
            for (int i = 0; i < STALL_CHUNK_LINES; i++) {
                for (int b = 1; b < lineBytes; b++) {
                    chunk.writeByte('x');
                }
                chunk.writeByte('\n');
            }
            bytes += chunk.readableBytes();
            channel.write(chunk);
        }
        channel.flush();
        written += bytes;
        if (!channel.isWritable() && unwritableSince == 0) {
            unwritableSince = System.nanoTime();
        }
        return bytes;
    }

    /**
     * Slowreader: the longest it stayed unwritable, as of {@code now}. Its own outbound buffer stays over
     * its high water mark only while the server does not read it, which the demo server does only while
     * its echoes to it are over its own high water mark: pending all along.
     */
    long longestUnwritableNanos(long now) {
        return Math.max(longestUnwritable, unwritableSince == 0 ? 0 : now - unwritableSince);
    }

    /**
     * Slowreader: its echoes not back yet, in bytes: what it wrote, less what still waits in its own outbound
     * buffer, less what it read. They wait in the kernel's socket buffers of both sides and in the server.
     */
    long echoBacklog() {
        ChannelOutboundBuffer out = channel.unsafe().outboundBuffer();
        return written - (out == null ? 0 : out.totalPendingWriteBytes()) - read;
    }

    /** Stalled, slowreader: the bytes of filler lines written so far. */
    long bytesWritten() {
        return written;
    }

    /** Slowreader: the bytes read back so far. */
    long bytesRead() {
        return read;
    }

    /** Slowreader: its reads so far, as it saw them. */
    ReadLog reads() {
        return reads;
    }

    /** Slowreader: the largest {@link #echoBacklog} so far, as of now. */
    long maxEchoBacklog() {
        return Math.max(maxBacklog, echoBacklog());
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
}
