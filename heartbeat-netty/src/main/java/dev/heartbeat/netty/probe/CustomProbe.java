/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.probe;

import java.util.function.Predicate;

import dev.heartbeat.netty.PingFactory;
import dev.heartbeat.netty.Probe;
import io.netty.channel.ChannelHandlerContext;

/**
 * A probe around a {@link PingFactory}: answers in order, or not recognised at all
 * ({@link Probes#custom}, {@link Probes#of}).
 */
final class CustomProbe extends Probe {
    private final PingFactory ping;
    private final Predicate<Object> isAnswer;

    CustomProbe(PingFactory ping, Predicate<Object> isAnswer, Matching matching, boolean consumeAnswers) {
        super(matching, consumeAnswers);
        this.ping = ping;
        this.isAnswer = isAnswer;
    }

    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) throws Exception {
        return ping.newPing(ctx.channel());
    }

    @Override
    protected boolean isAnswer(Object msg) {
        return isAnswer.test(msg);
    }
}
