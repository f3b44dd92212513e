/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.HeartbeatConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateEvent;

/**
 * The drop-in policy ({@link HeartbeatConfig#events()}): fires Netty's own {@link IdleStateEvent}
 * constants, in {@code IdleStateHandler}'s order and cadence, so code written for it works unchanged.
 * Judging is {@link IdlePolicy}'s; this class is what the event loop does with the verdict. Stateless.
 */
public final class EventPolicy extends IdlePolicy {

    public static final EventPolicy INSTANCE = new EventPolicy();

    private EventPolicy() {
    }

    @Override
    public HeartbeatConfig.Policy kind() {
        return HeartbeatConfig.Policy.EVENT;
    }

    /** Fires the idle events of {@code bits} in IdleStateHandler's order, each only while the channel can take it. */
    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        int serial = h.serial();
        int order = order(bits);
        for (int i = 0; i < 3; i++) {
            int kind = CheckOrder.kindAt(order, i);
            if (!h.canStillAct(serial)) {
                return; // a user handler closed, removed or reconfigured in reaction to the last event
            }
            if (idle(h, kind, cfg, bits, now)) {
                h.bound().monitor.idleEvent(kind);
                ctx.fireUserEventTriggered(event(kind, first(kind, bits)));
            }
        }
    }

    private static IdleStateEvent event(int kind, boolean first) {
        switch (kind) {
            case CheckOrder.READER:
                return first ? IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT : IdleStateEvent.READER_IDLE_STATE_EVENT;
            case CheckOrder.WRITER:
                return first ? IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT : IdleStateEvent.WRITER_IDLE_STATE_EVENT;
            default:
                return first ? IdleStateEvent.FIRST_ALL_IDLE_STATE_EVENT : IdleStateEvent.ALL_IDLE_STATE_EVENT;
        }
    }
}
