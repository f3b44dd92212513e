/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.heartbeat.netty.probe.Probes;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2ConnectionHandlerBuilder;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameAdapter;
import io.netty.handler.codec.http2.Http2Headers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Probes#http2ConnectionHandler()} between two real {@link Http2ConnectionHandler}s (no
 * {@code Http2FrameCodec}) on {@link EmbeddedChannel}s in virtual time: the server's handler with Heartbeat after
 * it, a client's handler as the peer, their bytes copied across by hand.
 */
class Http2HandlerProbeTest {

    /** A frame listener that records the frames its handler hands it. */
    static final class Frames extends Http2FrameAdapter {
        final List<Long> pingAcks = new ArrayList<>();
        final List<String> goAways = new ArrayList<>();
        int headers;
        /** Run as each GOAWAY is read, before the frames after it in the same read. */
        Runnable onGoAway = () -> { };

        @Override
        public void onPingAckRead(ChannelHandlerContext ctx, long data) {
            pingAcks.add(data);
        }

        @Override
        public void onGoAwayRead(ChannelHandlerContext ctx, int lastStreamId, long errorCode, ByteBuf debugData) {
            goAways.add(Http2Error.valueOf(errorCode) + " " + debugData.toString(StandardCharsets.US_ASCII)
                    + " last " + lastStreamId);
            onGoAway.run();
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int padding,
                boolean endStream) {
            this.headers++;
        }

        @Override
        public void onHeadersRead(ChannelHandlerContext ctx, int streamId, Http2Headers headers, int streamDependency,
                short weight, boolean exclusive, int padding, boolean endStream) {
            this.headers++;
        }
    }

    /** Keeps what the server's pipeline passes on after Heartbeat, and the exceptions. */
    static final class App extends ChannelInboundHandlerAdapter {
        final List<Object> reads = new ArrayList<>();
        final List<Throwable> caught = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            reads.add(msg);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            caught.add(cause);
        }
    }

    private final VirtualTime.World world = new VirtualTime.World(3);
    private final Frames serverFrames = new Frames();
    private final Frames clientFrames = new Frames();
    private final App app = new App();
    private final Http2ConnectionHandler serverHandler = new Http2ConnectionHandlerBuilder().server(true)
            .frameListener(serverFrames).build();
    private final Http2ConnectionHandler clientHandler = new Http2ConnectionHandlerBuilder().server(false)
            .frameListener(clientFrames).build();
    private EmbeddedChannel server;
    private final EmbeddedChannel client = new EmbeddedChannel(clientHandler);
    /** Whether the client's bytes reach the server: false for a peer that went silent. */
    private boolean clientAlive = true;

    @AfterEach
    void tearDown() {
        client.finishAndReleaseAll();
        world.close();
    }

    private static HeartbeatConfig.Builder pings() {
        return HeartbeatConfig.ping(Probes.http2ConnectionHandler()).interval(Duration.ofSeconds(10))
                .timeout(Duration.ofSeconds(2)).maxMissedPings(1).ackMode(AckMode.MATCHED_ONLY);
    }

    /** The server: its connection handler, then the Heartbeat handler, then the application. */
    private void start(HeartbeatConfig cfg) {
        server = world.channel();
        server.pipeline().addLast("h2", serverHandler);
        server.pipeline().addLast("heartbeat", world.monitor.newHandler(cfg));
        server.pipeline().addLast("app", app);
        server.runPendingTasks();
        exchange(); // prefaces and settings both ways
    }

    /** Copies bytes both ways until both sides are quiet (the client's are dropped once it is dead). */
    private void exchange() {
        boolean moved = true;
        while (moved) {
            moved = false;
            for (ByteBuf b; (b = client.readOutbound()) != null; moved = true) {
                if (clientAlive && server.isOpen()) {
                    server.writeInbound(b);
                } else {
                    b.release();
                }
            }
            for (ByteBuf b; (b = server.readOutbound()) != null; moved = true) {
                client.writeInbound(b);
            }
        }
    }

    /** {@code seconds} of virtual time in 10 ms steps, the bytes exchanged after each. */
    private void run(int seconds) {
        for (int i = 0; i < seconds * 100; i++) {
            world.advance(10);
            exchange();
        }
    }

    @Test
    void pingsGoThroughTheHandlersEncoderAndTheirAcksReachHeartbeatNotTheHandlersListener() {
        start(pings().build());
        run(60);

        assertTrue(server.isOpen(), "every ping acknowledged by the client's handler");
        long sent = world.monitor.stats().pingsSent();
        assertTrue(sent >= 5, "pinged about every 10 s: " + sent);
        assertEquals(sent, world.monitor.answersConsumed(), "each ack consumed by Heartbeat");
        assertEquals(List.of(), serverFrames.pingAcks, "no ack of ours reached the handler's own listener");
        assertEquals(List.of(), app.reads, "nor the application");
        assertEquals(List.of(), app.caught);
    }

    @Test
    void theHandlersOwnPingsKeepTheirAcks() throws Exception {
        start(pings().build());
        run(11); // one ping of ours, acked: the listener is decorated
        assertEquals(1, world.monitor.answersConsumed());

        serverHandler.encoder().writePing(server.pipeline().context("h2"), false, 0xDEADL, server.newPromise());
        server.flush();
        exchange();

        assertEquals(List.of(0xDEADL), serverFrames.pingAcks, "an ack of the handler's own ping is the handler's");
        assertEquals(1, world.monitor.answersConsumed());
    }

    @Test
    void aDeadPeerIsClosedWithGoAwayThroughTheHandler() {
        start(pings().build());
        run(5);
        clientAlive = false; // the client's handler still answers, but nothing reaches the server any more
        run(20);

        assertFalse(server.isOpen(), "closed for PING_TIMEOUT");
        assertEquals(List.of("NO_ERROR PING_TIMEOUT last 0"), clientFrames.goAways, "one GOAWAY, from the handler");
        assertTrue(serverHandler.connection().goAwaySent(), "the handler knows it said it");
    }

    /** The client opens stream {@code id} (a GET, its end not sent). */
    private void clientOpens(int id) {
        clientHandler.encoder().writeHeaders(client.pipeline().firstContext(), id, new DefaultHttp2Headers()
                .method("GET").path("/").scheme("http"), 0, false, client.newPromise());
        client.flush();
    }

    /** Both ends of stream {@code id}: the server's response and the client's last DATA. */
    private void endStream(int id) {
        serverHandler.encoder().writeHeaders(server.pipeline().context("h2"), id,
                new DefaultHttp2Headers().status("200"), 0, true, server.newPromise());
        clientHandler.encoder().writeData(client.pipeline().firstContext(), id, client.alloc().buffer(0), 0, true,
                client.newPromise());
        client.flush();
        server.flush();
        exchange();
        server.runPendingTasks();
    }

    @Test
    void maxAgeSaysGrpcsTwoGoAwaysWithAPingBetweenAndTheCloseWaitsForTheStream() {
        start(pings().maxAge(Duration.ofSeconds(30)).maxAgeGrace(Duration.ofSeconds(5)).build());
        clientOpens(3); // and leaves it open
        exchange();
        assertEquals(1, serverFrames.headers);

        run(31);
        assertEquals(List.of("NO_ERROR MAX_AGE last 2147483647", "NO_ERROR MAX_AGE last 3"), clientFrames.goAways,
                "GOAWAY with the largest stream id, then, once the ping between is acked, the real last stream");
        assertEquals(List.of(), serverFrames.pingAcks, "the goodbye ping's ack went to Heartbeat, not the handler");
        assertEquals(List.of(), app.reads, "nor to the application");
        assertEquals(List.of(), app.caught);
        assertEquals(List.of("h2", "heartbeat", "app"), List.copyOf(server.pipeline().toMap().keySet()),
                "the probe's writer of the first half has left the pipeline");
        assertTrue(server.isOpen(), "in its grace");

        run(5); // the grace ends: Heartbeat's close goes into the handler's graceful shutdown, waiting for stream 3
        assertTrue(server.isOpen(), "stream 3 is still open");
        assertEquals(2, clientFrames.goAways.size(), "no third GOAWAY");

        endStream(3);
        assertFalse(server.isOpen(), "closed as its last stream ended");
    }

    @Test
    void aStreamOpenedBetweenTheTwoGoAwaysIsKept() {
        start(pings().maxAge(Duration.ofSeconds(30)).maxAgeGrace(Duration.ofSeconds(5)).build());
        // The client opens stream 5 as it reads the first GOAWAY, before the PING after it is acked: a stream
        // opened while the first GOAWAY travelled. A single GOAWAY (last stream 0) would have refused it.
        clientFrames.onGoAway = () -> {
            if (clientFrames.goAways.size() == 1) {
                clientOpens(5);
            }
        };

        run(31);
        assertEquals(List.of("NO_ERROR MAX_AGE last 2147483647", "NO_ERROR MAX_AGE last 5"), clientFrames.goAways);
        assertEquals(1, serverFrames.headers, "the server's handler took stream 5");
        assertTrue(server.isOpen(), "stream 5 is open, in the grace");

        endStream(5);
        assertFalse(server.isOpen(), "closed as stream 5 ended, before the grace's end");
        assertEquals(List.of(), app.caught);
    }

    @Test
    void withoutTheAckTheFinalGoAwayComesAfterTheWait() {
        start(pings().maxAge(Duration.ofSeconds(25)).maxAgeGrace(Duration.ofSeconds(5)).build());
        clientFrames.onGoAway = () -> clientAlive = false; // the ack of the goodbye's ping never arrives

        run(27); // the first GOAWAY at 25 s; the wait is half the grace, 2.5 s
        assertEquals(List.of("NO_ERROR MAX_AGE last 2147483647"), clientFrames.goAways);
        run(1);
        assertEquals(List.of("NO_ERROR MAX_AGE last 2147483647", "NO_ERROR MAX_AGE last 0"), clientFrames.goAways,
                "the final half without the ack, at 27.5 s");
    }

    @Test
    void aHeartbeatHandlerBeforeTheConnectionHandlerIsRefused() {
        // The connection handler first, then Heartbeat put before it: an EmbeddedChannel runs its pending tasks (the
        // check among them) inside the write of the handler's SETTINGS, in the middle of what an initializer does.
        server = world.channel();
        server.pipeline().addLast("h2", serverHandler);
        server.pipeline().addLast("app", app);
        server.pipeline().addBefore("h2", "heartbeat", world.monitor.newHandler(pings().build()));
        server.runPendingTasks();

        assertEquals(1, app.caught.size(), "refused: " + app.caught);
        String message = app.caught.get(0).getMessage();
        assertTrue(app.caught.get(0) instanceof IllegalStateException, message);
        assertTrue(message.contains("is before the Http2ConnectionHandler 'h2'"), message);
        assertFalse(server.isOpen(), "closed at once, not after missed pings");
    }

    @Test
    void withoutAConnectionHandlerThePlacementIsUnknown() {
        ChannelHandler heartbeat = world.monitor.newHandler(pings().build());
        server = world.channel(heartbeat);
        assertEquals(ProbePlacement.Verdict.UNKNOWN, Probes.http2ConnectionHandler()
                .placement(server.pipeline().firstContext()).verdict());
    }
}
