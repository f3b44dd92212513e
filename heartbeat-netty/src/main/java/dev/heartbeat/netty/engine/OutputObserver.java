/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;

/**
 * {@code IdleStateHandler}'s {@code observeOutput}: whether the outbound buffer moved between two
 * checks. Event loop only; allocated only for configurations that observe output. It does not keep
 * the channel (the handler passes it in): that would be 8 more bytes per observing channel. It
 * carries the worker's all-idle check time too ({@link AllIdleCheck}), for a configuration that
 * enables all three idle kinds and observes output.
 */
public final class OutputObserver extends AllIdleCheck {

    private long lastWriteSeen;
    private int lastMessageHash;
    private long lastPendingBytes;
    private long lastFlushProgress;

    OutputObserver(Channel channel, long lastWrite) {
        snapshot(channel, lastWrite);
    }

    /** Takes the outbound buffer's state as it is now, as a new IdleStateHandler does when it starts. */
    void snapshot(Channel channel, long lastWrite) {
        lastWriteSeen = lastWrite;
        ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
        if (buf != null) {
            lastMessageHash = System.identityHashCode(buf.current());
            lastPendingBytes = buf.totalPendingWriteBytes();
            lastFlushProgress = buf.currentProgress();
        }
    }

    boolean changed(Channel channel, boolean first, long lastWrite) {
        if (lastWriteSeen != lastWrite) {
            lastWriteSeen = lastWrite;
            if (!first) {
                return true; // writes complete: change at message level
            }
        }
        ChannelOutboundBuffer buf = channel.unsafe().outboundBuffer();
        if (buf == null) {
            return false;
        }
        int messageHash = System.identityHashCode(buf.current());
        long pendingBytes = buf.totalPendingWriteBytes();
        if (messageHash != lastMessageHash || pendingBytes != lastPendingBytes) {
            lastMessageHash = messageHash;
            lastPendingBytes = pendingBytes;
            if (!first) {
                return true;
            }
        }
        long flushProgress = buf.currentProgress();
        if (flushProgress != lastFlushProgress) {
            lastFlushProgress = flushProgress;
            return !first;
        }
        return false;
    }
}
