/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.testing.LeakDetection;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code --probe line} with {@code --police-pings}: the demo server's line pipeline (Heartbeat, the
 * line decoder, the ping policing, the echo) on an {@code EmbeddedChannel} against a client that
 * writes lines and reads the server's, with Heartbeat's monitor in virtual time. The policing: PING
 * lines at least 100 ms apart, 2 strikes forgiven.
 */
@ExtendWith(LeakDetection.class)
class LinePipelineTest {

    private static final ServerConfig.PeerPingRules RULES =
            new ServerConfig.PeerPingRules(Duration.ofMillis(100), true, 2);

    /** The lines the client received, in order, without their newlines. */
    private final List<String> received = new ArrayList<>();
    private VirtualPair pair;

    @AfterEach
    void tearDown() {
        if (pair != null) {
            pair.close();
        }
    }

    private static ServerConfig.Builder config(ServerConfig.PeerPingRules rules) {
        return ServerConfig.builder().idleTimeout(Duration.ofSeconds(10)).policePings(rules).metricsDisabled().port(0);
    }

    /** Lines as strings: whatever the server writes, split where its newlines are. */
    private ChannelInboundHandlerAdapter lines() {
        return new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf line = (ByteBuf) msg;
                received.add(line.toString(StandardCharsets.US_ASCII));
                line.release();
            }
        };
    }

    private void start(ServerConfig.PeerPingRules rules) {
        pair = new VirtualPair(config(rules).build(), new LineBasedFrameDecoder(1024), lines());
    }

    private void send(String line) {
        pair.client.writeAndFlush(Unpooled.copiedBuffer(line + "\n", StandardCharsets.US_ASCII));
        pair.exchange();
    }

    @Test
    void aClientThatPingsTooOftenIsToldByePingAbuseThenClosed() {
        start(RULES);
        for (int i = 0; i < 3; i++) {
            pair.advance(10);
            send("PING");
        }
        assertFalse(pair.server.isOpen(), "the third too-early PING, after 2 strikes forgiven");
        assertEquals(List.of("PONG", "PONG", LineHandler.goodbye(CloseReason.PING_ABUSE)), received,
                "the strikes are answered; one goodbye, the policing's");
        assertEquals(1, pair.echo.closedFor(CloseReason.PING_ABUSE));
        assertEquals(0, pair.echo.idleCloses(), "ping abuse is not idleness");
    }

    @Test
    void pingsTheMinimumIntervalApartAreAnsweredForever() {
        start(RULES);
        for (int i = 0; i < 10; i++) {
            pair.advance(100);
            send("PING");
        }
        assertTrue(pair.server.isOpen());
        assertEquals(10, received.stream().filter("PONG"::equals).count());
        assertEquals(0, pair.echo.closedFor(CloseReason.PING_ABUSE));
    }

    /**
     * Without {@code --permit-pings-without-traffic} a ping needs an application message since the
     * last accepted one (else it must wait 2 h): an echoed line is one; the server's own PONG lines are
     * not, or an idle client's pings would forgive themselves.
     */
    @Test
    void withoutPermitAPingNeedsAnEchoedLineSinceTheLastOne() {
        start(new ServerConfig.PeerPingRules(Duration.ofMillis(100), false, 0));
        pair.advance(50);
        send("12345");
        pair.advance(50);
        send("PING");
        assertTrue(pair.server.isOpen(), "a line came since the connect: 100 ms is enough");
        pair.advance(100);
        send("PING");
        assertFalse(pair.server.isOpen(), "nothing but PING and PONG since: no strike is forgiven");
        assertEquals(List.of("12345", "PONG", LineHandler.goodbye(CloseReason.PING_ABUSE)), received);
    }

    @Test
    void withoutPolicingPingsAreOnlyAnswered() {
        start(null);
        assertNull(pair.server.pipeline().get(EchoPipeline.POLICE));
        for (int i = 0; i < 5; i++) {
            send("PING");
        }
        assertTrue(pair.server.isOpen());
        assertEquals(5, received.size());
    }

    /**
     * The policing needs no timer, so the netty impl has it too: its closes are counted by a monitor of
     * the pipeline's own whose worker never runs, and reach {@code /metrics} as with Heartbeat. On the
     * real clock: a minimum interval of an hour makes every ping of the test too early.
     */
    @Test
    void theNettyImplPolicesAndCountsAlike() {
        ServerConfig config = config(new ServerConfig.PeerPingRules(Duration.ofHours(1), true, 2))
                .idleImpl(ServerConfig.IdleImpl.NETTY).build();
        try (EchoPipeline echo = EchoPipeline.create(config, null)) {
            EmbeddedChannel server = new EmbeddedChannel(echo.initializer());
            try {
                for (int i = 0; i < 3; i++) {
                    server.writeInbound(Unpooled.copiedBuffer("PING\n", StandardCharsets.US_ASCII));
                }
                assertFalse(server.isOpen());
                assertEquals(1, echo.closedFor(CloseReason.PING_ABUSE));
                assertEquals(0, echo.idleCloses());
                String metrics = new Metrics(config, "embedded", echo).scrape();
                assertTrue(metrics.contains("demo_connections_closed_total{reason=\"ping_abuse\"} 1.0"), metrics);
                assertTrue(metrics.contains("police_pings=\"1h\""), metrics);
            } finally {
                server.finishAndReleaseAll();
            }
        }
    }
}
