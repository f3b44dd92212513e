/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.Objects;

import io.netty.channel.ChannelHandler;

/**
 * Polices the pings a peer sends (gRPC-java's {@code KeepAliveEnforcer}, for any protocol a
 * {@link Probe} knows): a peer ping that comes sooner than {@link Builder#minInterval} after the
 * previous accepted one is a strike, and the ping after {@link Builder#maxStrikes} strikes closes the
 * channel with {@link CloseReason#PING_ABUSE}, after the protocol's goodbye (HTTP/2: GOAWAY
 * {@code ENHANCE_YOUR_CALM} with the debug data {@code too_many_pings}, as gRPC sends; WebSocket: a
 * Close frame 1008; MQTT and custom probes: none), once the goodbye is written or at most a second
 * later if its write hangs (a flooder that reads nothing), as Heartbeat's own goodbyes wait.
 * Immutable and shareable; each channel gets its own handler from {@link #newHandler}, placed where
 * the protocol's decoded messages pass (after {@code Http2FrameCodec},
 * {@code WebSocketServerProtocolHandler} or {@code MqttDecoder}).
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>setting</th><th>default</th><th>meaning</th></tr>
 * <tr><td>{@code minInterval}</td><td>5 min (gRPC's {@code permitKeepAliveTime})</td><td>the shortest
 *     accepted gap between two peer pings</td></tr>
 * <tr><td>{@code permitWithoutTraffic}</td><td>false (gRPC's {@code permitKeepAliveWithoutCalls})</td>
 *     <td>if false, a ping with no application message read or written since the previous peer ping
 *     must wait {@code minIntervalWithoutTraffic} instead</td></tr>
 * <tr><td>{@code minIntervalWithoutTraffic}</td><td>2 h (gRPC's implicit permit time)</td><td>see
 *     above</td></tr>
 * <tr><td>{@code maxStrikes}</td><td>2 (gRPC's)</td><td>too-early pings forgiven; the next one
 *     closes</td></tr>
 * </table>
 *
 * <p>An application message read or written (anything but the probe's pings and their answers)
 * forgives the strikes (they start again from zero). gRPC forgives them when the server sends
 * headers or data, which it does in answer to a request; this forgives at the request too, so
 * ping, request, ping, request, ping is never closed, whether or not the application answers. A ping exactly
 * {@code minInterval} after the previous accepted one is accepted. The first peer ping is measured
 * from the moment the channel became active, as gRPC measures it from the transport's start.
 *
 * <p>The policing judges with no timer: each peer ping when it arrives, on the event loop, from one
 * clock read; only a close schedules one task, the goodbye's capped wait. Its state is four fields
 * in the policing handler, which only channels that police pings carry.
 */
public final class PingPolicing {

    /** gRPC's default {@code permitKeepAliveTime}. */
    public static final Duration DEFAULT_MIN_INTERVAL = Duration.ofMinutes(5);
    /** gRPC's implicit permit time for pings without calls. */
    public static final Duration DEFAULT_MIN_INTERVAL_WITHOUT_TRAFFIC = Duration.ofHours(2);
    /** gRPC's {@code MAX_PING_STRIKES}. */
    public static final int DEFAULT_MAX_STRIKES = 2;

    final Probe probe;
    final long minIntervalNanos;
    final long minIntervalWithoutTrafficNanos;
    final int maxStrikes;

    private PingPolicing(Builder b) {
        this.probe = b.probe;
        this.minIntervalNanos = b.minInterval.toNanos();
        this.minIntervalWithoutTrafficNanos = b.permitWithoutTraffic ? minIntervalNanos
                : Math.max(minIntervalNanos, b.minIntervalWithoutTraffic.toNanos());
        this.maxStrikes = b.maxStrikes;
    }

    /**
     * Polices the peer pings {@code probe} recognises ({@link dev.heartbeat.netty.probe.Probes#http2()}:
     * PING frames without ACK; {@link dev.heartbeat.netty.probe.Probes#webSocket()}: Ping frames;
     * {@link dev.heartbeat.netty.probe.Probes#mqttClient()}: PINGREQ).
     *
     * @throws IllegalArgumentException if the probe recognises no peer pings (a custom probe)
     */
    public static Builder builder(Probe probe) {
        Objects.requireNonNull(probe, "probe");
        if (!probe.recognisesPeerPings()) {
            throw new IllegalArgumentException(probe + " recognises no peer pings (Probe.isPeerPing), so there is "
                    + "nothing to police: use Probes.http2(), webSocket() or mqttClient(), or override isPeerPing");
        }
        return new Builder(probe);
    }

    /** A handler for one channel (not sharable), counting its closes in {@code monitor}. */
    public ChannelHandler newHandler(HeartbeatMonitor monitor) {
        return new PingPolicingHandler(this, Objects.requireNonNull(monitor, "monitor").engine);
    }

    /** The shortest accepted gap between two peer pings while application messages flow. */
    public Duration minInterval() {
        return Duration.ofNanos(minIntervalNanos);
    }

    /** The shortest accepted gap between two peer pings with no application message in between. */
    public Duration minIntervalWithoutTraffic() {
        return Duration.ofNanos(minIntervalWithoutTrafficNanos);
    }

    /** Too-early pings forgiven; the next one closes. */
    public int maxStrikes() {
        return maxStrikes;
    }

    @Override
    public String toString() {
        return "PingPolicing[probe=" + probe.name() + ", minInterval=" + minInterval() + ", minIntervalWithoutTraffic="
                + minIntervalWithoutTraffic() + ", maxStrikes=" + maxStrikes + "]";
    }

    /** Configures a {@link PingPolicing}; each setter validates its value. */
    public static final class Builder {
        private final Probe probe;
        private Duration minInterval = DEFAULT_MIN_INTERVAL;
        private Duration minIntervalWithoutTraffic = DEFAULT_MIN_INTERVAL_WITHOUT_TRAFFIC;
        private boolean permitWithoutTraffic;
        private int maxStrikes = DEFAULT_MAX_STRIKES;

        private Builder(Probe probe) {
            this.probe = probe;
        }

        /**
         * The shortest accepted gap between two peer pings.
         *
         * @throws IllegalArgumentException if negative or longer than {@link HeartbeatConfig#MAX_TIMEOUT}
         */
        public Builder minInterval(Duration interval) {
            this.minInterval = checkInterval("minInterval", interval);
            return this;
        }

        /**
         * The shortest accepted gap between two peer pings with no application message in between
         * (used unless {@link #permitWithoutTraffic}); raised to {@link #minInterval} if shorter.
         *
         * @throws IllegalArgumentException if negative or longer than {@link HeartbeatConfig#MAX_TIMEOUT}
         */
        public Builder minIntervalWithoutTraffic(Duration interval) {
            this.minIntervalWithoutTraffic = checkInterval("minIntervalWithoutTraffic", interval);
            return this;
        }

        /** Whether pings without application traffic are held to {@link #minInterval} only. */
        public Builder permitWithoutTraffic(boolean permit) {
            this.permitWithoutTraffic = permit;
            return this;
        }

        /**
         * Too-early pings forgiven before the next one closes the channel.
         *
         * @throws IllegalArgumentException if negative
         */
        public Builder maxStrikes(int strikes) {
            if (strikes < 0) {
                throw new IllegalArgumentException("maxStrikes cannot be negative: " + strikes);
            }
            this.maxStrikes = strikes;
            return this;
        }

        public PingPolicing build() {
            return new PingPolicing(this);
        }

        private static Duration checkInterval(String name, Duration interval) {
            Objects.requireNonNull(interval, name);
            if (interval.isNegative()) {
                throw new IllegalArgumentException(name + " cannot be negative: " + interval);
            }
            if (interval.compareTo(HeartbeatConfig.MAX_TIMEOUT) > 0) {
                throw new IllegalArgumentException(name + " cannot exceed " + HeartbeatConfig.MAX_TIMEOUT + ": "
                        + interval);
            }
            return interval;
        }
    }
}
