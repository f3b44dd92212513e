/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.time.Duration;

import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.PingPolicing;
import dev.heartbeat.netty.probe.Probes;

/**
 * The settings the library judges, judged by the library: {@link Scenario.Builder#build()} builds the
 * library's own objects from a scenario's flag values ({@link HeartbeatConfig}'s builder, {@link
 * HeartbeatMonitor}'s, {@link PingPolicing}'s), as the servers will, and reports the library's {@code
 * IllegalArgumentException} or {@code IllegalStateException} under the flag that gave the value, e.g.
 * {@code --max-age-jitter: maxAgeJitter must be in [0, 1): 1.5}, rather than restating its rules and
 * constants. The load test's own rules (connection counts, the mix, the run window) stay in {@link Scenario}.
 * The same approach as the demo server's, for the load test's flags. Stateless.
 */
final class LibraryChecks {

    private LibraryChecks() {
    }

    /** A setting of a library builder. */
    interface Setting {
        void apply();
    }

    /**
     * Builds the library's objects from {@code s}'s settings: the idle handling of its policy and protocol,
     * Heartbeat's lifecycle guards (max age, write stall), the monitor's tick and action budget, and the
     * policing of peer pings when the mix has flooders.
     *
     * @throws IllegalArgumentException the library's message, after the flag it concerns
     */
    static void require(Scenario s) {
        HeartbeatConfig.Builder c = idle(s);
        // the policy alone: a guard below would let an idle policy without a timeout build
        build(c, s);
        if (s.agesConnections()) {
            as("--max-age", () -> c.maxAge(Duration.ofNanos(s.maxAgeNanos)));
            as("--max-age-jitter", () -> c.maxAgeJitter(s.maxAgeJitter, s.maxAgeJitterMode));
            as("--max-age-grace", () -> c.maxAgeGrace(Duration.ofNanos(s.maxAgeGraceNanos)));
        }
        if (s.givenWriteStallNanos != 0) {
            as("--write-stall", () -> c.writeStall(Duration.ofNanos(s.givenWriteStallNanos)));
        } else if (s.guardsWriteStalls()) {
            as("--write-stall (not given: a quarter of " + quietLimitFlag(s) + " " + Scenario.format(
                    s.quietLimitNanos()) + ")", () -> c.writeStall(Duration.ofNanos(s.writeStallNanos())));
        }
        build(c, s);
        HeartbeatMonitor.Builder monitor = HeartbeatMonitor.builder();
        if (s.tickNanos != 0) {
            as("--tick", () -> monitor.tick(Duration.ofNanos(s.tickNanos)));
        }
        as("--action-budget", () -> monitor.actionBudget(s.actionBudget));
        if (s.policesPings()) {
            // a stand-in probe that recognises peer pings: the rules do not depend on the protocol
            PingPolicing.Builder policing = PingPolicing.builder(Probes.http2());
            String flag = "--mix " + Role.FLOODER + "=" + s.mix.percent(Role.FLOODER) + " (a sixth of "
                    + quietLimitFlag(s) + " " + Scenario.format(s.quietLimitNanos()) + " between peer pings)";
            as(flag, () -> policing.minInterval(Duration.ofNanos(s.peerPingMinIntervalNanos())));
            as(flag, () -> policing.maxStrikes(Scenario.PEER_PING_MAX_STRIKES));
        }
    }

    /**
     * The idle handling the servers are given: MQTT's keep-alive rule as a reader-idle close after the close
     * window, else the close policy's reader idle timeout, or the ping policy's pings (with a stand-in probe:
     * the rules of their settings do not depend on the protocol).
     */
    private static HeartbeatConfig.Builder idle(Scenario s) {
        if (s.protocol == ServerConfig.Protocol.MQTT) {
            HeartbeatConfig.Builder mqtt = HeartbeatConfig.closeWhenIdle();
            as("--ping-interval", () -> mqtt.readerIdle(Duration.ofNanos(s.serverIdleTimeoutNanos())));
            return mqtt;
        }
        if (s.policy == Scenario.Policy.CLOSE) {
            HeartbeatConfig.Builder close = HeartbeatConfig.closeWhenIdle();
            as("--idle-timeout", () -> close.readerIdle(Duration.ofNanos(s.idleTimeoutNanos)));
            return close;
        }
        HeartbeatConfig.Builder ping = HeartbeatConfig.ping(Probes.http2());
        as("--ping-interval", () -> ping.interval(Duration.ofNanos(s.pingIntervalNanos)));
        as("--ping-timeout", () -> ping.timeout(Duration.ofNanos(s.pingTimeoutNanos)));
        as("--max-missed-pings", () -> ping.maxMissedPings(s.maxMissedPings));
        return ping;
    }

    /**
     * Builds the configuration; the library's refusal (settings that only fail together, such as an idle
     * policy without a timeout) is reported after the flag of the policy's timeout and its value, which the
     * library's message may not show.
     */
    private static void build(HeartbeatConfig.Builder c, Scenario s) {
        String flag = s.protocol != ServerConfig.Protocol.MQTT && s.policy == Scenario.Policy.CLOSE
                ? "--idle-timeout " + Scenario.format(s.idleTimeoutNanos)
                : "--ping-interval " + Scenario.format(s.pingIntervalNanos);
        as(flag, c::build);
    }

    /** The flag of the quiet limit the derived settings are a share of. */
    private static String quietLimitFlag(Scenario s) {
        return s.policy == Scenario.Policy.CLOSE ? "--idle-timeout" : "--ping-interval";
    }

    /**
     * Applies a setting; the library's refusal of it is reported after {@code flag}: "{@code flag}: the
     * library's message".
     *
     * @throws IllegalArgumentException if the library refuses the setting
     */
    static void as(String flag, Setting setting) {
        try {
            setting.apply();
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new IllegalArgumentException(flag + ": " + e.getMessage(), e);
        }
    }
}
