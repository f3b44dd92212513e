/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.embedded.EmbeddedChannel;

/**
 * An {@link EmbeddedChannel} whose peer can stop reading, as a real socket's peer can: while it does
 * not read, flushed writes stay in the outbound buffer and their promises stay uncompleted (as on a
 * socket whose send buffer is full); once it reads again, what was flushed is written and completes.
 * Test thread only, as the channel.
 */
final class PeerChannel extends EmbeddedChannel {

    private boolean reading = true;

    PeerChannel(ChannelHandler... handlers) {
        super(handlers);
    }

    /** The peer stops reading: flushes leave the flushed writes pending. */
    void stopReading() {
        reading = false;
    }

    /** The peer reads again: the flushed writes waiting in the outbound buffer are written now, and complete. */
    void readAgain() {
        reading = true;
        ChannelOutboundBuffer buffer = unsafe().outboundBuffer();
        if (buffer != null) {
            try {
                doWrite(buffer); // only the flushed entries: a write not flushed yet stays
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    /** Whether the peer reads. */
    boolean reading() {
        return reading;
    }

    @Override
    protected void doWrite(ChannelOutboundBuffer in) throws Exception {
        if (reading) {
            super.doWrite(in);
        }
    }
}
