/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import dev.heartbeat.netty.CloseReason;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.mqtt.MqttConnectReturnCode;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.util.ReferenceCountUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A minimal MQTT 3.1.1 broker after {@code MqttDecoder}: CONNECT is accepted (CONNACK), PINGREQ
 * answered PINGRESP, a PUBLISH at QoS 0 echoed to its sender (the same topic and payload), DISCONNECT
 * closes. Anything it does not do (QoS 1 and 2, subscriptions) and any packet the decoder refused
 * closes the connection, as a broker closes on a protocol error. Idleness is MQTT's keep-alive rule,
 * in the handler after the decoder ({@code MqttKeepAlive}); MQTT 3.1.1 has no packet a server could
 * say goodbye with. Sharable.
 */
@ChannelHandler.Sharable
final class MqttEcho extends EchoHandler {

    private static final Logger LOG = LoggerFactory.getLogger(MqttEcho.class);

    /** Immutable and not reference counted: one for every connection. */
    private static final MqttMessage PINGRESP =
            new MqttMessage(new MqttFixedHeader(MqttMessageType.PINGRESP, false, MqttQoS.AT_MOST_ONCE, false, 0));
    private static final MqttMessage CONNACK = MqttMessageBuilders.connAck()
            .returnCode(MqttConnectReturnCode.CONNECTION_ACCEPTED).sessionPresent(false).build();

    MqttEcho(DemoCounters counters) {
        super(counters);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        MqttMessage m = (MqttMessage) msg;
        if (m.decoderResult().isFailure() || m.fixedHeader() == null) {
            ReferenceCountUtil.release(msg);
            refuse(ctx, "a packet MqttDecoder refused: " + m.decoderResult().cause());
            return;
        }
        switch (m.fixedHeader().messageType()) {
            case CONNECT:
                ctx.write(CONNACK, ctx.voidPromise());
                break;
            case PINGREQ:
                ctx.write(PINGRESP, ctx.voidPromise());
                break;
            case PUBLISH:
                if (m.fixedHeader().qosLevel() != MqttQoS.AT_MOST_ONCE) {
                    ReferenceCountUtil.release(msg);
                    refuse(ctx, "a PUBLISH at " + m.fixedHeader().qosLevel() + " (this broker does QoS 0 only)");
                    return;
                }
                counters.linesEchoed.increment();
                ctx.write((MqttPublishMessage) m, ctx.voidPromise()); // back to its sender, as it came
                return;
            case DISCONNECT:
                ctx.close();
                break;
            default:
                ReferenceCountUtil.release(msg);
                refuse(ctx, "a " + m.fixedHeader().messageType() + " (this broker does not do it)");
                return;
        }
        ReferenceCountUtil.release(msg);
    }

    private void refuse(ChannelHandlerContext ctx, String what) {
        counters.connectionErrors.increment();
        LOG.debug("{}: closing after {}", ctx.channel(), what);
        ctx.close();
    }

    @Override
    void sayGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        // MQTT 3.1.1 has no server DISCONNECT: the client learns nothing but the close.
    }
}
