/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
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

/**
 * The client side of one {@code --probe mqtt} connection: Netty's {@code MqttDecoder} and
 * {@code MqttEncoder}. Every client sends CONNECT (MQTT 3.1.1, a clean session, the scenario's Keep
 * Alive) once connected; the server's CONNACK sets it up. Echo requests are PUBLISH packets at QoS 0
 * on topic {@code echo} carrying a decimal number, which the server sends back; the keep-alive is
 * PINGREQ (its PINGRESP is only read). MQTT servers never ping and, in 3.1.1, say nothing before
 * they close: no goodbye to keep.
 */
final class MqttConnection extends ClientConnection {

    /** Immutable and not reference counted: one for every connection. */
    private static final MqttMessage PINGREQ =
            new MqttMessage(new MqttFixedHeader(MqttMessageType.PINGREQ, false, MqttQoS.AT_MOST_ONCE, false, 0));
    /** An echo's headers, immutable: QoS 0, so no message id. */
    private static final MqttFixedHeader PUBLISH =
            new MqttFixedHeader(MqttMessageType.PUBLISH, false, MqttQoS.AT_MOST_ONCE, false, 0);
    private static final MqttPublishVariableHeader ECHO_TOPIC = new MqttPublishVariableHeader("echo", 0);

    private final int keepAliveSeconds;
    private boolean connected;

    MqttConnection(int index, Role role, boolean expectsClose, int keepAliveSeconds) {
        super(index, role, expectsClose);
        this.keepAliveSeconds = keepAliveSeconds;
    }

    @Override
    void addCodecs(ChannelHandlerContext ctx) {
        ChannelPipeline p = ctx.pipeline();
        p.addBefore(ctx.name(), "mqtt-decoder", new MqttDecoder());
        p.addBefore(ctx.name(), "mqtt-encoder", MqttEncoder.INSTANCE);
    }

    @Override
    void start() {
        write(MqttMessageBuilders.connect().clientId("load-test-" + index).protocolVersion(MqttVersion.MQTT_3_1_1)
                .cleanSession(true).keepAlive(keepAliveSeconds).build());
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (msg instanceof MqttPublishMessage publish) {
                long number = parseDecimal(publish.payload());
                if (number >= 0) {
                    loop.echoReceived(this, number, System.nanoTime());
                }
            } else if (msg instanceof MqttConnAckMessage ack
                    && ack.variableHeader().connectReturnCode() == MqttConnectReturnCode.CONNECTION_ACCEPTED) {
                connected = true;
                ready();
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    boolean sendEcho(long number) {
        if (!connected) {
            return false;
        }
        ByteBuf buf = channel.alloc().buffer(20);
        writeDecimal(buf, number);
        // Not MqttMessageBuilders.publish(): its build() copies the payload and leaves ours unreleased.
        write(new MqttPublishMessage(PUBLISH, ECHO_TOPIC, buf));
        return true;
    }

    @Override
    void sendKeepAlive() {
        if (connected) {
            write(PINGREQ);
        }
    }

    @Override
    boolean canPing() {
        return connected;
    }

    /** PINGREQ, as the keep-alive: a flooder's ping. */
    @Override
    Object newPing() {
        return PINGREQ;
    }
}
