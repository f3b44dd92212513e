/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import io.netty.channel.ChannelHandlerContext;

/**
 * The drain ({@link HeartbeatMonitor#drain}): every channel is given a slot of the drain's window,
 * and when its slot comes it is told its goodbye and closed for DRAIN. Part of every configuration.
 * A terminal decision: the slot outlives a reconfiguration (it is kept in the handler's judgement
 * word, and folded into every placement of the entry, see {@code HeartbeatHandler.coalesce}), and
 * its bit is performed even when the configuration changed since it was judged.
 */
public final class DrainRule extends Rule {

    public static final DrainRule INSTANCE = new DrainRule();

    private DrainRule() {
    }

    @Override
    public int bits() {
        return ActionBits.DRAIN;
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        return h.takeDrainSlotIfDue(now) ? ActionBits.DRAIN : 0; // its look is in every placement
    }

    @Override
    void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now) {
        CloseSequence.drain(h, ctx);
    }
}
