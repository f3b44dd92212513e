/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Guards;
import dev.heartbeat.netty.engine.Plan;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.heartbeat.netty.probe.Probes;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A derived configuration ({@code withInterval}, {@code withDoubledInterval}, {@code withTimeoutExceptions},
 * {@link MqttKeepAlive}'s keep-alive) replaces one concern and keeps every other setting: compared
 * field by field, by reflection, so that a field added to {@link HeartbeatConfig} and not carried over
 * by a derivation fails here.
 */
class DerivedConfigTest {

    private static final CloseVeto VETO = (ch, reason) -> CloseDecision.PROCEED;
    private static final AdaptiveKeepAlive<java.net.SocketAddress> TUNER = AdaptiveKeepAlive.builder().build();

    /** The fields of the idle policy's concern: what MqttKeepAlive replaces (and what follows from them). */
    private static final Set<String> IDLE_CONCERN = Set.of("policy", "readerIdleNanos", "writerIdleNanos",
            "allIdleNanos", "observeOutput", "shortestNanos", "coalescingNanos", "policyTracks", "tracksReads",
            "tracksWrites");
    /** What a new ping interval replaces (and what follows from it). */
    private static final Set<String> INTERVAL_CONCERN = Set.of("pingIntervalNanos", "shortestNanos",
            "coalescingNanos");

    private final VirtualTime.World world = new VirtualTime.World(5);

    @AfterEach
    void tearDown() {
        world.close();
    }

    /** An idle configuration with every setting of its policy away from its default. */
    private static HeartbeatConfig idleBase(UnaryOperator<HeartbeatConfig.Builder> last) {
        return last.apply(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(7))
                .writerIdle(Duration.ofSeconds(11)).allIdle(Duration.ofSeconds(13)).observeOutput(true)
                .maxAge(Duration.ofMinutes(3)).maxAgeJitter(0.2, JitterMode.DOWN_ONLY)
                .maxAgeGrace(Duration.ofSeconds(9)).writeStall(Duration.ofSeconds(4))
                .maxUnwritable(Duration.ofSeconds(6)).goodbye(Probes.webSocket())
                .beforeClose(VETO).maxCloseHold(Duration.ofSeconds(17))).build();
    }

    /** A ping configuration with every setting of its policy away from its default. */
    private static HeartbeatConfig pingBase() {
        return HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(5)).timeout(Duration.ofSeconds(2))
                .maxMissedPings(4).jitter(0.3).whenWriterIdle().closeWhenReaderIdle(Duration.ofSeconds(60))
                .ackMode(AckMode.MATCHED_ONLY).adaptiveTimeout(Duration.ofMillis(100), Duration.ofSeconds(3))
                .adaptiveInterval(TUNER).maxAge(Duration.ofMinutes(3)).maxAgeJitter(0.2, JitterMode.DOWN_ONLY)
                .maxAgeGrace(Duration.ofSeconds(9)).writeStall(Duration.ofSeconds(4))
                .maxUnwritable(Duration.ofSeconds(6)).goodbye(Probes.webSocket()).beforeClose(VETO)
                .maxCloseHold(Duration.ofSeconds(17)).build();
    }

    private static List<Field> fields(Class<?> type) {
        List<Field> fields = new ArrayList<>();
        for (Field f : type.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) && !f.isSynthetic()) {
                f.setAccessible(true);
                fields.add(f);
            }
        }
        return fields;
    }

    /** Whether {@code type}'s values are compared field by field (this package's own value classes). */
    private static boolean deep(Class<?> type) {
        return type == Plan.class || type == Guards.class || type == HeartbeatConfig.Builder.class
                || type == HeartbeatConfig.GuardSettings.class;
    }

    /**
     * Fields compiled from the others (the rule lists): they follow the settings they are made from; and the
     * plan's way back to its configuration.
     */
    private static final Set<String> COMPILED = Set.of("rules", "inboundRules", "owner");

    /** The fields (as paths) of {@code a} and {@code b} that differ, outside {@code replaced}. */
    private static List<String> differences(Object a, Object b, Set<String> replaced, String prefix) {
        List<String> out = new ArrayList<>();
        for (Field f : fields(a.getClass())) {
            if (replaced.contains(f.getName()) || COMPILED.contains(f.getName())) {
                continue;
            }
            Object x;
            Object y;
            try {
                x = f.get(a);
                y = f.get(b);
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
            if (x != null && y != null && deep(f.getType())) {
                out.addAll(differences(x, y, replaced, prefix + f.getName() + "."));
            } else if (!Objects.deepEquals(x, y)) {
                out.add(prefix + f.getName() + " (" + x + " became " + y + ")");
            }
        }
        return out;
    }

    private static void assertCarried(String derivation, HeartbeatConfig base, HeartbeatConfig derived,
            Set<String> replaced) {
        List<String> lost = differences(base, derived, replaced, "");
        if (!lost.isEmpty()) {
            fail(derivation + " must replace only " + replaced + " and keep every other setting; it changed " + lost);
        }
    }

    @Test
    void everyFieldIsSetAwayFromItsDefaultByABaseOfThisTest() {
        HeartbeatConfig idleMinimal = HeartbeatConfig.closeWhenIdle().maxAge(Duration.ofMinutes(1)).build();
        HeartbeatConfig pingMinimal = HeartbeatConfig.ping(ch -> "PING").interval(Duration.ofSeconds(1)).build();
        HeartbeatConfig idle = idleBase(b -> b);
        HeartbeatConfig ping = pingBase();
        List<String> unset = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (Field f : fields(HeartbeatConfig.class)) {
            if (!f.getName().equals("plan")) {
                names.add(f.getName());
            }
        }
        for (Field f : fields(Plan.class)) {
            names.add("plan." + f.getName());
        }
        for (String name : names) {
            String last = name.substring(name.lastIndexOf('.') + 1);
            if (last.equals("policy") || COMPILED.contains(last)) {
                continue; // each derivation says whether it keeps it; the rule lists follow the settings
            }
            if (differences(idle, idleMinimal, Set.of(), "").stream().noneMatch(d -> d.startsWith(name))
                    && differences(ping, pingMinimal, Set.of(), "").stream().noneMatch(d -> d.startsWith(name))) {
                unset.add(name);
            }
        }
        assertTrue(unset.isEmpty(), "set these fields away from their defaults in idleBase or pingBase, so that the "
                + "derivations are checked to carry them: " + unset);
    }

    @Test
    void aNewIntervalKeepsEverythingElse() {
        HeartbeatConfig base = pingBase();
        HeartbeatConfig derived = base.withInterval(java.util.concurrent.TimeUnit.SECONDS.toNanos(8));
        assertEquals(Duration.ofSeconds(8), derived.pingInterval());
        assertCarried("withInterval", base, derived, INTERVAL_CONCERN);
        HeartbeatConfig doubled = base.withDoubledInterval();
        assertEquals(Duration.ofSeconds(10), doubled.pingInterval());
        assertCarried("withDoubledInterval", base, doubled, INTERVAL_CONCERN);
    }

    @Test
    void aDoubledIntervalStillPingsBeforeTheReaderIdleClose() {
        HeartbeatConfig base = HeartbeatConfig.ping(ch -> "PING").interval(Duration.ofSeconds(10)).jitter(0.5)
                .closeWhenReaderIdle(Duration.ofSeconds(20)).build();
        HeartbeatConfig doubled = base.withDoubledInterval();
        assertTrue(doubled.pingInterval().compareTo(base.pingInterval()) > 0
                && doubled.pingInterval().compareTo(Duration.ofMillis(13_334)) < 0, "backs off, within 20 s / 1.5: "
                + doubled.pingInterval());
        doubled.toBuilder().build(); // passes the check that its first ping comes before the close
    }

    @Test
    void timeoutExceptionsKeepEverythingElse() {
        HeartbeatConfig base = idleBase(b -> b);
        HeartbeatConfig derived = idleBase(HeartbeatConfig.Builder::withTimeoutExceptions);
        assertEquals(HeartbeatConfig.Policy.CLOSE_WITH_EXCEPTION, derived.policy());
        assertCarried("withTimeoutExceptions", base, derived, Set.of("policy"));
    }

    private static ByteBuf connect(int keepAliveSeconds) {
        MqttMessage connect = MqttMessageBuilders.connect().clientId("sensor-1").protocolVersion(MqttVersion.MQTT_3_1_1)
                .keepAlive(keepAliveSeconds).build();
        EmbeddedChannel encoder = new EmbeddedChannel(MqttEncoder.INSTANCE);
        encoder.writeOutbound(connect);
        ByteBuf bytes = encoder.readOutbound();
        encoder.finishAndReleaseAll();
        return bytes;
    }

    @Test
    void mqttKeepAliveReplacesTheIdleTimeoutsAndKeepsTheGuards() {
        HeartbeatConfig base = idleBase(b -> b);
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(base), new MqttDecoder(),
                MqttKeepAlive.of(world.monitor));
        ch.writeInbound(connect(10));
        HeartbeatConfig derived = world.monitor.configOf(ch);
        assertEquals(Duration.ofSeconds(15), derived.readerIdle(), "1.5 x the Keep Alive");
        assertEquals(Duration.ZERO, derived.writerIdle(), "the connect deadline's other timeouts are replaced too");
        assertCarried("MqttKeepAlive", base, derived, IDLE_CONCERN);
    }

    @Test
    void mqttKeepAliveKeepsMaxAgeAfterConnect() {
        HeartbeatConfig connectDeadline = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(30))
                .maxAge(Duration.ofSeconds(5)).build();
        EmbeddedChannel ch = world.channel(world.monitor.newHandler(connectDeadline), new MqttDecoder(),
                MqttKeepAlive.of(world.monitor));
        ch.writeInbound(connect(10));
        ch.readInbound();
        world.advance(4_900);
        assertTrue(ch.isOpen(), "not before the maximum age");
        world.advance(1_200); // the goodbye-less close comes at once (no goodbye probe, no grace)
        assertFalse(ch.isOpen(), "maxAge(5s) closes after CONNECT too");
        assertEquals(1, world.monitor.stats().closedByReason().get(CloseReason.MAX_AGE));
    }
}
