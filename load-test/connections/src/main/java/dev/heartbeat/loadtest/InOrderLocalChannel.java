/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import io.netty.channel.ChannelPipeline;
import io.netty.channel.local.LocalChannel;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Queue;

/**
 * The clients' end on Netty's local transport: a {@link LocalChannel} that, when its peer closes it, first reads
 * what the peer wrote before that close, as a TCP socket reads the bytes that came before the FIN.
 *
 * <p>Netty's own can drop them. When the peer writes while this end is inside a write of its own, the peer hands
 * the read over as a task whose future it keeps; when that task runs, it finds its own future not done, so it
 * queues itself again, now behind the close the peer queued after its write; the close releases whatever is still
 * unread ({@code LocalChannel.finishPeerRead0} and {@code doClose}, Netty 4.1 and 4.2). A server's last write before
 * its close is its goodbye (a drain's, a max age's): a client that writes at that moment lost it, and judged a
 * drained connection closed early without one (seen once in CI, in {@code InProcessRunTest}'s drain, on an active
 * connection). {@code InOrderLocalChannelTest} meets the race every time and checks both channels.
 *
 * <p>Only a close by the peer reads first: a close of this end's own drops what it had not read, as Netty's does.
 * The two fields are Netty's private ones, looked up once; a Netty without them fails at the first local run, not
 * silently.
 */
public final class InOrderLocalChannel extends LocalChannel {

    private static final VarHandle INBOUND;
    private static final VarHandle PEER;

    static {
        try {
            MethodHandles.Lookup netty = MethodHandles.privateLookupIn(LocalChannel.class, MethodHandles.lookup());
            INBOUND = netty.findVarHandle(LocalChannel.class, "inboundBuffer", Queue.class);
            PEER = netty.findVarHandle(LocalChannel.class, "peer", LocalChannel.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError("this Netty's LocalChannel has no inboundBuffer or peer field "
                    + "(see InOrderLocalChannelTest): " + e);
        }
    }

    /** For {@code Bootstrap.channel}. */
    public InOrderLocalChannel() {
        super();
    }

    @Override
    protected void doClose() throws Exception {
        LocalChannel peer = (LocalChannel) PEER.get(this);
        @SuppressWarnings("unchecked")
        Queue<Object> unread = (Queue<Object>) INBOUND.get(this);
        if (peer != null && !peer.isOpen() && isActive() && !unread.isEmpty()) {
            ChannelPipeline pipeline = pipeline();
            for (Object msg = unread.poll(); msg != null; msg = unread.poll()) {
                pipeline.fireChannelRead(msg);
            }
            pipeline.fireChannelReadComplete();
        }
        super.doClose();
    }
}
