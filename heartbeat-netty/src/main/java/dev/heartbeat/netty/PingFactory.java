/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import io.netty.channel.Channel;

/**
 * Makes the heartbeat message the ping policy writes. Called on the channel's event loop, once per
 * ping; the message is written from the tail of the pipeline, so encoders see it. Return a new
 * message each time (a {@code ByteBuf} is released by the write), for example
 * {@code ch -> ch.alloc().buffer(6).writeBytes(PING_BYTES)} or {@code ch -> PING.retainedDuplicate()}.
 */
@FunctionalInterface
public interface PingFactory {

    /**
     * A new ping for {@code channel}.
     *
     * @throws Exception if no ping can be made; it is passed to {@code exceptionCaught}
     */
    Object newPing(Channel channel) throws Exception;
}
