/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.PingPolicing;
import dev.heartbeat.netty.Probe;
import dev.heartbeat.netty.probe.Probes;

/**
 * The settings the library judges, judged by the library: {@link ServerConfig.Builder#build()} builds the
 * library's own objects from them ({@link HeartbeatConfig}'s builder, {@link HeartbeatMonitor}'s,
 * {@link PingPolicing}'s) and reports the library's {@code IllegalArgumentException} or
 * {@code IllegalStateException} under the flag that gave the value, e.g. {@code --max-age-jitter:
 * maxAgeJitter must be in [0, 1): 1.5}, rather than restating its rules and constants. Stateless.
 */
final class LibraryChecks {

    /** The library's names of the settings, longest first where one starts another, and their flags. */
    private static final String[][] FLAGS = {
        {"maxAgeJitter", "--max-age-jitter"}, {"maxAgeGrace", "--max-age-grace"}, {"maxAge", "--max-age"},
        {"writeStall", "--write-stall"}, {"maxUnwritable", "--max-unwritable"}, {"interval", "--ping-interval"},
        {"maxMissedPings", "--max-missed-pings"}, {"timeout", "--ping-timeout"}, {"readerIdle", "--idle-timeout"},
        {"ackMode", "--ack-mode"}, {"actionBudget", "--action-budget"}, {"tick", "--tick"},
        {"minInterval", "--peer-ping-min-interval"}, {"maxStrikes", "--peer-ping-max-strikes"}};

    private LibraryChecks() {
    }

    /** A setting of a library builder. */
    private interface Setting {
        void apply();
    }

    /**
     * Builds the library's objects from {@code b}'s settings.
     *
     * @throws IllegalArgumentException the library's message, after the flag it concerns
     */
    static void require(ServerConfig.Builder b) {
        if (b.idleImpl() != ServerConfig.IdleImpl.NONE) {
            requireIdle(b);
        }
        if (b.idleImpl() == ServerConfig.IdleImpl.HEARTBEAT) {
            HeartbeatMonitor.Builder monitor = HeartbeatMonitor.builder();
            if (b.tick() != null) {
                as("--tick", () -> monitor.tick(b.tick()));
            }
            as("--action-budget", () -> monitor.actionBudget(b.lifecycle().actionBudget()));
        }
        ServerConfig.PeerPingRules rules = b.peerPingRules();
        if (rules != null) {
            PingPolicing.Builder policing = PingPolicing.builder(Probes.http2());
            as("--peer-ping-min-interval", () -> policing.minInterval(rules.minInterval()));
            as("--peer-ping-max-strikes", () -> policing.maxStrikes(rules.maxStrikes()));
        }
    }

    /** The idle policy and (Heartbeat) its lifecycle guards, as {@code IdleHandling} will build them. */
    private static void requireIdle(ServerConfig.Builder b) {
        HeartbeatConfig.Builder c;
        if (b.policy() == ServerConfig.Policy.PING && b.protocol().pings()) {
            HeartbeatConfig.Builder ping = HeartbeatConfig.ping(probe(b.protocol()));
            as("--ping-interval", () -> ping.interval(b.pingInterval()));
            if (b.pingTimeout() != null) {
                as("--ping-timeout", () -> ping.timeout(b.pingTimeout()));
            }
            as("--max-missed-pings", () -> ping.maxMissedPings(b.maxMissedPings()));
            c = ping;
        } else {
            HeartbeatConfig.Builder idle = b.policy() == ServerConfig.Policy.EVENT ? HeartbeatConfig.events()
                    : HeartbeatConfig.closeWhenIdle();
            as("--idle-timeout", () -> idle.readerIdle(b.idleTimeout()));
            c = idle;
        }
        if (b.idleImpl() == ServerConfig.IdleImpl.HEARTBEAT) {
            ServerConfig.Lifecycle l = b.lifecycle();
            as("--max-age", () -> c.maxAge(l.maxAge()));
            as("--max-age-jitter", () -> c.maxAgeJitter(l.maxAgeJitter(), l.jitterMode()));
            as("--max-age-grace", () -> c.maxAgeGrace(l.maxAgeGrace()));
            as("--write-stall", () -> c.writeStall(l.writeStall()));
            as("--max-unwritable", () -> c.maxUnwritable(l.maxUnwritable()));
        }
        try {
            c.build();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException(flagOf(e.getMessage()) + ": " + e.getMessage(), e);
        }
    }

    /** The probe the demo server pings with on {@code protocol}. */
    private static Probe probe(ServerConfig.Protocol protocol) {
        switch (protocol) {
            case WEBSOCKET:
                return Probes.webSocket();
            case HTTP2:
                return Probes.http2();
            default:
                return LineProbe.INSTANCE;
        }
    }

    /** Applies a setting; the library's refusal of it is reported after {@code flag}. */
    static void as(String flag, Setting setting) {
        try {
            setting.apply();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage(), e);
        }
    }

    /** The flag of the first setting a library message names, or "settings" if it names none. */
    static String flagOf(String message) {
        int first = Integer.MAX_VALUE;
        String flag = "settings";
        for (String[] f : FLAGS) {
            int at = message.indexOf(f[0]);
            if (at >= 0 && at < first) {
                first = at;
                flag = f[1];
            }
        }
        return flag;
    }
}
