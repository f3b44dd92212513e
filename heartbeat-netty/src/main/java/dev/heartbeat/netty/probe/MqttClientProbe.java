/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.probe;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.ProbePlacement;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ServerChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.AttributeKey;

/**
 * MQTT PINGREQ, answered in order by PINGRESP, and MQTT 5 DISCONNECT goodbyes: the probe
 * {@link Probes#mqttClient()} returns (one instance for every channel).
 */
final class MqttClientProbe extends Probe {
    static final MqttClientProbe INSTANCE = new MqttClientProbe();
    /** Where Netty's MQTT codec keeps the session's version (its {@code MqttCodecUtil.MQTT_VERSION_KEY}). */
    private static final AttributeKey<MqttVersion> MQTT_VERSION = AttributeKey.valueOf("NETTY_CODEC_MQTT_VERSION");
    /** Immutable and never reference counted, so one instance serves every channel. */
    private static final MqttMessage PINGREQ =
            new MqttMessage(new MqttFixedHeader(MqttMessageType.PINGREQ, false, MqttQoS.AT_MOST_ONCE, false, 0));

    @Override
    public String name() {
        return "mqtt";
    }

    private MqttClientProbe() {
        super(Matching.IN_ORDER, true);
    }

    @Override
    public Object newPing(ChannelHandlerContext ctx, long token) {
        return PINGREQ;
    }

    @Override
    protected boolean isAnswer(Object msg) {
        return msg instanceof MqttMessage m && m.fixedHeader() != null
                && m.fixedHeader().messageType() == MqttMessageType.PINGRESP;
    }

    /** PINGREQ: a client's ping, which a server polices. */
    @Override
    protected boolean isPeerPing(Object msg) {
        return msg instanceof MqttMessage m && m.fixedHeader() != null
                && m.fixedHeader().messageType() == MqttMessageType.PINGREQ;
    }

    @Override
    public boolean recognisesPeerPings() {
        return true;
    }

    /**
     * On an MQTT 5 session (one whose {@code MqttDecoder} or {@code MqttEncoder} saw a CONNECT of
     * version 5), a DISCONNECT with a reason code and the reason's name as its Reason String; on any
     * other, none (null). MQTT 3.1.1 has no DISCONNECT from the server, and a client's DISCONNECT is a
     * clean end that makes the server discard its Will, which a close for idleness or a broken
     * connection must not; so a 3.1.1 channel is closed without a word. The reason codes are those the
     * specification allows the side that sends them (MQTT 5.0 section 3.14.2.1); a server is a channel
     * accepted by a {@code ServerChannel}:
     * <ul>
     * <li>server: 0x8D Keep Alive timeout (idleness, ping timeout), 0xA0 Maximum connect time (maximum
     *     age), 0x8B Server shutting down (drain), 0x96 Message rate too high (ping abuse), 0x97 Quota
     *     exceeded (write stall, unwritable), 0x80 Unspecified error for any other reason;</li>
     * <li>client: 0x00 Normal disconnection (maximum age, drain: planned ends), 0x04 Disconnect with Will
     *     Message (idleness, ping timeout: the Will is still published, as after a close without a word),
     *     0x96 and 0x97 as the server, 0x04 for any other reason.</li>
     * </ul>
     */
    @Override
    @SuppressWarnings("deprecation") // MqttPropertyType: deprecated in Netty 4.2, whose int constants 4.1 lacks
    public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        Channel channel = ctx.channel();
        if (!channel.hasAttr(MQTT_VERSION) || channel.attr(MQTT_VERSION).get() != MqttVersion.MQTT_5) {
            return null;
        }
        MqttProperties properties = new MqttProperties();
        properties.add(new MqttProperties.StringProperty(MqttProperties.MqttPropertyType.REASON_STRING.value(),
                reason.name()));
        int code = channel.parent() instanceof ServerChannel ? serverReasonCode(reason) : clientReasonCode(reason);
        return MqttMessageBuilders.disconnect().reasonCode((byte) code).properties(properties).build();
    }

    private static int serverReasonCode(CloseReason reason) {
        return switch (reason) {
            case READER_IDLE, WRITER_IDLE, ALL_IDLE, PING_TIMEOUT -> 0x8D;
            case MAX_AGE -> 0xA0;
            case DRAIN -> 0x8B;
            case PING_ABUSE -> 0x96;
            case WRITE_STALL, UNWRITABLE -> 0x97;
            default -> 0x80;
        };
    }

    private static int clientReasonCode(CloseReason reason) {
        return switch (reason) {
            case MAX_AGE, DRAIN -> 0x00;
            case PING_ABUSE -> 0x96;
            case WRITE_STALL, UNWRITABLE -> 0x97;
            default -> 0x04;
        };
    }

    @Override
    protected String placementAdvice() {
        return "put the Heartbeat handler after MqttDecoder, whose PINGRESP messages it must see";
    }

    @Override
    protected ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
        String subject = ProbePlacement.subject(ctx, this);
        ProbePlacement.Place decoder = ProbePlacement.first(ctx.pipeline(), MqttDecoder.class::isInstance);
        if (decoder == null) {
            return ProbePlacement.Finding.unknown(subject + " has no MqttDecoder in its pipeline, so its placement "
                    + "cannot be checked: add Heartbeat's handler after MqttDecoder");
        }
        return decoder.index() < ProbePlacement.self(ctx).index() ? ProbePlacement.Finding.FITS
                : ProbePlacement.Finding.wrong(subject + " is before MqttDecoder " + decoder.quoted() + ", so it "
                        + "reads bytes, never PINGRESP messages: add Heartbeat's handler after MqttDecoder");
    }
}
