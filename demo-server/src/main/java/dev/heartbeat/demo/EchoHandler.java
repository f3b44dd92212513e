/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.io.IOException;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatCloseEvent;
import dev.heartbeat.netty.HeartbeatGoodbyeEvent;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.AttributeKey;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every protocol's echo handler does alike, at the end of its pipeline: counts connections,
 * flushes once per read batch, stops reading from a client whose echoes are not drained, says
 * goodbye before a close for idleness ({@link HeartbeatCloseEvent}, fired by Heartbeat and by the
 * {@code --idle-impl netty} handlers alike; not before a close for ping abuse, whose goodbye the ping
 * policing writes itself), and closes a connection after an exception. One
 * instance serves every connection of a server; event loop only.
 */
abstract class EchoHandler extends ChannelInboundHandlerAdapter {

    private static final Logger LOG = LoggerFactory.getLogger(EchoHandler.class);

    /**
     * The reason a channel was told goodbye for ahead of its close ({@link HeartbeatGoodbyeEvent}: at
     * max age, before the grace; a drain), so the close for it says nothing more. An attribute: the
     * handler is shared.
     */
    private static final AttributeKey<CloseReason> TOLD = AttributeKey.valueOf(EchoHandler.class, "told");

    final DemoCounters counters;
    /**
     * Whether Heartbeat writes the protocol's goodbye itself (its configuration has a goodbye probe):
     * then this handler says none, since Heartbeat tells a channel one goodbye, before every close it makes.
     */
    private final boolean heartbeatSaysGoodbyes;

    EchoHandler(DemoCounters counters) {
        this(counters, false);
    }

    EchoHandler(DemoCounters counters, boolean heartbeatSaysGoodbyes) {
        this.counters = counters;
        this.heartbeatSaysGoodbyes = heartbeatSaysGoodbyes;
    }

    /**
     * Writes the protocol's goodbye naming {@code reason}, if it has one and can send it now; the
     * close follows right after this returns.
     */
    abstract void sayGoodbye(ChannelHandlerContext ctx, CloseReason reason);

    /**
     * Whether this handler writes the goodbye itself when Heartbeat announces one ahead of the close
     * ({@link HeartbeatGoodbyeEvent}: at max age, before the grace; a drain). False where Heartbeat's
     * goodbye probe writes it (HTTP/2 under the ping policy: the two-phase GOAWAY) or where the goodbye
     * would end the connection at once (a WebSocket Close frame, which the client answers with its own):
     * those say it at the close, as before.
     */
    boolean saysGoodbyeAhead() {
        return false;
    }

    /** Handles an exception its own way (and closes), or returns false for the common handling. */
    boolean handle(ChannelHandlerContext ctx, Throwable cause) {
        return false;
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
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ctx.flush(); // one flush per read batch, not per message
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
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            return; // the event policy: already counted by the monitor or the A/B handler
        }
        if (evt instanceof HeartbeatGoodbyeEvent bye && !heartbeatSaysGoodbyes && ctx.channel().isActive()
                && saysGoodbyeAhead()
                && ctx.channel().attr(TOLD).setIfAbsent(bye.reason()) == null) {
            // At the age (a grace before the close) or a drain: the client is told now, to finish and leave.
            sayGoodbye(ctx, bye.reason());
        }
        // PING_ABUSE: the ping policing writes the protocol's own goodbye (GOAWAY ENHANCE_YOUR_CALM, Close 1008).
        if (evt instanceof HeartbeatCloseEvent close && !heartbeatSaysGoodbyes
                && close.reason() != CloseReason.PING_ABUSE && ctx.channel().isActive() && !told(ctx, close.reason())) {
            sayGoodbye(ctx, close.reason());
        }
        ctx.fireUserEventTriggered(evt);
    }

    /** Whether the channel was already told goodbye for {@code reason} ahead of this close. */
    private static boolean told(ChannelHandlerContext ctx, CloseReason reason) {
        return ctx.channel().hasAttr(TOLD) && ctx.channel().attr(TOLD).get() == reason;
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated in ChannelHandler, current in ChannelInboundHandler
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Channel ch = ctx.channel();
        if (!ch.isOpen()) {
            return; // already closing: count each connection once
        }
        if (handle(ctx, cause)) {
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
