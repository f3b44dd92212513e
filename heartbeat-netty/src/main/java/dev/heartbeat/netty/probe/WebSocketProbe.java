/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.probe;

import java.lang.reflect.Field;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.ProbePlacement;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectDecoder;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;

/**
 * WebSocket Ping frames carrying the token, answered by Pongs with the same data, and Close goodbyes:
 * the probe {@link Probes#webSocket()} returns (one instance for every channel).
 */
final class WebSocketProbe extends Probe {
    static final WebSocketProbe INSTANCE = new WebSocketProbe();

    @Override
    public String name() {
        return "websocket";
    }

    private WebSocketProbe() {
        super(Matching.BY_TOKEN, true);
    }

    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) {
        ByteBuf data = ctx.alloc().buffer(Long.BYTES, Long.BYTES).writeLong(token);
        return new PingWebSocketFrame(data);
    }

    @Override
    protected boolean isAnswer(Object msg) {
        return msg instanceof PongWebSocketFrame;
    }

    @Override
    protected long tokenOf(Object answer) {
        ByteBuf data = ((PongWebSocketFrame) answer).content();
        // Our pings carry exactly 8 bytes. Other data reads as Long.MIN_VALUE, which, like any foreign
        // token, matches a waiting ping only by a 2^-64 chance per waiting ping (the start is random).
        return data.readableBytes() == Long.BYTES ? data.getLong(data.readerIndex()) : Long.MIN_VALUE;
    }

    @Override
    protected boolean isPeerPing(Object msg) {
        return msg instanceof PingWebSocketFrame;
    }

    @Override
    public boolean recognisesPeerPings() {
        return true;
    }

    @Override
    protected boolean isApplicationMessage(Object msg) {
        return msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame
                || msg instanceof ContinuationWebSocketFrame;
    }

    @Override
    protected boolean isTooManyPings(Object msg) {
        return msg instanceof CloseWebSocketFrame close
                && close.statusCode() == WebSocketCloseStatus.POLICY_VIOLATION.code()
                && Probes.TOO_MANY_PINGS.equals(close.reasonText());
    }

    @Override
    public boolean recognisesTooManyPings() {
        return true;
    }

    /** A Close frame is the last frame either side reads: nothing is answered after it. */
    @Override
    public boolean goodbyeEndsConversation() {
        return true;
    }

    /**
     * A Close frame with the reason's name as its text ({@code too_many_pings} for ping abuse): 1008
     * (policy violation) for a peer that broke the server's rules (ping abuse, not reading:
     * {@code WRITE_STALL}, {@code UNWRITABLE}); 1001 (going away) for every other close, none of which
     * is the peer's fault (RFC 6455 section 7.4.1). 1011 (unexpected condition) fits none of them.
     */
    @Override
    public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        WebSocketCloseStatus status = switch (reason) {
            case PING_ABUSE, WRITE_STALL, UNWRITABLE -> WebSocketCloseStatus.POLICY_VIOLATION;
            default -> WebSocketCloseStatus.ENDPOINT_UNAVAILABLE;
        };
        return new CloseWebSocketFrame(status.code(), Probes.words(reason));
    }

    @Override
    protected String placementAdvice() {
        return "WebSocketServerProtocolHandler (and WebSocketClientProtocolHandler) drop Pong frames by default: "
                + "put the Heartbeat handler before it, or build it with dropPongFrames(false)";
    }

    /**
     * After the WebSocket frame decoder (or the HTTP codec whose place it takes at the handshake), and
     * not after a protocol handler that drops Pong frames (read from its {@code dropPongFrames} field;
     * UNKNOWN if it cannot be read).
     */
    @Override
    protected ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
        String subject = ProbePlacement.subject(ctx, this);
        int self = ProbePlacement.self(ctx).index();
        ChannelPipeline p = ctx.pipeline();
        ProbePlacement.Place decoder = ProbePlacement.first(p, WebSocketFrameDecoder.class::isInstance);
        if (decoder == null) {
            decoder = ProbePlacement.first(p, h -> h instanceof HttpServerCodec || h instanceof HttpClientCodec
                    || h instanceof HttpObjectDecoder);
        }
        if (decoder != null && decoder.index() > self) {
            return ProbePlacement.Finding.wrong(subject + " is before " + decoder.quoted() + ", so it reads "
                    + "bytes, never WebSocket frames: add Heartbeat's handler after " + decoder.quoted()
                    + " (the WebSocket frame decoder takes the HTTP codec's place at the handshake)");
        }
        ProbePlacement.Place protocol = ProbePlacement.first(p, h -> h instanceof WebSocketServerProtocolHandler
                || h instanceof WebSocketClientProtocolHandler);
        if (protocol != null && protocol.index() < self) {
            Boolean drops = dropsPongFrames(protocol.handler());
            String fix = ": put Heartbeat's handler before it, or build it with dropPongFrames(false)";
            if (drops == null) {
                return ProbePlacement.Finding.unknown(subject + " is after " + protocol.quoted()
                        + ", whose dropPongFrames setting cannot be read" + fix);
            }
            if (drops) {
                return ProbePlacement.Finding.wrong(subject + " is after " + protocol.quoted()
                        + ", which drops Pong frames (its default), so no answer reaches it" + fix);
            }
        }
        if (decoder == null && protocol == null) {
            return ProbePlacement.Finding.unknown(subject + " has no WebSocket frame decoder, HTTP codec or "
                    + "WebSocket protocol handler in its pipeline, so its placement cannot be checked: add "
                    + "Heartbeat's handler after the HTTP codec, before WebSocketServerProtocolHandler");
        }
        return ProbePlacement.Finding.FITS;
    }

    /**
     * Whether a WebSocket protocol handler drops Pong frames: its {@code dropPongFrames} field (private in
     * Netty 4.1 and 4.2, read by reflection), or null if it cannot be read.
     */
    private static Boolean dropsPongFrames(ChannelHandler protocol) {
        for (Class<?> c = protocol.getClass(); c != null; c = c.getSuperclass()) {
            Field field;
            try {
                field = c.getDeclaredField("dropPongFrames");
            } catch (NoSuchFieldException e) {
                continue;
            }
            try {
                field.setAccessible(true);
                return field.getBoolean(protocol);
            } catch (ReflectiveOperationException | RuntimeException e) {
                return null;
            }
        }
        return null;
    }
}
