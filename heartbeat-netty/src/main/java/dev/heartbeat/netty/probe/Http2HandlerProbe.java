/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.probe;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.ProbePlacement;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2ConnectionDecoder;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2Exception;
import io.netty.handler.codec.http2.Http2FrameListener;
import io.netty.handler.codec.http2.Http2FrameListenerDecorator;
import io.netty.handler.codec.http2.Http2Stream;

/**
 * HTTP/2 PING and GOAWAY through an {@link Http2ConnectionHandler}'s own encoder and decoder, for
 * pipelines without {@code Http2FrameCodec} (a handler that subclasses {@code Http2ConnectionHandler}, such
 * as gRPC-java's {@code NettyServerHandler}, which accepts no frame objects): the probe
 * {@link Probes#http2ConnectionHandler()} returns (one instance for every channel).
 */
final class Http2HandlerProbe extends Probe {

    /*
     * How. The Heartbeat handler sits after the connection handler (towards the tail). The first ping decorates the
     * handler's decoder's frame listener with an AckListener (one per connection, which also holds the window of our
     * tokens); each ping goes out through encoder().writePing on the connection handler's context, past the handler's
     * write(), which refuses messages it does not know. An ACK whose data is one of our waiting tokens is kept from
     * the handler's own listener and fired from the connection handler's context as an Ack message: the Heartbeat
     * handler after it reads it, matches it by token and consumes it. Every other frame goes to the handler's
     * listener as before. The goodbye is the handler's goAway() (so the connection knows it was sent and the last
     * stream id is the real one); the close that follows it, Heartbeat's ctx.close(), passes through the handler's
     * close(), which is its graceful shutdown: Netty's waits for the open streams up to its
     * gracefulShutdownTimeoutMillis, gRPC's sends its own GOAWAY-ping-GOAWAY first.
     *
     * Max age in two phases, as gRPC's server and Probes.http2() say it. Heartbeat writes the first half and its ping
     * as messages from its own context (ctx.write(warning), ctx.writeAndFlush(newPing(GOODBYE_TOKEN))), which the
     * connection handler would refuse (gRPC's throws an AssertionError for anything but its commands). So
     * newGoodbyeWarning puts a WarningWriter between the connection handler and Heartbeat's handler: it turns the
     * Warning into the handler's goAway(2^31 - 1, NO_ERROR) and the Long that follows it (the goodbye's ping, the only
     * ping Heartbeat writes from its context; the others go through writePing) into encoder().writePing, tells the
     * AckListener to wait for that token, and removes itself. The ACK of that ping is fired as an Ack to Heartbeat's
     * handler, whose max-age rule sends the final half (newGoodbye: the real last stream id).
     */

    static final Http2HandlerProbe INSTANCE = new Http2HandlerProbe();

    /** The answer the {@link AckListener} fires towards the Heartbeat handler: a PING ACK of one of our pings. */
    record Ack(long token) {
    }

    /** The first half of the two-phase goodbye, for the {@link WarningWriter} to say through the handler. */
    record Warning(CloseReason reason) {
    }

    private Http2HandlerProbe() {
        super(Matching.BY_TOKEN, true);
    }

    @Override
    public String name() {
        return "http2";
    }

    /** The token, written by {@link #writePing} through the connection handler's encoder (16 B per ping). */
    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) {
        return token;
    }

    @Override
    protected ChannelFuture writePing(ChannelHandlerContext ctx, Object ping) {
        ChannelHandlerContext h2 = ctx.pipeline().context(Http2ConnectionHandler.class);
        if (h2 == null) {
            return ctx.newFailedFuture(new IllegalStateException(ProbePlacement.subject(ctx, this)
                    + " found no Http2ConnectionHandler in its pipeline to ping through"));
        }
        long token = (Long) ping;
        AckListener.of(h2).wrote(token);
        Http2ConnectionHandler handler = (Http2ConnectionHandler) h2.handler();
        ChannelFuture f = handler.encoder().writePing(h2, false, token, h2.newPromise());
        h2.flush();
        return f;
    }

    @Override
    protected boolean isAnswer(Object msg) {
        return msg instanceof Ack;
    }

    @Override
    protected long tokenOf(Object answer) {
        return ((Ack) answer).token();
    }

    /**
     * GOAWAY through the connection handler's {@code goAway}, with the last stream the peer opened and the
     * error code and debug data of {@link Probes#http2()}'s: {@code ENHANCE_YOUR_CALM} for ping abuse
     * ({@code too_many_pings}), a write stall and an unwritable channel, after which Netty closes the
     * connection as soon as the frame is written; {@code NO_ERROR} with the reason's name for every other
     * reason. A peer that stopped answering pings ({@code PING_TIMEOUT}) will not finish its streams either:
     * its connection is closed once the GOAWAY is written, without waiting for them. For the other reasons
     * the close goes through the handler's graceful shutdown: at maximum age as soon as the last stream ends
     * (or at the grace's end, when Heartbeat closes), for the others when Heartbeat closes right after the
     * GOAWAY. Nothing is left for Heartbeat to write: returns null.
     */
    @Override
    public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        ChannelHandlerContext h2 = ctx.pipeline().context(Http2ConnectionHandler.class);
        if (h2 == null || !ctx.channel().isActive()) {
            return null;
        }
        Http2ConnectionHandler handler = (Http2ConnectionHandler) h2.handler();
        Http2Error error = switch (reason) {
            case PING_ABUSE, WRITE_STALL, UNWRITABLE -> Http2Error.ENHANCE_YOUR_CALM;
            default -> Http2Error.NO_ERROR;
        };
        ChannelFuture f = handler.goAway(h2, handler.connection().remote().lastStreamCreated(), error.code(),
                ByteBufUtil.writeAscii(h2.alloc(), Probes.words(reason)), h2.newPromise());
        h2.flush();
        if (reason == CloseReason.PING_TIMEOUT) {
            f.addListener((ChannelFutureListener) written -> h2.close());
        } else if (reason == CloseReason.MAX_AGE) {
            closeWhenStreamsEnd(h2, handler.connection());
        }
        return null;
    }

    /**
     * At maximum age, whose close Heartbeat makes only at the grace's end: the connection is closed as soon as
     * its last stream ends, through the handler's graceful shutdown (from the tail), as the handler's own close
     * does for the streams it waits for.
     */
    private static void closeWhenStreamsEnd(ChannelHandlerContext h2, Http2Connection connection) {
        if (connection.numActiveStreams() == 0) {
            h2.executor().execute(() -> h2.channel().close());
            return;
        }
        connection.addListener(new Http2ConnectionAdapter() {
            @Override
            public void onStreamClosed(Http2Stream stream) {
                if (connection.numActiveStreams() == 0) {
                    connection.removeListener(this);
                    h2.executor().execute(() -> h2.channel().close()); // not in the middle of the stream's close
                }
            }
        });
    }

    @Override
    public boolean hasTwoPhaseGoodbye() {
        return true;
    }

    /**
     * The first half of the goodbye at maximum age, as gRPC-java's server says it: GOAWAY {@code NO_ERROR} with
     * the largest stream id (2^31 - 1) and the reason's name, so that the streams the peer opens before it has
     * read it still count; then (Heartbeat's goodbye ping) a PING, whose ACK proves the peer has read it, and the
     * final half ({@link #newGoodbye}) names the real last stream. Both go through the connection handler's
     * {@code goAway} and encoder, by a {@link WarningWriter} put before Heartbeat's handler for them. Null (the
     * goodbye in one half) without a connection handler or on a closed channel.
     */
    @Override
    public Object newGoodbyeWarning(ChannelHandlerContext ctx, CloseReason reason) {
        ChannelHandlerContext h2 = ctx.pipeline().context(Http2ConnectionHandler.class);
        if (h2 == null || !ctx.channel().isActive()) {
            return null;
        }
        if (ctx.pipeline().get(WarningWriter.class) == null) {
            ctx.pipeline().addAfter(h2.name(), null, new WarningWriter(h2));
        }
        return new Warning(reason);
    }

    @Override
    protected String placementAdvice() {
        return "put the Heartbeat handler after the Http2ConnectionHandler, from whose context the PING ACKs come";
    }

    @Override
    protected ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
        String subject = ProbePlacement.subject(ctx, this);
        ProbePlacement.Place h2 = ProbePlacement.first(ctx.pipeline(), Http2ConnectionHandler.class::isInstance);
        if (h2 == null) {
            return ProbePlacement.Finding.unknown(subject + " has no Http2ConnectionHandler in its pipeline (yet), so "
                    + "its placement cannot be checked: add Heartbeat's handler after it");
        }
        return h2.index() < ProbePlacement.self(ctx).index() ? ProbePlacement.Finding.FITS
                : ProbePlacement.Finding.wrong(subject + " is before the Http2ConnectionHandler " + h2.quoted()
                        + ", so the PING ACKs fired from its context never reach it: add Heartbeat's handler after "
                        + h2.quoted());
    }

    /**
     * The connection handler's frame listener, decorated: PING ACKs of our waiting pings go to the Heartbeat
     * handler, everything else to the handler's own listener. One per connection, made by the first ping; it
     * holds the window of our waiting tokens as the Heartbeat handler does (the latest and how many before
     * it), so acks of the handler's own pings (gRPC's keep-alive, flow control and shutdown pings) are not
     * taken.
     */
    static final class AckListener extends Http2FrameListenerDecorator {
        private long latest;
        private int waiting;
        /** The token of the goodbye's ping, while its ACK is awaited. */
        private long goodbye;
        private boolean goodbyeWaiting;

        private AckListener(Http2FrameListener listener) {
            super(listener);
        }

        /** The connection handler's decorated listener, decorating it now if it is not yet. */
        static AckListener of(ChannelHandlerContext h2) {
            Http2ConnectionDecoder decoder = ((Http2ConnectionHandler) h2.handler()).decoder();
            Http2FrameListener listener = decoder.frameListener();
            if (listener instanceof AckListener ours) {
                return ours;
            }
            AckListener ours = new AckListener(listener);
            decoder.frameListener(ours);
            return ours;
        }

        void wrote(long token) {
            waiting = waiting > 0 && token == latest + 1 && waiting < Integer.MAX_VALUE ? waiting + 1 : 1;
            latest = token;
        }

        void wroteGoodbye(long token) {
            goodbye = token;
            goodbyeWaiting = true;
        }

        @Override
        public void onPingAckRead(ChannelHandlerContext ctx, long data) throws Http2Exception {
            if (goodbyeWaiting && data == goodbye) {
                goodbyeWaiting = false;
                ctx.fireChannelRead(new Ack(data)); // to Heartbeat's max-age rule: the final half
                return;
            }
            long age = latest - data;
            if (age >= 0 && age < waiting) {
                waiting = (int) age; // the pings older than this one are settled too
                ctx.fireChannelRead(new Ack(data));
            } else {
                super.onPingAckRead(ctx, data);
            }
        }
    }

    /**
     * Writes the first half of the two-phase goodbye and its ping through the connection handler, which would
     * refuse them as messages: between the connection handler and Heartbeat's handler from
     * {@link #newGoodbyeWarning} until the ping has passed. Everything else passes on.
     */
    static final class WarningWriter extends ChannelOutboundHandlerAdapter {
        private final ChannelHandlerContext h2;
        private boolean warned;

        WarningWriter(ChannelHandlerContext h2) {
            this.h2 = h2;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
            Http2ConnectionHandler handler = (Http2ConnectionHandler) h2.handler();
            if (msg instanceof Warning warning) {
                warned = true;
                handler.goAway(h2, Integer.MAX_VALUE, Http2Error.NO_ERROR.code(),
                        ByteBufUtil.writeAscii(h2.alloc(), warning.reason().name()), promise);
            } else if (warned && msg instanceof Long token) {
                ctx.pipeline().remove(this);
                AckListener.of(h2).wroteGoodbye(token);
                handler.encoder().writePing(h2, false, token, promise);
            } else {
                ctx.write(msg, promise);
            }
        }
    }
}
