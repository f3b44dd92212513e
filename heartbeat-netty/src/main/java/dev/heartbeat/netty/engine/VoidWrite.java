/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import io.netty.channel.Channel;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.util.concurrent.EventExecutor;

/**
 * The promise a write with the void promise passes on instead, so that its completion is seen; its listener is the
 * handler, notified on the handler's executor. A void promise takes no listener, so a write counted when it
 * completes needs a promise of its own, as {@code IdleStateHandler}'s {@code promise.unvoid()} gives it: one object
 * per such write, where IdleStateHandler's promise also needs a listener array for its second listener (the void
 * promise's failure listener and its own; {@code VoidPromiseTest} measures both). A failure goes to the void
 * promise, which fires it down the pipeline if it is the channel's, as unvoid()'s promise does.
 */
final class VoidWrite extends DefaultChannelPromise {

    /** The application's void promise. */
    final ChannelPromise voidPromise;

    VoidWrite(Channel channel, EventExecutor executor, ChannelPromise voidPromise) {
        super(channel, executor);
        this.voidPromise = voidPromise;
    }
}
