/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.testing.LeakDetection;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.mqtt.MqttConnAckMessage;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttPublishVariableHeader;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code --probe mqtt}: the demo server's MQTT pipeline (Heartbeat with the deadline for CONNECT,
 * {@code MqttDecoder}, {@code MqttEncoder}, {@code MqttKeepAlive}, the broker) on an
 * {@code EmbeddedChannel} against a client made of Netty's MQTT codec, with Heartbeat's monitor in
 * virtual time. CONNECT is due within 300 ms of the connect.
 */
@ExtendWith(LeakDetection.class)
class MqttPipelineTest {

    private static final MqttMessage PINGREQ =
            new MqttMessage(new MqttFixedHeader(MqttMessageType.PINGREQ, false, MqttQoS.AT_MOST_ONCE, false, 0));

    /** What the client received, in order (retained until the test ends). */
    private final List<MqttMessage> received = new ArrayList<>();
    private VirtualPair pair;

    @BeforeEach
    void start() {
        start(config().build());
    }

    private static ServerConfig.Builder config() {
        return ServerConfig.builder().protocol(ServerConfig.Protocol.MQTT).idleTimeout(Duration.ofMillis(300))
                .metricsDisabled().port(0);
    }

    /** A fresh pair with these settings, in place of the one before. */
    private void start(ServerConfig config) {
        if (pair != null) {
            tearDown();
        }
        pair = new VirtualPair(config, new MqttDecoder(), MqttEncoder.INSTANCE, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                received.add((MqttMessage) msg);
            }
        });
    }

    @AfterEach
    void tearDown() {
        received.forEach(ReferenceCountUtil::release);
        received.clear();
        pair.close();
    }

    private void send(MqttMessage m) {
        pair.client.writeAndFlush(m);
        pair.exchange();
    }

    private void connect(int keepAliveSeconds) {
        send(MqttMessageBuilders.connect().clientId("c1").protocolVersion(MqttVersion.MQTT_3_1_1)
                .cleanSession(true).keepAlive(keepAliveSeconds).build());
        MqttConnAckMessage ack = assertInstanceOf(MqttConnAckMessage.class, received.get(received.size() - 1));
        assertEquals(MqttConnectReturnCode.CONNECTION_ACCEPTED, ack.variableHeader().connectReturnCode());
    }

    private MqttMessageType lastType() {
        return received.get(received.size() - 1).fixedHeader().messageType();
    }

    private static MqttPublishMessage publish(String payload, MqttQoS qos) {
        // Not MqttMessageBuilders.publish(): its build() copies the payload and leaves the one given unreleased.
        return new MqttPublishMessage(new MqttFixedHeader(MqttMessageType.PUBLISH, false, qos, false, 0),
                new MqttPublishVariableHeader("echo", qos == MqttQoS.AT_MOST_ONCE ? 0 : 1),
                Unpooled.copiedBuffer(payload, StandardCharsets.US_ASCII));
    }

    @Test
    void connectsAnswersPingsEchoesPublishesAndDisconnects() {
        connect(60);
        send(PINGREQ);
        assertEquals(MqttMessageType.PINGRESP, lastType());
        send(publish("12345", MqttQoS.AT_MOST_ONCE));
        MqttPublishMessage echo = assertInstanceOf(MqttPublishMessage.class, received.get(received.size() - 1));
        assertEquals("echo", echo.variableHeader().topicName());
        assertEquals("12345", echo.payload().toString(StandardCharsets.US_ASCII));
        send(new MqttMessage(new MqttFixedHeader(MqttMessageType.DISCONNECT, false, MqttQoS.AT_MOST_ONCE, false, 0)));
        assertFalse(pair.server.isOpen());
        assertEquals(0, pair.echo.idleCloses(), "the client's own goodbye");
    }

    @Test
    void aClientSilentForOneAndAHalfKeepAlivesIsClosed() {
        pair.advance(100);
        connect(1);
        pair.advance(1_499);
        assertTrue(pair.server.isOpen(), "1.5 x 1 s after CONNECT, not before");
        pair.advance(3);
        assertFalse(pair.server.isOpen());
        assertEquals(1, pair.echo.closedFor(CloseReason.READER_IDLE), "what the keep-alive rule's close counts as");
        assertEquals(MqttMessageType.CONNACK, lastType(), "no goodbye: MQTT 3.1.1 has none for a server");
    }

    @Test
    void pingreqEveryKeepAliveKeepsItOpen() {
        connect(1);
        for (int i = 0; i < 5; i++) {
            pair.advance(1_000);
            send(PINGREQ);
            assertEquals(MqttMessageType.PINGRESP, lastType());
        }
        assertTrue(pair.server.isOpen());
        pair.advance(1_510);
        assertFalse(pair.server.isOpen(), "and closed once the PINGREQs stop");
    }

    @Test
    void noConnectWithinTheIdleTimeoutCloses() {
        pair.advance(299);
        assertTrue(pair.server.isOpen());
        pair.advance(3);
        assertFalse(pair.server.isOpen());
        assertEquals(1, pair.echo.closedFor(CloseReason.READER_IDLE));
    }

    @Test
    void keepAliveZeroIsNoTimeout() {
        connect(0);
        pair.advance(5_000);
        assertTrue(pair.server.isOpen(), "MQTT 3.1.2.10: 0 turns the keep-alive off");
    }

    @Test
    void aQos1PublishClosesTheConnection() {
        connect(60);
        send(publish("x", MqttQoS.AT_LEAST_ONCE));
        assertFalse(pair.server.isOpen(), "this broker does QoS 0 only");
        assertEquals(MqttMessageType.CONNACK, lastType());
    }

    /**
     * {@code --police-pings}: PINGREQ every Keep Alive keeps an idle client with
     * {@code --permit-pings-without-traffic}; without it (a ping then needs 2 h without traffic) each
     * such PINGREQ after the first is a strike, and the third strike closes it, as the third one too
     * early at any rate does. MQTT 3.1.1 has no goodbye: counted, then closed.
     */
    @Test
    void aClientThatPingsTooOftenIsClosedForPingAbuse() {
        start(config().policePings(new ServerConfig.PeerPingRules(Duration.ofMillis(100), true, 2)).build());
        connect(1);
        pings(5, 1_000);
        assertTrue(pair.server.isOpen(), "a PINGREQ every Keep Alive, permitted without traffic");
        pings(3, 10);
        assertFalse(pair.server.isOpen());
        assertEquals(1, pair.echo.closedFor(CloseReason.PING_ABUSE));
        assertEquals(0, pair.echo.closedFor(CloseReason.READER_IDLE));
        assertEquals(MqttMessageType.PINGRESP, lastType(), "no goodbye after the last PINGRESP");

        start(config().policePings(new ServerConfig.PeerPingRules(Duration.ofMillis(100), false, 2)).build());
        connect(1);
        pings(3, 1_000);
        assertTrue(pair.server.isOpen(), "the first accepted (CONNECT and CONNACK were traffic), 2 strikes");
        pings(1, 1_000);
        assertFalse(pair.server.isOpen(), "no traffic but the pings since: the third strike");
        assertEquals(1, pair.echo.closedFor(CloseReason.PING_ABUSE));
    }

    /** {@code n} PINGREQs, each {@code apartMillis} of virtual time after the one before. */
    private void pings(int n, long apartMillis) {
        for (int i = 0; i < n; i++) {
            pair.advance(apartMillis);
            send(PINGREQ);
        }
    }
}
