/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;

import dev.heartbeat.testing.LeakDetection;
import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The MQTT client's own messages under Netty's leak check: every buffer it allocates reaches the
 * encoder, which releases it. (Its echoes leaked their payload while they were built with
 * {@code MqttMessageBuilders.publish()}, whose {@code build()} copies the payload.)
 */
@ExtendWith(LeakDetection.class)
class MqttConnectionTest {

    @Test
    void anEchoIsEncodedWithItsNumberAndLeaksNothing() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            MqttConnection c = new MqttConnection(0, Role.ACTIVE, false, 60);
            c.loop = new ClientLoop(ch.eventLoop(), Scenario.builder().build(), new RunWindow(), new ClientProgress());
            ch.pipeline().addLast(c); // adds the MQTT codecs before itself
            assertFalse(c.sendEcho(42), "no echo before the broker's CONNACK");
            ch.pipeline().fireChannelActive(); // sends CONNECT
            ByteBuf connect = ch.readOutbound();
            connect.release();
            ch.pipeline().fireChannelRead(MqttMessageBuilders.connAck()
                    .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED).build());
            assertTrue(c.sendEcho(42));
            ByteBuf publish = ch.readOutbound();
            try {
                // fixed header (2 bytes), topic "echo" (2 + 4 bytes), no message id at QoS 0, payload
                assertEquals(0x30, publish.getUnsignedByte(0), "PUBLISH, QoS 0, not retained");
                assertEquals("echo42", publish.toString(4, publish.readableBytes() - 4, StandardCharsets.US_ASCII));
            } finally {
                publish.release();
            }
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
