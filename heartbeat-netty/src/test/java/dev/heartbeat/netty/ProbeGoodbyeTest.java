/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultChannelId;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttReasonCodeAndPropertiesVariableHeader;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.Test;

/**
 * Each built-in probe's goodbye ({@link Probe#newGoodbye}) for every {@link CloseReason}: what the
 * close sequence writes before any close Heartbeat makes. The tables below are the specification; a
 * reason added to {@link CloseReason} without a row here fails every test, so its goodbye is decided.
 */
@SuppressWarnings("deprecation") // Netty 4.2 deprecates what 4.1, the baseline, has no successor for
class ProbeGoodbyeTest {

    /** An HTTP/2 GOAWAY: its error code and debug data. */
    private record GoAway(Http2Error error, String debug) {
    }

    /** A WebSocket Close frame: its status and reason text. */
    private record Close(WebSocketCloseStatus status, String text) {
    }

    private static final Map<CloseReason, GoAway> HTTP2 = new EnumMap<>(Map.of(
            CloseReason.READER_IDLE, new GoAway(Http2Error.NO_ERROR, "READER_IDLE"),
            CloseReason.WRITER_IDLE, new GoAway(Http2Error.NO_ERROR, "WRITER_IDLE"),
            CloseReason.ALL_IDLE, new GoAway(Http2Error.NO_ERROR, "ALL_IDLE"),
            CloseReason.PING_TIMEOUT, new GoAway(Http2Error.NO_ERROR, "PING_TIMEOUT"),
            CloseReason.MAX_AGE, new GoAway(Http2Error.NO_ERROR, "MAX_AGE"),
            CloseReason.WRITE_STALL, new GoAway(Http2Error.ENHANCE_YOUR_CALM, "WRITE_STALL"),
            CloseReason.UNWRITABLE, new GoAway(Http2Error.ENHANCE_YOUR_CALM, "UNWRITABLE"),
            CloseReason.PING_ABUSE, new GoAway(Http2Error.ENHANCE_YOUR_CALM, "too_many_pings"),
            CloseReason.DRAIN, new GoAway(Http2Error.NO_ERROR, "DRAIN")));

    private static final Map<CloseReason, Close> WEB_SOCKET = new EnumMap<>(Map.of(
            CloseReason.READER_IDLE, new Close(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "READER_IDLE"),
            CloseReason.WRITER_IDLE, new Close(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "WRITER_IDLE"),
            CloseReason.ALL_IDLE, new Close(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "ALL_IDLE"),
            CloseReason.PING_TIMEOUT, new Close(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "PING_TIMEOUT"),
            CloseReason.MAX_AGE, new Close(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "MAX_AGE"),
            CloseReason.WRITE_STALL, new Close(WebSocketCloseStatus.POLICY_VIOLATION, "WRITE_STALL"),
            CloseReason.UNWRITABLE, new Close(WebSocketCloseStatus.POLICY_VIOLATION, "UNWRITABLE"),
            CloseReason.PING_ABUSE, new Close(WebSocketCloseStatus.POLICY_VIOLATION, "too_many_pings"),
            CloseReason.DRAIN, new Close(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "DRAIN")));

    /** MQTT 5 DISCONNECT reason codes a server sends (MQTT 5.0 section 3.14.2.1). */
    private static final Map<CloseReason, Integer> MQTT5_SERVER = new EnumMap<>(Map.of(
            CloseReason.READER_IDLE, 0x8D, // Keep Alive timeout
            CloseReason.WRITER_IDLE, 0x8D,
            CloseReason.ALL_IDLE, 0x8D,
            CloseReason.PING_TIMEOUT, 0x8D,
            CloseReason.MAX_AGE, 0xA0, // Maximum connect time
            CloseReason.WRITE_STALL, 0x97, // Quota exceeded
            CloseReason.UNWRITABLE, 0x97,
            CloseReason.PING_ABUSE, 0x96, // Message rate too high
            CloseReason.DRAIN, 0x8B)); // Server shutting down

    /** MQTT 5 DISCONNECT reason codes a client sends: only those the specification allows a client. */
    private static final Map<CloseReason, Integer> MQTT5_CLIENT = new EnumMap<>(Map.of(
            CloseReason.READER_IDLE, 0x04, // Disconnect with Will Message: the Will stays, as on a plain close
            CloseReason.WRITER_IDLE, 0x04,
            CloseReason.ALL_IDLE, 0x04,
            CloseReason.PING_TIMEOUT, 0x04,
            CloseReason.MAX_AGE, 0x00, // Normal disconnection: a planned end, the Will is discarded
            CloseReason.WRITE_STALL, 0x97, // Quota exceeded
            CloseReason.UNWRITABLE, 0x97,
            CloseReason.PING_ABUSE, 0x96, // Message rate too high
            CloseReason.DRAIN, 0x00));

    /** A context on a plain channel, for the probes' allocator. */
    private static ChannelHandlerContext contextOf(EmbeddedChannel ch) {
        return ch.pipeline().firstContext();
    }

    @Test
    void http2SaysEveryReasonInAGoAwayWithItsErrorCode() {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        for (CloseReason reason : CloseReason.values()) {
            GoAway expected = HTTP2.get(reason);
            Object bye = Probes.http2().newGoodbye(contextOf(ch), reason);
            try {
                Http2GoAwayFrame goAway = assertInstanceOf(Http2GoAwayFrame.class, bye, reason.name());
                assertEquals(expected, new GoAway(Http2Error.valueOf(goAway.errorCode()),
                        goAway.content().toString(StandardCharsets.US_ASCII)), reason.name());
                assertEquals(-1, goAway.lastStreamId(), "Http2FrameCodec fills in the last stream id");
            } finally {
                ReferenceCountUtil.release(bye);
            }
        }
        ch.finishAndReleaseAll();
    }

    @Test
    void webSocketSaysEveryReasonInACloseFrameWithItsStatus() {
        EmbeddedChannel ch = new EmbeddedChannel(new ChannelInboundHandlerAdapter());
        for (CloseReason reason : CloseReason.values()) {
            Object bye = Probes.webSocket().newGoodbye(contextOf(ch), reason);
            try {
                CloseWebSocketFrame close = assertInstanceOf(CloseWebSocketFrame.class, bye, reason.name());
                assertEquals(WEB_SOCKET.get(reason), new Close(WebSocketCloseStatus.valueOf(close.statusCode()),
                        close.reasonText()), reason.name());
            } finally {
                ReferenceCountUtil.release(bye);
            }
        }
        ch.finishAndReleaseAll();
    }

    /** An MQTT channel after a CONNECT of {@code version} went through its codec, on a server or a client. */
    private static EmbeddedChannel mqttSession(MqttVersion version, boolean server) {
        MqttMessage connect = MqttMessageBuilders.connect().clientId("sensor-1").protocolVersion(version)
                .keepAlive(30).build();
        EmbeddedChannel client = new EmbeddedChannel(new MqttDecoder(), MqttEncoder.INSTANCE);
        assertTrue(client.writeOutbound(connect));
        if (!server) {
            client.releaseOutbound();
            return client; // its encoder took the version from the CONNECT it wrote
        }
        ByteBuf bytes = client.readOutbound();
        client.finishAndReleaseAll();
        EmbeddedChannel ch = new EmbeddedChannel(new LocalServerChannel(), DefaultChannelId.newInstance(), true,
                false, new MqttDecoder(), MqttEncoder.INSTANCE);
        assertTrue(ch.writeInbound(bytes));
        ReferenceCountUtil.release(ch.readInbound()); // its decoder took the version from the CONNECT it read
        return ch;
    }

    /** The goodbye for {@code reason} on {@code ch}, through its encoder and a peer's decoder, as the peer reads it. */
    private static MqttMessage mqttGoodbyeAsRead(EmbeddedChannel ch, CloseReason reason, MqttVersion version) {
        Object bye = Probes.mqttClient().newGoodbye(ch.pipeline().lastContext(), reason);
        if (bye == null) {
            return null;
        }
        assertTrue(ch.writeOutbound(bye));
        ByteBuf bytes = ch.readOutbound();
        EmbeddedChannel peer = new EmbeddedChannel(new MqttDecoder());
        peer.attr(io.netty.util.AttributeKey.<MqttVersion>valueOf("NETTY_CODEC_MQTT_VERSION")).set(version);
        assertTrue(peer.writeInbound(bytes));
        MqttMessage read = peer.readInbound();
        peer.finishAndReleaseAll();
        assertTrue(read.decoderResult().isSuccess(), () -> reason + ": " + read.decoderResult());
        return read;
    }

    private static void assertMqtt5Goodbyes(boolean server, Map<CloseReason, Integer> expected) {
        EmbeddedChannel ch = mqttSession(MqttVersion.MQTT_5, server);
        for (CloseReason reason : CloseReason.values()) {
            MqttMessage read = mqttGoodbyeAsRead(ch, reason, MqttVersion.MQTT_5);
            String what = (server ? "server, " : "client, ") + reason;
            assertEquals(MqttMessageType.DISCONNECT, read == null ? null : read.fixedHeader().messageType(), what);
            MqttReasonCodeAndPropertiesVariableHeader header =
                    assertInstanceOf(MqttReasonCodeAndPropertiesVariableHeader.class, read.variableHeader(), what);
            assertEquals(expected.get(reason), header.reasonCode() & 0xFF, what);
            MqttProperties.MqttProperty<?> text =
                    header.properties().getProperty(MqttProperties.MqttPropertyType.REASON_STRING.value());
            assertEquals(reason.name(), text == null ? null : text.value(), what + ": the Reason String");
        }
        ch.finishAndReleaseAll();
    }

    @Test
    void mqtt5ServerSaysEveryReasonInADisconnectWithAServerReasonCode() {
        assertMqtt5Goodbyes(true, MQTT5_SERVER);
    }

    @Test
    void mqtt5ClientSaysEveryReasonInADisconnectWithAClientReasonCode() {
        assertMqtt5Goodbyes(false, MQTT5_CLIENT);
    }

    /**
     * MQTT 3.1.1 has no server DISCONNECT, and a client's DISCONNECT is a clean end that discards its
     * Will, which a close for a policy must not: no goodbye on either side, for any reason.
     */
    @Test
    void mqtt311SaysNoGoodbye() {
        for (boolean server : new boolean[] {true, false}) {
            EmbeddedChannel ch = mqttSession(MqttVersion.MQTT_3_1_1, server);
            for (CloseReason reason : CloseReason.values()) {
                assertNull(Probes.mqttClient().newGoodbye(ch.pipeline().lastContext(), reason), reason.name());
            }
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void everyReasonHasARowInEveryTable() {
        for (Map<CloseReason, ?> table : java.util.List.of(HTTP2, WEB_SOCKET, MQTT5_SERVER, MQTT5_CLIENT)) {
            assertEquals(CloseReason.values().length, table.size(), table.toString());
        }
    }
}
