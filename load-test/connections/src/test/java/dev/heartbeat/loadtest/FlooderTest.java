/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;

import dev.heartbeat.netty.CloseReason;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.Http2Error;
import org.junit.jupiter.api.Test;

/**
 * The flooder's client side: its burst of pings, and the goodbyes for ping abuse it recognises in each
 * protocol's words.
 */
class FlooderTest {

    @Test
    void sendsItsBurstInOneWriteOnceTheProtocolIsSetUp() {
        Scenario s = Scenario.builder().mix(Mix.parse("silent=50,flooder=50")).build();
        LineConnection c = new LineConnection(0, Role.FLOODER, true);
        EmbeddedChannel loopChannel = new EmbeddedChannel(); // the client loop's executor: its tasks never run
        c.loop = new ClientLoop(loopChannel.eventLoop(), s, new RunWindow(), new ClientProgress());
        EmbeddedChannel ch = new EmbeddedChannel(c);
        try {
            assertTrue(c.floodBurst(Scenario.FLOOD_BURST));
            assertEquals(Scenario.FLOOD_BURST, c.floodPings());
            for (int i = 0; i < Scenario.FLOOD_BURST; i++) {
                ByteBuf ping = ch.readOutbound();
                assertEquals("PING\n", ping.toString(StandardCharsets.US_ASCII));
                ping.release();
            }
            assertNull(ch.readOutbound());
        } finally {
            ch.finishAndReleaseAll();
            loopChannel.finishAndReleaseAll();
        }
        WebSocketConnection ws = new WebSocketConnection(1, Role.FLOODER, true);
        assertFalse(ws.floodBurst(Scenario.FLOOD_BURST), "no WebSocket before the upgrade");
        assertEquals(0, ws.floodPings());
        assertFalse(new MqttConnection(2, Role.FLOODER, true, 1).floodBurst(Scenario.FLOOD_BURST), "no CONNACK yet");
    }

    @Test
    void theGoodbyeForPingAbuseNeedsBothTheWordsAndTheProtocolsCode() {
        Http2Connection h2 = new Http2Connection(0, Role.FLOODER, true);
        h2.channelRead(null, new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR, ascii("too_many_pings")));
        assertNull(h2.goodbye(), "gRPC's words with NO_ERROR: no reason");
        h2.channelRead(null, new DefaultHttp2GoAwayFrame(Http2Error.ENHANCE_YOUR_CALM, ascii("too_many_pings")));
        assertEquals(CloseReason.PING_ABUSE, h2.goodbye());
        h2.channelRead(null, new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR, ascii("PING_TIMEOUT")));
        assertEquals(CloseReason.PING_TIMEOUT, h2.goodbye(), "the idle goodbyes as before");

        WebSocketConnection ws = new WebSocketConnection(0, Role.FLOODER, true);
        ws.channelRead(null, new CloseWebSocketFrame(1001, "too_many_pings"));
        assertNull(ws.goodbye(), "going away is not a policy violation");
        ws.channelRead(null, new CloseWebSocketFrame(1008, "too_many_pings"));
        assertEquals(CloseReason.PING_ABUSE, ws.goodbye());
        ws.channelRead(null, new CloseWebSocketFrame(1001, "READER_IDLE"));
        assertEquals(CloseReason.READER_IDLE, ws.goodbye());
    }

    private static ByteBuf ascii(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.US_ASCII);
    }
}
