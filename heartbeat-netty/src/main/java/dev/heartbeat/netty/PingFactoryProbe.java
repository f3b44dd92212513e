/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import io.netty.channel.ChannelHandlerContext;

/**
 * The probe of {@link HeartbeatConfig#ping(PingFactory)}: the factory's message as the ping, answers not
 * recognised ({@link Probe.Matching#NONE}), so any read settles a ping ({@link AckMode#ANY_INBOUND}).
 * It behaves as {@code dev.heartbeat.netty.probe.Probes.of(factory)}; it lives here because the
 * configuration needs it and this package does not depend on the probe package.
 */
final class PingFactoryProbe extends Probe {
    private final PingFactory factory;

    PingFactoryProbe(PingFactory factory) {
        super(Matching.NONE, false);
        this.factory = factory;
    }

    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) throws Exception {
        return factory.newPing(ctx.channel());
    }

    /** Never called: a probe of {@link Probe.Matching#NONE} recognises no answer. */
    @Override
    protected boolean isAnswer(Object msg) {
        return false;
    }
}
