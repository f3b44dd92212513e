/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import io.netty.channel.ChannelHandlerContext;

/**
 * A line protocol's probe for tests on an {@code EmbeddedChannel}, made with the public API only: the
 * ping is the string {@code "PING"}, its answer {@code "PONG"} (matched in order, consumed), the
 * goodbye {@code "BYE <reason>"}. Stateless; one instance serves every channel.
 */
final class LineProbe extends Probe {

    static final LineProbe INSTANCE = new LineProbe();
    static final String PING = "PING";
    static final String PONG = "PONG";
    static final String BYE = "BYE ";

    private LineProbe() {
        super(Matching.IN_ORDER, true);
    }

    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) {
        return PING;
    }

    @Override
    protected boolean isAnswer(Object msg) {
        return PONG.equals(msg);
    }

    @Override
    public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        return BYE + reason;
    }

    @Override
    public String name() {
        return "line";
    }
}
