/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.GuardState;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.time.Duration;

import dev.heartbeat.core.ManualTicker;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.ClassLayout;

/**
 * The per-channel handler, which is also the channel's wheel entry, is the one object Heartbeat adds
 * per channel besides Netty's pipeline context (plus a side object for the configurations that need
 * one): its size is a promise, pinned here from the JVM's real field layout (JOL), so a change that
 * grows it fails until the limit is raised on purpose. The tracker's goal is 64 bytes; the limits
 * below are today's sizes, not the goal.
 *
 * <p>Sizes are with compressed class pointers and oops (the default below 32 GiB of heap). The total
 * of a configuration is the handler plus its side object, measured on an active channel; what they
 * point to (the channel, the shared monitor and configuration) is not per handler and not counted.
 */
class HandlerLayoutTest {

    /**
     * The handler alone: every configuration pays it. (104 bytes until the configuration serial, the
     * event loop's three flags and the worker's judged serial became one word, and the ping's
     * on-the-wire flag a bit of the hand-off word.)
     */
    private static final long HANDLER_BYTES = 96;
    /**
     * The events policy (the IdleStateHandler drop-in) with one or two of its three kinds, and
     * closeWhenIdle: no side object. (The handler was 112 bytes with a third check-time slot.)
     */
    private static final long EVENTS_TOTAL_BYTES = HANDLER_BYTES;
    /**
     * The handler of a configuration that tracks writes (writer or all idle, a write stall): 8 bytes
     * more, for the latest write's promise not settled yet and the flush state (issue 29: a tracked
     * write without a listener and a clock read of its own).
     */
    private static final long DUPLEX_BYTES = HANDLER_BYTES + 8;
    private static final long CLOSE_TOTAL_BYTES = HANDLER_BYTES;
    /**
     * The events policy with all three kinds: the handler and the all-idle check time's side object
     * (24 bytes), the one configuration that pays for the third slot the handler no longer has.
     */
    private static final long EVENTS_ALL_THREE_TOTAL_BYTES = HANDLER_BYTES + 24;
    /**
     * The ping policy: the handler alone. Its state (when the pending ping was decided and written,
     * the pings missed in a row, whether the ping is on the wire) is in the handler's policy slots,
     * where the idle policies keep their check times, and a bit of the hand-off word; until issue 8's slimming it
     * was a 32-byte side object (144 bytes in all).
     */
    private static final long PING_TOTAL_BYTES = HANDLER_BYTES;
    /**
     * The ping policy with a probe that recognises its answers (every built-in protocol probe and
     * custom): the handler and its probe state (the latest token, the answer time, the round-trip
     * estimate's two longs, which it inherits from RttEstimator, and one word for the unanswered
     * count and the ever-answered flag: 48 bytes; 56 while the flag was a byte of its own).
     * Until issue 8's slimming: 88 bytes, a 56-byte probe state that also held the ping state and a
     * separate 32-byte estimator.
     */
    private static final long PROBE_TOTAL_BYTES = HANDLER_BYTES + 48;
    /**
     * The events policy with observeOutput: the handler and its output observer (48 bytes, 40 before
     * it carried the all-idle check time for a configuration with all three kinds).
     */
    private static final long OBSERVE_OUTPUT_TOTAL_BYTES = HANDLER_BYTES + 48;
    /**
     * Any policy with lifecycle guards (maxAge, writeStall, maxUnwritable, a close veto): the handler and
     * its guard state (120 bytes for the guards, 24 more for the veto's hold).
     */
    private static final long GUARDS_TOTAL_BYTES = HANDLER_BYTES + 144;

    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(new ManualTicker(-1)).build();
    private EmbeddedChannel channel;

    @AfterEach
    void tearDown() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        monitor.close();
    }

    @Test
    void theHandlerDoesNotGrow() {
        ClassLayout layout = ClassLayout.parseClass(HeartbeatHandler.class);
        long size = layout.instanceSize();
        System.out.println("HandlerLayoutTest: HeartbeatHandler is " + size + " bytes\n" + layout.toPrintable());
        assertTrue(size <= HANDLER_BYTES, "HeartbeatHandler grew to " + size + " bytes (limit " + HANDLER_BYTES
                + "):\n" + layout.toPrintable());
    }

    @Test
    void eventsPolicyAddsNoSideObject() {
        assertTotal("events", HeartbeatConfig.events().readerIdle(Duration.ofSeconds(60))
                .writerIdle(Duration.ofSeconds(30)).build(), EVENTS_TOTAL_BYTES + DUPLEX_BYTES - HANDLER_BYTES);
    }

    @Test
    void eventsPolicyWithAllIdleAloneAddsNoSideObject() {
        assertTotal("events, all idle only", HeartbeatConfig.events().allIdle(Duration.ofSeconds(90)).build(),
                EVENTS_TOTAL_BYTES + DUPLEX_BYTES - HANDLER_BYTES);
    }

    @Test
    void eventsPolicyWithAllThreeKindsAddsOnlyTheThirdCheckTime() {
        assertTotal("events, all three kinds", HeartbeatConfig.events().readerIdle(Duration.ofSeconds(60))
                .writerIdle(Duration.ofSeconds(30)).allIdle(Duration.ofSeconds(90)).build(),
                EVENTS_ALL_THREE_TOTAL_BYTES + DUPLEX_BYTES - HANDLER_BYTES);
    }

    @Test
    void closePolicyAddsNoSideObject() {
        assertTotal("closeWhenIdle", HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60)).build(),
                CLOSE_TOTAL_BYTES);
    }

    @Test
    void pingPolicyAddsNoSideObject() {
        assertTotal("ping", HeartbeatConfig.ping(ch -> Unpooled.EMPTY_BUFFER).interval(Duration.ofSeconds(30))
                .timeout(Duration.ofSeconds(10)).build(), PING_TOTAL_BYTES);
    }

    @Test
    void http2ProbeAddsOnlyItsProbeState() {
        assertTotal("ping(Probes.http2())", probing(Probes.http2()), PROBE_TOTAL_BYTES);
    }

    @Test
    void webSocketProbeAddsOnlyItsProbeState() {
        assertTotal("ping(Probes.webSocket())", probing(Probes.webSocket()), PROBE_TOTAL_BYTES);
    }

    @Test
    void mqttClientProbeAddsOnlyItsProbeState() {
        assertTotal("ping(Probes.mqttClient())", probing(Probes.mqttClient()), PROBE_TOTAL_BYTES);
    }

    @Test
    void customProbeAddsOnlyItsProbeState() {
        assertTotal("ping(Probes.custom(...))", probing(Probes.custom(ch -> "PING", "PONG"::equals)),
                PROBE_TOTAL_BYTES);
    }

    /** A matched-ack ping configuration of {@code probe}, with the adaptive timeout: every probe setting on. */
    private static HeartbeatConfig probing(Probe probe) {
        return HeartbeatConfig.ping(probe).interval(Duration.ofSeconds(30)).timeout(Duration.ofSeconds(10))
                .ackMode(AckMode.MATCHED_ONLY).adaptiveTimeout(Duration.ofMillis(100), Duration.ofSeconds(10))
                .closeWhenReaderIdle(Duration.ofMinutes(2)).build();
    }

    @Test
    void guardsAddOnlyTheirGuardState() {
        assertTotal("closeWhenIdle with every guard", HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(60))
                .maxAge(Duration.ofMinutes(30)).maxAgeJitter(0.1, JitterMode.SYMMETRIC)
                .maxAgeGrace(Duration.ofSeconds(30)).writeStall(Duration.ofSeconds(30))
                .maxUnwritable(Duration.ofSeconds(60)).build(), GUARDS_TOTAL_BYTES + DUPLEX_BYTES - HANDLER_BYTES);
    }

    @Test
    void observeOutputAddsOnlyItsObserver() {
        assertTotal("events with observeOutput", HeartbeatConfig.events().writerIdle(Duration.ofSeconds(30))
                .observeOutput(true).build(), OBSERVE_OUTPUT_TOTAL_BYTES + DUPLEX_BYTES - HANDLER_BYTES);
    }

    /** The handler of {@code config} on an active channel, plus its side object if it has one. */
    private void assertTotal(String name, HeartbeatConfig config, long limit) {
        HeartbeatHandler handler = (HeartbeatHandler) monitor.newHandler(config);
        channel = new EmbeddedChannel(handler); // active: the handler has made what it needs
        long total = ClassLayout.parseInstance(handler).instanceSize();
        StringBuilder report = new StringBuilder("HandlerLayoutTest: ").append(name).append(": handler ")
                .append(total).append(" bytes");
        GuardState guards = handler.guardState();
        if (guards != null) {
            ClassLayout guardLayout = ClassLayout.parseInstance(guards);
            total += guardLayout.instanceSize();
            report.append(" + GuardState ").append(guardLayout.instanceSize()).append(" bytes\n")
                    .append(guardLayout.toPrintable());
        }
        Object side = handler.side();
        if (side != null) {
            ClassLayout sideLayout = ClassLayout.parseInstance(side);
            total += sideLayout.instanceSize();
            report.append(" + ").append(side.getClass().getSimpleName()).append(' ')
                    .append(sideLayout.instanceSize()).append(" bytes\n").append(sideLayout.toPrintable());
        }
        report.insert(report.indexOf(" bytes") + " bytes".length(), " (total " + total + ")");
        System.out.println(report);
        assertTrue(total <= limit, name + ": handler and side object grew to " + total + " bytes (limit " + limit
                + "):\n" + report);
    }
}
