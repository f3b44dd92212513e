/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.MqttKeepAlive;
import dev.heartbeat.netty.Probe;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.timeout.IdleStateHandler;

/**
 * The idle handling of one server's connections, as {@code --idle-impl} selects: Heartbeat's
 * handler, Netty's {@code IdleStateHandler} with a policy handler after it, or nothing. Each
 * protocol's pipeline calls {@link #addTo} where the handler must go (where it sees the probe's
 * answers); a protocol whose pings cannot be written until it is set up (WebSocket, before the
 * handshake) adds it with {@code pingsLater} and calls {@link #startPings} once it is. Thread-safe,
 * one per server; the pipeline methods run on the channel's event loop.
 */
abstract class IdleHandling {

    /** The name of the idle handler in every pipeline (Heartbeat's, or {@code IdleStateHandler}). */
    static final String IDLE = "idle";
    /** The netty impl's policy handler, right after {@link #IDLE}. */
    static final String IDLE_POLICY = "idle-policy";
    /** Heartbeat's RTT sampler, right before {@link #IDLE}. */
    static final String RTT = "idle-rtt";

    final ServerConfig config;

    private IdleHandling(ServerConfig config) {
        this.config = config;
    }

    /**
     * The idle handling for these settings.
     *
     * @param monitor Heartbeat's monitor; used only with {@code --idle-impl heartbeat}
     * @param probe the protocol's ping, or null if the server never pings (MQTT)
     * @param mayAnswer whether a message may answer a ping, for the RTT of matched answers; null if
     *     the probe does not match its answers
     */
    static IdleHandling create(ServerConfig config, HeartbeatMonitor monitor, DemoCounters counters, PingRtt rtt,
            Probe probe, Predicate<Object> mayAnswer) {
        switch (config.idleImpl()) {
            case HEARTBEAT:
                return new Heartbeat(config, monitor, rtt, probe, mayAnswer);
            case NETTY:
                return new Netty(config, counters, rtt, probe);
            default:
                return new None(config);
        }
    }

    /**
     * Adds the idle handlers at the end of {@code p}. With {@code pingsLater} and the ping policy, the
     * connection is closed after the ping policy's close window (the interval plus every missed ping's
     * timeout) unless {@link #startPings} comes first: the same time a silent client gets.
     */
    abstract void addTo(ChannelPipeline p, boolean pingsLater);

    /** The protocol is set up: from now on pings can be written. Event loop; nothing unless pinging. */
    abstract void startPings(Channel channel);

    /**
     * A new MQTT keep-alive handler, for right after {@code MqttDecoder}: it switches the idle handler
     * to 1.5 x the client's Keep Alive at CONNECT. Sharable: make one per server (it loads the MQTT
     * codec's classes). Null without idle handling.
     */
    abstract ChannelHandler mqttKeepAlive();

    /**
     * Whether the idle handler writes the protocol's goodbye itself before its closes (Heartbeat with
     * a goodbye probe: the ping policy's probe, or a configured one), so the echo handler must not.
     */
    boolean saysGoodbyes() {
        return false;
    }

    /** Whether the ping policy applies. */
    final boolean pinging() {
        return config.policy() == ServerConfig.Policy.PING && config.protocol().pings();
    }

    /** The ping policy's close window: the interval, then every missed ping's timeout. */
    final Duration pingCloseWindow() {
        return config.pingInterval().plus(config.pingTimeout().multipliedBy(config.maxMissedPings()));
    }

    /** Heartbeat: one handler of the shared monitor per channel. */
    private static final class Heartbeat extends IdleHandling {
        private final HeartbeatMonitor monitor;
        private final HeartbeatConfig main;
        private final HeartbeatConfig untilSetUp;
        private final RttSampler sampler; // null unless pinging with a probe that matches answers

        Heartbeat(ServerConfig config, HeartbeatMonitor monitor, PingRtt rtt, Probe probe,
                Predicate<Object> mayAnswer) {
            super(config);
            this.monitor = monitor;
            this.main = mainConfig(config, probe);
            this.untilSetUp = config.lifecycle().applyTo(HeartbeatConfig.closeWhenIdle().readerIdle(pingCloseWindow()))
                    .build();
            this.sampler = pinging() && mayAnswer != null ? new RttSampler(monitor, mayAnswer, rtt) : null;
        }

        private static HeartbeatConfig mainConfig(ServerConfig config, Probe probe) {
            switch (config.policy()) {
                case CLOSE:
                    return config.lifecycle().applyTo(HeartbeatConfig.closeWhenIdle().readerIdle(config.idleTimeout()))
                            .build();
                case EVENT:
                    return config.lifecycle().applyTo(HeartbeatConfig.events().readerIdle(config.idleTimeout()))
                            .build();
                case PING:
                    return config.lifecycle().applyTo(HeartbeatConfig.ping(probe)
                            .interval(config.pingInterval())
                            .timeout(config.pingTimeout())
                            .maxMissedPings(config.maxMissedPings())
                            .ackMode(config.ackMode()))
                            .build();
                default:
                    throw new AssertionError(config.policy());
            }
        }

        @Override
        void addTo(ChannelPipeline p, boolean pingsLater) {
            if (sampler != null) {
                p.addLast(RTT, sampler);
            }
            p.addLast(IDLE, monitor.newHandler(pingsLater && pinging() ? untilSetUp : main));
        }

        @Override
        void startPings(Channel channel) {
            if (pinging()) {
                monitor.reconfigure(channel, IDLE, main); // false if it closed meanwhile: nothing to do
            }
        }

        @Override
        ChannelHandler mqttKeepAlive() {
            return MqttKeepAlive.builder(monitor).handlerName(IDLE).build();
        }

        @Override
        boolean saysGoodbyes() {
            return main.goodbye().isPresent();
        }
    }

    /** {@code IdleStateHandler} per channel with a policy handler after it: the A/B baseline. */
    private static final class Netty extends IdleHandling {
        private final DemoCounters counters;
        private final PingRtt rtt;
        private final Probe probe;
        private final ChannelHandler closeOnIdle;
        private final ChannelHandler countEvents;

        Netty(ServerConfig config, DemoCounters counters, PingRtt rtt, Probe probe) {
            super(config);
            this.counters = counters;
            this.rtt = rtt;
            this.probe = probe;
            this.closeOnIdle = new NettyIdlePolicies.CloseOnIdle(counters);
            this.countEvents = new NettyIdlePolicies.CountEvents(counters);
        }

        @Override
        void addTo(ChannelPipeline p, boolean pingsLater) {
            if (!pinging()) {
                p.addLast(IDLE, idleState(config.idleTimeout()));
                p.addLast(IDLE_POLICY, config.policy() == ServerConfig.Policy.EVENT ? countEvents : closeOnIdle);
            } else if (pingsLater) {
                p.addLast(IDLE, idleState(pingCloseWindow()));
                p.addLast(IDLE_POLICY, closeOnIdle);
            } else {
                p.addLast(IDLE, idleState(config.pingInterval()));
                p.addLast(IDLE_POLICY, pingOnIdle());
            }
        }

        @Override
        void startPings(Channel channel) {
            if (pinging() && channel.isActive()) {
                ChannelPipeline p = channel.pipeline();
                p.replace(IDLE, IDLE, idleState(config.pingInterval()));
                p.replace(IDLE_POLICY, IDLE_POLICY, pingOnIdle());
            }
        }

        @Override
        ChannelHandler mqttKeepAlive() {
            return new NettyIdlePolicies.MqttKeepAliveSwitch(IDLE, IDLE_POLICY);
        }

        private static IdleStateHandler idleState(Duration readerIdle) {
            return new IdleStateHandler(false, readerIdle.toNanos(), 0, 0, TimeUnit.NANOSECONDS);
        }

        private ChannelHandler pingOnIdle() {
            return new NettyIdlePolicies.PingOnIdle(counters, config.pingTimeout().toNanos(), config.maxMissedPings(),
                    probe, rtt);
        }
    }

    /** No idle handling at all. */
    private static final class None extends IdleHandling {
        None(ServerConfig config) {
            super(config);
        }

        @Override
        void addTo(ChannelPipeline p, boolean pingsLater) {
        }

        @Override
        void startPings(Channel channel) {
        }

        @Override
        ChannelHandler mqttKeepAlive() {
            return null;
        }
    }
}
