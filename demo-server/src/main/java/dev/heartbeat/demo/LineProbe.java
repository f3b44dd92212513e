/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.nio.charset.StandardCharsets;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.Probe;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;

/**
 * The demo's line protocol as a {@link Probe} whose messages are lines, as {@code LineBasedFrameDecoder}
 * makes them, for the ping policing ({@code --police-pings}): a peer's ping is a {@code PING} line, an
 * answer a {@code PONG} line (in order), and the goodbye the line {@code BYE <REASON>}. Every other line
 * is application traffic, and so is every other write: the server's own {@code PING} and {@code PONG}
 * lines are written with their newline, which is allowed for. Heartbeat's own pings on this protocol
 * keep {@code Probes.of}, before the decoder, where any input answers them.
 *
 * <p>Stateless: one instance for every connection; event loop.
 */
final class LineProbe extends Probe {

    static final LineProbe INSTANCE = new LineProbe();

    private static final byte[] PING = "PING".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PONG = "PONG".getBytes(StandardCharsets.US_ASCII);

    private LineProbe() {
        super(Matching.IN_ORDER, false);
    }

    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) {
        return LineHandler.pingLine();
    }

    @Override
    protected boolean isAnswer(Object msg) {
        return isLine(msg, PONG);
    }

    /** A {@code PING} line: what the policing judges. */
    @Override
    protected boolean isPeerPing(Object msg) {
        return isPing(msg);
    }

    @Override
    public boolean recognisesPeerPings() {
        return true;
    }

    /** The line {@code BYE <REASON>}, as before a close for idleness. */
    @Override
    public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        return LineHandler.goodbyeLine(reason);
    }

    @Override
    public String name() {
        return "line";
    }

    /** Whether {@code msg} is a {@code PING} line, with or without its newline. */
    static boolean isPing(Object msg) {
        return isLine(msg, PING);
    }

    /** Whether {@code msg} is a buffer holding exactly {@code word}, or {@code word} and a newline. */
    private static boolean isLine(Object msg, byte[] word) {
        if (!(msg instanceof ByteBuf line)) {
            return false;
        }
        int n = line.readableBytes();
        int i = line.readerIndex();
        if (n != word.length && (n != word.length + 1 || line.getByte(i + word.length) != '\n')) {
            return false;
        }
        for (int k = 0; k < word.length; k++) {
            if (line.getByte(i + k) != word[k]) {
                return false;
            }
        }
        return true;
    }
}
