/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.CloseSequence;
import dev.heartbeat.netty.engine.MonitorEngine;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;

/**
 * One channel's {@link PingPolicing}: judges each peer ping as it arrives. Event loop only (every
 * field is the event loop's); not sharable. Allocates nothing until it closes a channel.
 */
final class PingPolicingHandler extends ChannelDuplexHandler {

    private final PingPolicing policing;
    private final MonitorEngine monitor;
    /** Ticker time of the latest accepted peer ping, or of the channel becoming active. */
    private long lastAccepted;
    /** Too-early pings since the strikes were last forgiven. */
    private int strikes;
    /** An application message was read or written since the latest accepted peer ping. */
    private boolean traffic;
    /** The channel is being closed for ping abuse: judge nothing more. */
    private boolean enforced;

    public PingPolicingHandler(PingPolicing policing, MonitorEngine monitor) {
        this.policing = policing;
        this.monitor = monitor;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        lastAccepted = monitor.ticker.nanoTime(); // and again at channelActive, if it is not active yet
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        lastAccepted = monitor.ticker.nanoTime();
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        Probe probe = policing.probe;
        if (probe.isPeerPing(msg)) {
            if (!enforced && !accept(monitor.ticker.nanoTime())) {
                enforce(ctx);
            }
        } else if (probe.isApplicationMessage(msg)) {
            forgive(); // a request: the peer's pings may be part of the conversation
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (policing.probe.isApplicationMessage(msg)) {
            forgive(); // the application is answering this peer, as gRPC forgives on headers or data sent
        }
        ctx.write(msg, promise);
    }

    /** An application message was read or written: there was traffic, and the strikes are forgiven. */
    private void forgive() {
        traffic = true;
        strikes = 0;
    }

    /** Whether a peer ping at {@code now} is acceptable; a too-early one is a strike. */
    private boolean accept(long now) {
        long min = traffic ? policing.minIntervalNanos : policing.minIntervalWithoutTrafficNanos;
        if (now - lastAccepted >= min) {
            lastAccepted = now;
            traffic = false;
            return true;
        }
        return ++strikes <= policing.maxStrikes;
    }

    /**
     * Announces, says goodbye in the protocol's words, and closes once the goodbye is written, or
     * {@link Guards#GOODBYE_WRITE_WAIT_NANOS} later if its write hangs (a flooder that reads nothing).
     */
    private void enforce(ChannelHandlerContext ctx) {
        enforced = true;
        monitor.closing(ctx.channel(), CloseReason.PING_ABUSE, 0);
        ctx.fireUserEventTriggered(HeartbeatCloseEvent.of(CloseReason.PING_ABUSE));
        if (!ctx.channel().isOpen()) {
            return; // a handler closed it in reaction to the event
        }
        Object goodbye;
        try {
            goodbye = policing.probe.newGoodbye(ctx, CloseReason.PING_ABUSE);
        } catch (RuntimeException e) {
            ctx.fireExceptionCaught(e);
            goodbye = null;
        }
        if (goodbye == null) {
            ctx.close();
        } else {
            // From the tail, so every encoder sees it, as Heartbeat's pings are written.
            CloseSequence.closeWhenWritten(ctx, ctx.channel().writeAndFlush(goodbye));
        }
    }

    /** For tests: the strikes counted now. */
    int strikes() {
        return strikes;
    }
}
