/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.util.Map;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;

/**
 * The outbound side of a Heartbeat handler that was made inbound-only (its first configuration
 * tracked no writes) and then reconfigured to track writes: it sits right after the handler, on
 * the tail side, and hands every write and flush that passes it to the handler, as a
 * {@link HeartbeatHandler.Duplex} does for its own (the flush settles the latest write, see
 * {@link HeartbeatHandler#onWrite}); Netty skips it for every other outbound operation. Added at
 * most once per handler, by the reconfiguration, on the handler's executor (the
 * channel's event loop, or the executor the handler was added with: the tracker changes the
 * handler's state, so it runs where the handler does); removed with the handler when the handler is
 * removed from an open channel; once the handler's configuration tracks no writes any more it passes
 * writes on untouched.
 *
 * <p>The one difference from a handler that was duplex from the start: a write made by a handler
 * that is later inserted between the two (with {@code addAfter} on the Heartbeat handler's name)
 * passes neither, so it is not counted. The handler's own pings pass neither, as they pass no
 * duplex handler's own {@code write}. The handler's executor only; not sharable.
 */
public final class WriteTracker extends ChannelOutboundHandlerAdapter implements HeartbeatHandler.WriteSite {

    private final HeartbeatHandler handler;
    /** The latest tracked write's promise not settled yet, or null. The handler's executor only. */
    private ChannelPromise pendingWrite;

    private WriteTracker(HeartbeatHandler handler) {
        this.handler = handler;
    }

    /**
     * The handler's executor: gives {@code handler}, at {@code ctx}, a tracker right after it, unless it
     * has one, on the handler's executor. A handler on the channel's event loop gets one that follows
     * the channel's event loop, as the handler does when the channel moves to another.
     */
    @SuppressWarnings("deprecation") // adding with an EventExecutorGroup: deprecated in Netty 4.2, still supported
    static void addAfter(ChannelHandlerContext ctx, HeartbeatHandler handler) {
        if (ctx.isRemoved() || find(ctx.pipeline(), handler) != null) {
            return;
        }
        Channel channel = ctx.channel();
        EventExecutor executor = ctx.executor();
        EventExecutorGroup own = channel.isRegistered() && executor == channel.eventLoop() ? null : executor;
        ctx.pipeline().addAfter(own, ctx.name(), null, new WriteTracker(handler)); // a generated name: no clash
    }

    /** The handler's executor: removes {@code handler}'s tracker from {@code pipeline}, if it has one. */
    static void removeFrom(ChannelPipeline pipeline, HeartbeatHandler handler) {
        WriteTracker tracker = find(pipeline, handler);
        if (tracker != null) {
            pipeline.remove(tracker);
        }
    }

    static WriteTracker find(ChannelPipeline pipeline, HeartbeatHandler handler) {
        for (Map.Entry<String, ChannelHandler> e : pipeline) {
            if (e.getValue() instanceof WriteTracker t && t.handler == handler) {
                return t;
            }
        }
        return null;
    }

    @Override
    public ChannelPromise pendingWrite() {
        return pendingWrite;
    }

    @Override
    public void pendingWrite(ChannelPromise promise) {
        pendingWrite = promise;
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        handler.onWrite(this, ctx, msg, promise);
    }

    @Override
    public void flush(ChannelHandlerContext ctx) {
        handler.onFlush(this, ctx);
    }

    @Override
    public String toString() {
        return "WriteTracker[" + handler + "]";
    }
}
