/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * MQTT with Netty's real codec: the client probe ({@link Probes#mqttClient()}) and the server's
 * keep-alive rule ({@link MqttKeepAlive}) with a {@link HeartbeatMonitor} in virtual time.
 */
class MqttProbeTest {

    /** An action may come one tick (1.05 ms) after its deadline; the test clock moves in 1 ms steps. */
    private static final long LATE = 3;

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(12)); // wraps
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
            .maxCoalescing(Duration.ZERO).build();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    /** What reached the end of the server's pipeline. */
    private final List<Object> received = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        received.forEach(ReferenceCountUtil::release);
        monitor.close();
    }

    /** Bytes a client would send: the message through Netty's encoder. */
    private static ByteBuf encode(MqttMessage message) {
        EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
        encoder.writeOutbound(message);
        ByteBuf bytes = encoder.readOutbound();
        encoder.finishAndReleaseAll();
        return bytes;
    }

    private static MqttConnectMessage connect(int keepAliveSeconds) {
        return MqttMessageBuilders.connect().clientId("sensor-1").protocolVersion(MqttVersion.MQTT_3_1_1)
                .keepAlive(keepAliveSeconds).build();
    }

    private static MqttMessage packet(MqttMessageType type) {
        return new MqttMessage(new MqttFixedHeader(type, false, MqttQoS.AT_MOST_ONCE,
                false, 0));
    }

    /** A broker's pipeline: Heartbeat (connect deadline 30 s), MqttDecoder, MqttKeepAlive, a sink. */
    private EmbeddedChannel broker(MqttKeepAlive keepAlive) {
        HeartbeatConfig connectDeadline = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(30)).build();
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(connectDeadline), new MqttDecoder(), keepAlive,
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        received.add(msg);
                    }
                });
        channels.add(ch);
        return ch;
    }

    /** Moves virtual time in 1 ms steps, running the worker, then the event loop's tasks. */
    private void advance(long millis) {
        for (long i = 0; i < millis; i++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
        monitor.runOnce();
        for (EmbeddedChannel ch : channels) {
            ch.runPendingTasks();
        }
    }

    @Test
    void shouldCloseAfterOneAndAHalfKeepAlivesOfSilence() {
        MqttKeepAlive keepAlive = MqttKeepAlive.of(monitor);
        EmbeddedChannel ch = broker(keepAlive);
        ch.writeInbound(encode(connect(10)));

        assertInstanceOf(MqttConnectMessage.class, received.get(0), "the CONNECT goes on");
        assertNull(ch.pipeline().get(MqttKeepAlive.class), "done after CONNECT: it leaves the pipeline");
        assertEquals(Duration.ofSeconds(15), monitor.configOf(ch).readerIdle());
        advance(14_900);
        assertTrue(ch.isOpen(), "not at 14.9 s");
        advance(100 + LATE);
        assertFalse(ch.isOpen(), "closed at 15 s");
        assertEquals(1, monitor.stats().closedReaderIdle());
    }

    @Test
    void shouldCountPingreqAsTraffic() {
        EmbeddedChannel ch = broker(MqttKeepAlive.of(monitor));
        ch.writeInbound(encode(connect(10)));
        advance(10_000);
        ch.writeInbound(encode(packet(MqttMessageType.PINGREQ))); // at 10 s, as a client keeping the rule does
        assertEquals(MqttMessageType.PINGREQ, ((MqttMessage) received.get(1)).fixedHeader().messageType());

        advance(14_900);
        assertTrue(ch.isOpen(), "15 s after CONNECT, but 14.9 s after the PINGREQ");
        advance(100 + LATE);
        assertFalse(ch.isOpen(), "15 s after the PINGREQ");
    }

    @Test
    void shouldApplyTheMultiplier() {
        MqttKeepAlive keepAlive = MqttKeepAlive.builder(monitor).multiplier(2).build();
        EmbeddedChannel ch = broker(keepAlive);
        ch.writeInbound(encode(connect(10)));
        advance(19_900);
        assertTrue(ch.isOpen());
        advance(100 + LATE);
        assertFalse(ch.isOpen());
        assertEquals(Duration.ofMillis(1_500), MqttKeepAlive.of(monitor).configFor(1).readerIdle());
        assertSame(keepAlive.configFor(60), keepAlive.configFor(60), "one fleet, one configuration");
    }

    @Test
    void shouldStopWatchingAClientWithoutKeepAlive() {
        EmbeddedChannel ch = broker(MqttKeepAlive.of(monitor));
        ch.writeInbound(encode(connect(0)));
        assertThrows(IllegalArgumentException.class, () -> monitor.configOf(ch), "no Heartbeat handler left");
        advance(31_000);
        assertTrue(ch.isOpen(), "Keep Alive 0: the server never closes for silence, not even at the connect deadline");
    }

    @Test
    void shouldApplyTheServersLimitToAClientWithoutKeepAlive() {
        HeartbeatConfig limit = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5)).build();
        EmbeddedChannel ch = broker(MqttKeepAlive.builder(monitor).whenKeepAliveDisabled(limit).build());
        ch.writeInbound(encode(connect(0)));
        assertSame(limit, monitor.configOf(ch));
    }

    @Test
    void shouldRefuseBadSettings() {
        MqttKeepAlive.Builder b = MqttKeepAlive.builder(monitor);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.multiplier(0.5));
        assertTrue(e.getMessage().contains("0.5"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.multiplier(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> b.multiplier(1001));
        assertThrows(IllegalArgumentException.class, () -> MqttKeepAlive.of(monitor).configFor(0));
        assertThrows(IllegalArgumentException.class, () -> MqttKeepAlive.of(monitor).configFor(65_536));
    }

    @Test
    void shouldReportAMissingHeartbeatHandlerAndStillPassTheConnectOn() {
        List<Throwable> errors = new ArrayList<>();
        EmbeddedChannel ch = new EmbeddedChannel(new MqttDecoder(), MqttKeepAlive.of(monitor),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelRead(ChannelHandlerContext ctx, Object msg) {
                        received.add(msg);
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        errors.add(cause);
                    }
                });
        channels.add(ch);
        ch.writeInbound(encode(connect(10)));
        assertEquals(1, received.size());
        assertEquals(1, errors.size());
        assertTrue(errors.get(0).getMessage().contains("no Heartbeat handler"), errors.get(0).getMessage());
    }

    @Test
    void shouldPingreqAndMatchPingrespInOrder() throws Exception {
        Probe probe = Probes.mqttClient();
        EmbeddedChannel client = new EmbeddedChannel(MqttEncoder.INSTANCE, new MqttDecoder());
        channels.add(client);

        client.writeAndFlush(probe.newPing(client.pipeline().lastContext(), 99));
        ByteBuf wire = client.readOutbound();
        try {
            assertEquals("c000", ByteBufUtil.hexDump(wire), "PINGREQ: type 12, remaining length 0");
        } finally {
            wire.release();
        }

        client.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0xD0, 0})); // PINGRESP
        MqttMessage pingresp = client.readInbound();
        assertEquals(0, probe.classify(pingresp, 99, 1), "the one waiting");
        assertEquals(1, probe.classify(pingresp, 99, 2), "the oldest of two: one ping after it still waits");
        assertEquals(Probe.UNSOLICITED, probe.classify(pingresp, 99, 0));
        assertTrue(probe.consumes(0));

        client.writeInbound(encode(packet(MqttMessageType.PINGREQ)));
        assertEquals(Probe.NOT_AN_ANSWER, probe.classify(client.readInbound(), 99, 1), "the peer's PINGREQ");
    }
}
