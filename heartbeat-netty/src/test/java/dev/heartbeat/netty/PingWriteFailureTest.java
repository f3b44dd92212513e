/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.time.Duration;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.UnsupportedMessageTypeException;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

/**
 * Fail closed (issue 26, item 16): a probe whose pings can never be written (placed where its frame
 * type is refused, as gRPC-java's {@code NettyServerHandler} refuses {@code Http2PingFrame}) still
 * closes a silent peer within interval + maxMissedPings x timeout, as PING_TIMEOUT, and never a peer
 * that talks. In virtual time, one millisecond at a time.
 */
class PingWriteFailureTest {

    private static final long INTERVAL_MS = 10_000;
    private static final long TIMEOUT_MS = 5_000;
    private static final int MAX_MISSED = 2;
    /** The documented bound for a silent peer: interval + maxMissedPings x timeout. */
    private static final long BOUND_MS = INTERVAL_MS + MAX_MISSED * TIMEOUT_MS;

    /** Fails every write of an HTTP/2 PING, as a handler that does not know the frame type does. */
    static final class RefusesPings extends ChannelOutboundHandlerAdapter {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg instanceof Http2PingFrame) {
                ReferenceCountUtil.release(msg);
                promise.setFailure(new UnsupportedMessageTypeException(msg, Http2PingFrame.class));
            } else {
                ctx.write(msg, promise);
            }
        }
    }

    private static HeartbeatConfig config(AckMode mode) {
        return HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofMillis(INTERVAL_MS))
                .timeout(Duration.ofMillis(TIMEOUT_MS)).maxMissedPings(MAX_MISSED).ackMode(mode).build();
    }

    /** {@code millis} of virtual time, the worker and the event loop each running every millisecond. */
    private static void step(VirtualTime.World w, long millis) {
        for (long i = 0; i < millis; i++) {
            w.advance(1);
        }
    }

    @Test
    void aSilentPeerIsClosedWithinTheBoundThoughNoPingCanBeWritten() {
        for (AckMode mode : AckMode.values()) {
            try (VirtualTime.World w = new VirtualTime.World(30)) {
                EmbeddedChannel ch = w.channel(new RefusesPings(), w.monitor.newHandler(config(mode)));
                long ms = 0;
                for (; ch.isOpen() && ms < 3 * BOUND_MS; ms++) {
                    step(w, 1);
                }
                assertFalse(ch.isOpen(), mode + ": a silent peer is closed though its pings all failed");
                assertTrue(ms >= BOUND_MS, mode + ": never before the bound, closed at " + ms + " ms");
                assertTrue(ms <= BOUND_MS + 3, mode + ": within the bound (and a tick), closed at " + ms + " ms");
                assertEquals(1, w.monitor.stats().closedPingTimeout(), mode.toString());
                assertEquals(new ProbeStats("http2", 0, 0, 0, MAX_MISSED), w.monitor.stats().pings("http2"),
                        mode + ": each failed ping counted as failed, none as sent or missed");
            }
        }
    }

    @Test
    void aPeerThatTalksIsNotClosedThoughNoPingCanBeWritten() {
        for (AckMode mode : AckMode.values()) {
            try (VirtualTime.World w = new VirtualTime.World(30)) {
                EmbeddedChannel ch = w.channel(new RefusesPings(), w.monitor.newHandler(config(mode)));
                for (int i = 0; i < 8; i++) {
                    // Each gap holds a failed ping, counted as missed, and its failed resend: a read forgives them.
                    step(w, INTERVAL_MS + TIMEOUT_MS + TIMEOUT_MS / 2);
                    assertTrue(ch.isOpen(), mode + ": a peer that talks is alive, at read " + i);
                    ch.writeInbound(new DefaultHttp2DataFrame(Unpooled.copyLong(i)));
                    ReferenceCountUtil.release(ch.readInbound());
                }
                assertEquals(0, w.monitor.stats().closedPingTimeout(), mode.toString());
                assertTrue(w.monitor.stats().pings("http2").failed() >= 16, mode + ": the failures are counted");
            }
        }
    }

    @Test
    void writeFailuresAreLoggedOncePerProbeNotOncePerPing() {
        try (VirtualTime.World w = new VirtualTime.World(30)) {
            EmbeddedChannel a = w.channel(new RefusesPings(), w.monitor.newHandler(config(AckMode.ANY_INBOUND)));
            EmbeddedChannel b = w.channel(new RefusesPings(), w.monitor.newHandler(config(AckMode.ANY_INBOUND)));
            step(w, BOUND_MS + 10);
            assertFalse(a.isOpen());
            assertFalse(b.isOpen());
            assertEquals(2 * MAX_MISSED, w.monitor.stats().pings("http2").failed());
            assertEquals(1, w.monitor.engine.pingFailureWarnings(), "one WARN with the stack trace; the rest at DEBUG");
        }
    }
}
