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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Probes#http2()} between two real {@code Http2FrameCodec}s on {@link EmbeddedChannel}s: a
 * server (whose pings are the probe's) and a client peer, their bytes copied across by hand.
 */
class Http2ProbeTest {

    private static final long TOKEN = 0x0123_4567_89AB_CDEFL;

    /** Keeps every PING frame that reaches it. */
    static final class PingCatcher extends ChannelInboundHandlerAdapter {
        final List<Http2PingFrame> pings = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof Http2PingFrame ping) {
                pings.add(ping);
            } else {
                ReferenceCountUtil.release(msg); // settings and their acks
            }
        }
    }

    private final Probe probe = Probes.http2();
    private final PingCatcher serverSide = new PingCatcher();
    private final PingCatcher clientSide = new PingCatcher();
    private EmbeddedChannel server;
    private final EmbeddedChannel client = new EmbeddedChannel(Http2FrameCodecBuilder.forClient().build(), clientSide);
    /** The server's bytes, as they went on the wire. */
    private final ByteBuf serverWire = Unpooled.buffer();

    @AfterEach
    void tearDown() {
        serverWire.release();
        server.finishAndReleaseAll();
        client.finishAndReleaseAll();
    }

    private void start(ChannelHandler... afterCodec) {
        server = new EmbeddedChannel(Http2FrameCodecBuilder.forServer().build());
        server.pipeline().addLast(afterCodec);
        exchange(); // prefaces and settings both ways
    }

    /** Copies bytes both ways until both sides are quiet. */
    private void exchange() {
        exchange(client, server, serverWire);
    }

    /**
     * Copies bytes between two embedded HTTP/2 peers both ways until both are quiet, keeping a copy of
     * the server's in {@code serverWire} unless it is null.
     */
    static void exchange(EmbeddedChannel client, EmbeddedChannel server, ByteBuf serverWire) {
        boolean moved = true;
        while (moved) {
            moved = false;
            for (ByteBuf b; (b = client.readOutbound()) != null; moved = true) {
                server.writeInbound(b);
            }
            for (ByteBuf b; (b = server.readOutbound()) != null; moved = true) {
                if (serverWire != null) {
                    serverWire.writeBytes(b, b.readerIndex(), b.readableBytes());
                }
                client.writeInbound(b);
            }
        }
    }

    /** Writes the probe's ping from the tail of the server's pipeline, as the handler does. */
    private void serverPings(long token) throws Exception {
        server.writeAndFlush(probe.newPing(server.pipeline().lastContext(), token));
        exchange();
    }

    private static boolean onWire(ByteBuf wire, byte[] frame) {
        return ByteBufUtil.indexOf(Unpooled.wrappedBuffer(frame), wire) >= 0;
    }

    @Test
    void shouldPingOnTheWireAndMatchTheAckThatNettyWritesBack() throws Exception {
        start(serverSide);
        serverPings(TOKEN);

        // A PING frame, RFC 9113 section 6.7: length 8, type 6, no flags, stream 0, the token.
        byte[] ping = {0, 0, 8, 6, 0, 0, 0, 0, 0, 0x01, 0x23, 0x45, 0x67, (byte) 0x89, (byte) 0xAB, (byte) 0xCD,
                (byte) 0xEF};
        assertTrue(onWire(serverWire, ping), "the ping is on the wire: " + ByteBufUtil.hexDump(serverWire));
        assertEquals(1, clientSide.pings.size());
        assertFalse(clientSide.pings.get(0).ack());
        assertEquals(TOKEN, clientSide.pings.get(0).content());

        // The client's codec acknowledged it by itself; the ack comes back to the server's probe.
        assertEquals(1, serverSide.pings.size());
        Http2PingFrame ack = serverSide.pings.get(0);
        assertTrue(ack.ack());
        assertEquals(0, probe.classify(ack, TOKEN, 1), "the matching answer");
        assertTrue(probe.consumes(0));
        assertEquals(1, probe.classify(ack, TOKEN + 1, 2), "the answer to the ping before the latest");
    }

    @Test
    void shouldTellAnAckOfAnotherTokenFromOurs() throws Exception {
        start(serverSide);
        client.writeAndFlush(new DefaultHttp2PingFrame(TOKEN ^ 1, true)); // an ack to a ping we never sent
        exchange();

        assertEquals(1, serverSide.pings.size());
        int c = probe.classify(serverSide.pings.get(0), TOKEN, 1);
        assertEquals(Probe.UNSOLICITED, c);
        assertFalse(probe.consumes(c), "the application's own pings get their acks");
    }

    @Test
    void shouldNotTakeThePeersPingForAnAnswer() throws Exception {
        start(serverSide);
        client.writeAndFlush(new DefaultHttp2PingFrame(TOKEN)); // same data, but a ping, not an ack
        exchange();

        assertEquals(1, serverSide.pings.size());
        assertFalse(serverSide.pings.get(0).ack());
        assertEquals(Probe.NOT_AN_ANSWER, probe.classify(serverSide.pings.get(0), TOKEN, 1));
        // Netty answered it without us: the client got the ack.
        assertEquals(1, clientSide.pings.size());
        assertTrue(clientSide.pings.get(0).ack());
        assertEquals(TOKEN, clientSide.pings.get(0).content());
    }

    @Test
    void shouldSeeAcksBehindHttp2MultiplexHandler() throws Exception {
        start(new Http2MultiplexHandler(new ChannelInboundHandlerAdapter() {
            @Override
            public boolean isSharable() {
                return true;
            }
        }), serverSide);
        serverPings(TOKEN);

        assertEquals(1, serverSide.pings.size(), "the multiplexer passes connection-level frames on");
        assertEquals(0, probe.classify(serverSide.pings.get(0), TOKEN, 1));
    }

    /**
     * The whole loop with Heartbeat behind the server's codec, in virtual time: after the interval of
     * silence Heartbeat writes the probe's PING, the client's codec acknowledges it by itself, and the
     * ack, matched by its token, settles the ping (the only thing that may, under MATCHED_ONLY), is
     * kept from the application and gives the connection's RTT; a client whose acks stop coming is
     * closed.
     */
    @Test
    void heartbeatPingsThroughTheCodecAndTheAutomaticAcksKeepTheConnection() throws Exception {
        ManualTicker ticker = new ManualTicker(0);
        try (HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).maxCoalescing(Duration.ZERO)
                .build()) {
            HeartbeatConfig cfg = HeartbeatConfig.ping(probe).interval(Duration.ofSeconds(10))
                    .timeout(Duration.ofSeconds(2)).maxMissedPings(1).ackMode(AckMode.MATCHED_ONLY).build();
            start(monitor.newHandler(cfg), serverSide);
            monitor.runOnce();
            for (int second = 0; second < 60; second++) {
                for (int ms = 0; ms < 1000; ms += 10) {
                    ticker.advance(10, TimeUnit.MILLISECONDS);
                    monitor.runOnce();
                    server.runPendingTasks();
                    exchange(); // the ping out, the client's ack back at once
                }
            }
            assertTrue(server.isOpen(), "every ping acknowledged");
            assertTrue(monitor.stats().pingsSent() >= 5, "pinged about every 10 s: " + monitor.stats().pingsSent());
            assertEquals(monitor.stats().pingsSent(), monitor.answersConsumed(), "each ack consumed");
            assertEquals(0, serverSide.pings.size(), "no ack reached the application");
            assertTrue(monitor.rttOf(server).isPresent());

            client.close(); // the acks stop: the next ping goes unanswered
            for (int ms = 0; ms < 13_000 && server.isOpen(); ms += 10) {
                ticker.advance(10, TimeUnit.MILLISECONDS);
                monitor.runOnce();
                server.runPendingTasks();
                server.readOutbound(); // (the bytes go nowhere)
            }
            assertFalse(server.isOpen(), "closed after the unanswered ping's timeout");
            assertEquals(1, monitor.stats().closedPingTimeout());
        }
    }
}
