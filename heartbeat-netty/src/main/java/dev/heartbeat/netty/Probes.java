/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.function.Predicate;

/**
 * The built-in {@link Probe}s, moved to {@link dev.heartbeat.netty.probe.Probes}: each method here returns
 * what the same method there returns (the same instance for the three protocol probes).
 *
 * @deprecated since 0.2: use {@link dev.heartbeat.netty.probe.Probes}, which has the same methods; this
 *     forwarder is removed in a later release.
 */
@Deprecated(since = "0.2", forRemoval = true)
@SuppressWarnings("InlineMeSuggester") // @InlineMe would need Error Prone's annotations at run time, for a forwarder
public final class Probes {

    private Probes() {
    }

    /**
     * HTTP/2 PING frames.
     *
     * @deprecated use {@link dev.heartbeat.netty.probe.Probes#http2()}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public static Probe http2() {
        return dev.heartbeat.netty.probe.Probes.http2();
    }

    /**
     * WebSocket Ping and Pong frames.
     *
     * @deprecated use {@link dev.heartbeat.netty.probe.Probes#webSocket()}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public static Probe webSocket() {
        return dev.heartbeat.netty.probe.Probes.webSocket();
    }

    /**
     * MQTT's client keep-alive: PINGREQ, answered by PINGRESP.
     *
     * @deprecated use {@link dev.heartbeat.netty.probe.Probes#mqttClient()}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public static Probe mqttClient() {
        return dev.heartbeat.netty.probe.Probes.mqttClient();
    }

    /**
     * A probe whose answers carry no token, matched in order and consumed.
     *
     * @deprecated use {@link dev.heartbeat.netty.probe.Probes#custom(PingFactory, Predicate)}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public static Probe custom(PingFactory ping, Predicate<Object> isAnswer) {
        return dev.heartbeat.netty.probe.Probes.custom(ping, isAnswer);
    }

    /**
     * A probe whose answers carry no token, matched in order, consumed or passed on.
     *
     * @deprecated use {@link dev.heartbeat.netty.probe.Probes#custom(PingFactory, Predicate, boolean)}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public static Probe custom(PingFactory ping, Predicate<Object> isAnswer, boolean consumeAnswers) {
        return dev.heartbeat.netty.probe.Probes.custom(ping, isAnswer, consumeAnswers);
    }

    /**
     * A {@link PingFactory} as a probe that does not recognise answers.
     *
     * @deprecated use {@link dev.heartbeat.netty.probe.Probes#of(PingFactory)}
     */
    @Deprecated(since = "0.2", forRemoval = true)
    public static Probe of(PingFactory factory) {
        return dev.heartbeat.netty.probe.Probes.of(factory);
    }
}
