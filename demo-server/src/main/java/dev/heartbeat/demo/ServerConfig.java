/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.MqttKeepAlive;
import dev.heartbeat.netty.PingPolicing;

// Over 500 lines (listed in checkstyle.xml): the demo server's settings, their builder and the rules of the demo's own
// (ports, protocols, which impl has what); the library's rules are the library's to check (LibraryChecks).
/**
 * The demo server's settings: immutable, validated by {@link Builder#build()}. The command line
 * ({@link DemoCommand}) builds one; tests build one directly, with port 0 for OS-chosen ports.
 */
public final class ServerConfig {

    /** Who watches idleness. */
    public enum IdleImpl {
        /** Heartbeat: one shared timing wheel and worker thread. */
        HEARTBEAT,
        /** Netty's IdleStateHandler plus a small policy handler: the baseline for A/B runs. */
        NETTY,
        /** No idle handling at all. */
        NONE;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Where Heartbeat's worker runs its cycles. */
    public enum WorkerHost {
        /** On one of the server's event loops; the worker's own thread only watches it. */
        LOOP,
        /** On the worker's own thread. */
        THREAD;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What happens to idle connections. */
    public enum Policy {
        /** Close a connection that sent nothing for the idle timeout. */
        CLOSE,
        /** Send PING to silent clients; close after too many unanswered pings. */
        PING,
        /** Only count reader-idle events. */
        EVENT;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The protocol served on the echo port (the flag is {@code --probe}: it also picks the probe
     * Heartbeat pings silent clients with).
     */
    public enum Protocol {
        /** Newline-delimited lines; pinged with a {@code PING} line, any input answers. */
        LINE(AckMode.ANY_INBOUND),
        /** WebSocket at {@code /ws}, frames echoed; pinged with Ping frames whose Pong must match. */
        WEBSOCKET(AckMode.MATCHED_ONLY),
        /** HTTP/2 cleartext with prior knowledge, each stream's DATA echoed; pinged with PING frames. */
        HTTP2(AckMode.MATCHED_ONLY),
        /** A minimal MQTT 3.1.1 broker; never pings: the client's Keep Alive rules idleness. */
        MQTT(null);

        private final AckMode defaultAckMode;

        Protocol(AckMode defaultAckMode) {
            this.defaultAckMode = defaultAckMode;
        }

        /** Whether the server pings on this protocol (MQTT servers may not). */
        public boolean pings() {
            return defaultAckMode != null;
        }

        /** Whether its pings carry a token the answer must echo, so that a matched ack mode can work. */
        public boolean matchesAnswers() {
            return defaultAckMode != null && defaultAckMode.needsMatching();
        }

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The Netty transport. */
    public enum Transport {
        /** epoll when available, else NIO. */
        AUTO,
        /** Java NIO. */
        NIO,
        /** Linux native epoll. */
        EPOLL;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * How the server polices its peers' own pings ({@code --police-pings}: Heartbeat's
     * {@link PingPolicing}, gRPC's rule): a peer ping sooner than {@code minInterval} after the last
     * accepted one is a strike (sooner than 2 h when no application message went either way since,
     * unless {@code permitWithoutTraffic}), and the ping after {@code maxStrikes} strikes closes the
     * connection, told {@code PING_ABUSE}.
     *
     * @param minInterval the shortest accepted gap between two peer pings ({@code --peer-ping-min-interval})
     * @param permitWithoutTraffic whether pings with no application message since the last one are held to
     *     {@code minInterval} only ({@code --permit-pings-without-traffic})
     * @param maxStrikes too-early pings forgiven; the next one closes ({@code --peer-ping-max-strikes})
     */
    public record PeerPingRules(Duration minInterval, boolean permitWithoutTraffic, int maxStrikes) {

        /** gRPC's rules, as {@link PingPolicing}'s defaults: 5 min, no pings without traffic (2 h), 2 strikes. */
        public static final PeerPingRules DEFAULT = new PeerPingRules(PingPolicing.DEFAULT_MIN_INTERVAL, false,
                PingPolicing.DEFAULT_MAX_STRIKES);

        public PeerPingRules {
            Objects.requireNonNull(minInterval, "minInterval");
        }

        /** The rules as the startup line shows them, e.g. "police-pings: min-interval=5m, max-strikes=2". */
        String summary() {
            return "police-pings: min-interval=" + DurationConverter.format(minInterval) + ", max-strikes="
                    + maxStrikes + (permitWithoutTraffic ? ", permit-without-traffic" : "");
        }
    }

    /** The path of the WebSocket ({@code --probe websocket}). */
    public static final String WEBSOCKET_PATH = "/ws";
    /** Default TCP port of the echo server: below Linux's ephemeral range (32768-60999). */
    public static final int DEFAULT_PORT = 7000;
    /** Default port of the HTTP metrics endpoint. */
    public static final int DEFAULT_METRICS_PORT = 9100;
    /** Default longest line, in bytes, without its line ending. */
    public static final int DEFAULT_MAX_LINE = 8 * 1024;
    /** Default reader idle timeout of the close and event policies. */
    public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(30);
    /** Default ping interval of the ping policy. */
    public static final Duration DEFAULT_PING_INTERVAL = Duration.ofSeconds(30);
    /** Default number of unanswered pings before a close. */
    public static final int DEFAULT_MAX_MISSED_PINGS = 3;

    private static final Duration MIN_TIMEOUT = Duration.ofMillis(1);
    /** MQTT's keep-alive rule: a client silent this many times its Keep Alive is closed. */
    static final double MQTT_MULTIPLIER = MqttKeepAlive.DEFAULT_MULTIPLIER;

    private final String host;
    private final int port;
    private final IdleImpl idleImpl;
    private final Policy policy;
    private final Duration idleTimeout;
    private final Duration pingInterval;
    private final Duration pingTimeout;
    private final int maxMissedPings;
    private final int maxLine;
    private final Transport transport;
    private final boolean metricsEnabled;
    private final int metricsPort;
    private final int workerThreads;
    private final Duration tick;
    private final Duration loopLag; // null: not measured
    private final WorkerHost workerHost;
    private final boolean lazyHandOffs;
    private final Protocol protocol;
    private final AckMode ackMode; // null: the protocol's default
    private final PeerPingRules peerPingRules; // null: peers' pings are not policed
    private final Lifecycle lifecycle;

    private ServerConfig(Builder b) {
        this.host = b.host;
        this.port = b.port;
        this.idleImpl = b.idleImpl;
        this.policy = b.policy;
        this.idleTimeout = b.idleTimeout;
        this.pingInterval = b.pingInterval;
        this.pingTimeout = b.pingTimeout == null ? b.pingInterval : b.pingTimeout;
        this.maxMissedPings = b.maxMissedPings;
        this.maxLine = b.maxLine;
        this.transport = b.transport;
        this.metricsEnabled = b.metricsEnabled;
        this.metricsPort = b.metricsPort;
        this.workerThreads = b.workerThreads;
        this.tick = b.tick;
        this.loopLag = b.loopLag;
        this.workerHost = b.workerHost;
        this.lazyHandOffs = b.lazyHandOffs;
        this.protocol = b.protocol;
        this.ackMode = b.ackMode;
        this.peerPingRules = b.peerPingRules;
        this.lifecycle = b.lifecycle;
    }

    /**
     * Heartbeat's connection lifecycle settings ({@code --max-age} and the rest): zero durations and a
     * zero budget are off.
     *
     * @param maxAge {@code --max-age}
     * @param maxAgeJitter {@code --max-age-jitter}, in [0, 1)
     * @param jitterMode {@code --max-age-jitter-mode}
     * @param maxAgeGrace {@code --max-age-grace}
     * @param writeStall {@code --write-stall}
     * @param maxUnwritable {@code --max-unwritable}
     * @param actionBudget {@code --action-budget}, actions a second
     */
    public record Lifecycle(Duration maxAge, double maxAgeJitter, dev.heartbeat.netty.JitterMode jitterMode,
            Duration maxAgeGrace, Duration writeStall, Duration maxUnwritable, int actionBudget) {
        /** Everything off. */
        public static final Lifecycle NONE = new Lifecycle(Duration.ZERO, 0, dev.heartbeat.netty.JitterMode.SYMMETRIC,
                Duration.ZERO, Duration.ZERO, Duration.ZERO, 0);

        /** Whether any setting is on. */
        public boolean any() {
            return !maxAge.isZero() || !writeStall.isZero() || !maxUnwritable.isZero() || actionBudget > 0;
        }

        /** The flags that are on, as the startup line shows them; empty if none. */
        String summary() {
            StringBuilder s = new StringBuilder();
            if (!maxAge.isZero()) {
                s.append(", max-age=").append(DurationConverter.format(maxAge));
                if (maxAgeJitter > 0) {
                    s.append(" jitter ").append(maxAgeJitter).append(' ')
                            .append(jitterMode.name().toLowerCase(Locale.ROOT));
                }
                if (!maxAgeGrace.isZero()) {
                    s.append(" grace ").append(DurationConverter.format(maxAgeGrace));
                }
            }
            if (!writeStall.isZero()) {
                s.append(", write-stall=").append(DurationConverter.format(writeStall));
            }
            if (!maxUnwritable.isZero()) {
                s.append(", max-unwritable=").append(DurationConverter.format(maxUnwritable));
            }
            if (actionBudget > 0) {
                s.append(", action-budget=").append(actionBudget).append("/s");
            }
            return s.toString();
        }

        /** Applies the guards to a Heartbeat configuration builder. */
        dev.heartbeat.netty.HeartbeatConfig.Builder applyTo(dev.heartbeat.netty.HeartbeatConfig.Builder b) {
            if (!maxAge.isZero()) {
                b.maxAge(maxAge).maxAgeJitter(maxAgeJitter, jitterMode).maxAgeGrace(maxAgeGrace);
            }
            if (!writeStall.isZero()) {
                b.writeStall(writeStall);
            }
            if (!maxUnwritable.isZero()) {
                b.maxUnwritable(maxUnwritable);
            }
            return b;
        }
    }

    /** Heartbeat's connection lifecycle settings; {@link Lifecycle#NONE} unless set. */
    public Lifecycle lifecycle() {
        return lifecycle;
    }

    /** A builder with every default. */
    public static Builder builder() {
        return new Builder();
    }

    public String host() {
        return host;
    }

    /** The echo port; 0 means OS-chosen (see {@link DemoServer#port()}). */
    public int port() {
        return port;
    }

    public IdleImpl idleImpl() {
        return idleImpl;
    }

    public Policy policy() {
        return policy;
    }

    /** Reader idle timeout of the close and event policies. */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    public Duration pingInterval() {
        return pingInterval;
    }

    /** How long each ping waits for an answer; the interval unless set. */
    public Duration pingTimeout() {
        return pingTimeout;
    }

    public int maxMissedPings() {
        return maxMissedPings;
    }

    /** Longest line in bytes, line ending excluded. */
    public int maxLine() {
        return maxLine;
    }

    public Transport transport() {
        return transport;
    }

    /** Whether the HTTP endpoint runs. */
    public boolean metricsEnabled() {
        return metricsEnabled;
    }

    /** The HTTP port when enabled; 0 means OS-chosen (see {@link DemoServer#metricsPort()}). */
    public int metricsPort() {
        return metricsPort;
    }

    /** Event loop threads for connections. */
    public int workerThreads() {
        return workerThreads;
    }

    /** Where Heartbeat's worker runs its cycles. */
    public WorkerHost workerHost() {
        return workerHost;
    }

    /** Whether Heartbeat hands pings to the event loops without waking them ({@code --hand-offs lazy}). */
    public boolean lazyHandOffs() {
        return lazyHandOffs;
    }

    /** The protocol served on the echo port ({@code --probe}). */
    public Protocol protocol() {
        return protocol;
    }

    /**
     * What settles Heartbeat's pings: the one set, else the protocol's default ({@code MATCHED_ONLY}
     * for WebSocket and HTTP/2, {@code ANY_INBOUND} for lines); {@code ANY_INBOUND} for MQTT, which
     * has no server pings.
     */
    public AckMode ackMode() {
        return ackMode != null ? ackMode : protocol.pings() ? protocol.defaultAckMode : AckMode.ANY_INBOUND;
    }

    /** The Heartbeat wheel tick, or null for the library's default. */
    public Duration tick() {
        return tick;
    }

    /** The period of the event loops' lag probes ({@code --loop-lag}, see {@link LoopLag}), or null for none. */
    public Duration loopLag() {
        return loopLag;
    }

    /** How the peers' pings are policed, or null if they are not ({@code --police-pings}). */
    public PeerPingRules peerPingRules() {
        return peerPingRules;
    }

    /** Whether the server polices its peers' pings ({@code --police-pings}). */
    public boolean policesPings() {
        return peerPingRules != null;
    }

    /**
     * The idle settings as the startup line shows them, e.g. "policy=close, idle-timeout=30s", and the
     * ping policing if any.
     */
    String idleSummary() {
        String idle = idleOnlySummary() + lifecycle.summary();
        return peerPingRules == null ? idle : idle + ", " + peerPingRules.summary();
    }

    private String idleOnlySummary() {
        String probe = protocol == Protocol.LINE ? "" : "probe=" + protocol + ", ";
        if (idleImpl == IdleImpl.NONE) {
            return probe + "policy=none";
        }
        if (protocol == Protocol.MQTT) {
            return probe + "keep-alive x " + MQTT_MULTIPLIER + ", before CONNECT: idle-timeout="
                    + DurationConverter.format(idleTimeout);
        }
        if (policy == Policy.PING) {
            return probe + "policy=ping, ping-interval=" + DurationConverter.format(pingInterval)
                    + ", ping-timeout=" + DurationConverter.format(pingTimeout)
                    + ", max-missed-pings=" + maxMissedPings
                    + (idleImpl == IdleImpl.HEARTBEAT && protocol.matchesAnswers() ? ", ack-mode=" + ackModeName()
                            : "");
        }
        return probe + "policy=" + policy + ", idle-timeout=" + DurationConverter.format(idleTimeout);
    }

    private String ackModeName() {
        return ackMode().name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String toString() {
        return "ServerConfig[" + host + ":" + port + ", transport=" + transport + ", idle-impl=" + idleImpl + ", "
                + idleSummary() + ", max-line=" + maxLine + ", metrics=" + (metricsEnabled ? metricsPort : "off")
                + ", worker-threads=" + workerThreads + ", tick=" + (tick == null ? "default" : tick) + ", worker-host="
                + workerHost + ", hand-offs=" + (lazyHandOffs ? "lazy" : "eager") + ", probe=" + protocol
                + ", ack-mode=" + ackModeName() + "]";
    }

    /** Builds a {@link ServerConfig}; every setting has a default. */
    public static final class Builder {
        private String host = "127.0.0.1";
        private int port = DEFAULT_PORT;
        private IdleImpl idleImpl = IdleImpl.HEARTBEAT;
        private Policy policy = Policy.CLOSE;
        private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
        private Duration pingInterval = DEFAULT_PING_INTERVAL;
        private Duration pingTimeout;
        private int maxMissedPings = DEFAULT_MAX_MISSED_PINGS;
        private int maxLine = DEFAULT_MAX_LINE;
        private Transport transport = Transport.AUTO;
        private boolean metricsEnabled = true;
        private int metricsPort = DEFAULT_METRICS_PORT;
        private int workerThreads = Runtime.getRuntime().availableProcessors();
        private Duration tick;
        private Duration loopLag;
        private WorkerHost workerHost = WorkerHost.LOOP;
        private boolean lazyHandOffs;
        private Protocol protocol = Protocol.LINE;
        private AckMode ackMode;
        private PeerPingRules peerPingRules;
        private Lifecycle lifecycle = Lifecycle.NONE;

        private Builder() {
        }

        public Builder host(String host) {
            this.host = Objects.requireNonNull(host, "host");
            return this;
        }

        /** 0 lets the OS choose. */
        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder idleImpl(IdleImpl idleImpl) {
            this.idleImpl = Objects.requireNonNull(idleImpl, "idleImpl");
            return this;
        }

        public Builder policy(Policy policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        public Builder idleTimeout(Duration idleTimeout) {
            this.idleTimeout = Objects.requireNonNull(idleTimeout, "idleTimeout");
            return this;
        }

        public Builder pingInterval(Duration pingInterval) {
            this.pingInterval = Objects.requireNonNull(pingInterval, "pingInterval");
            return this;
        }

        /** Null: the same as the interval. */
        public Builder pingTimeout(Duration pingTimeout) {
            this.pingTimeout = pingTimeout;
            return this;
        }

        public Builder maxMissedPings(int maxMissedPings) {
            this.maxMissedPings = maxMissedPings;
            return this;
        }

        public Builder maxLine(int maxLine) {
            this.maxLine = maxLine;
            return this;
        }

        public Builder transport(Transport transport) {
            this.transport = Objects.requireNonNull(transport, "transport");
            return this;
        }

        /** Serve HTTP on this port (0: OS-chosen). */
        public Builder metricsPort(int metricsPort) {
            this.metricsEnabled = true;
            this.metricsPort = metricsPort;
            return this;
        }

        /** No HTTP endpoint. */
        public Builder metricsDisabled() {
            this.metricsEnabled = false;
            this.metricsPort = 0;
            return this;
        }

        public Builder workerThreads(int workerThreads) {
            this.workerThreads = workerThreads;
            return this;
        }

        public Builder workerHost(WorkerHost workerHost) {
            this.workerHost = Objects.requireNonNull(workerHost, "workerHost");
            return this;
        }

        /** See {@code HeartbeatMonitor.Builder#lazyHandOffs}; false by default, as there. */
        public Builder lazyHandOffs(boolean lazy) {
            this.lazyHandOffs = lazy;
            return this;
        }

        /** Null: the library's default. */
        public Builder tick(Duration tick) {
            this.tick = tick;
            return this;
        }

        /** The period of the event loops' lag probes ({@link LoopLag}); null (the default): none. */
        public Builder loopLag(Duration period) {
            this.loopLag = period;
            return this;
        }

        /** The protocol on the echo port ({@code --probe}). */
        public Builder protocol(Protocol protocol) {
            this.protocol = Objects.requireNonNull(protocol, "protocol");
            return this;
        }

        /** Null: the protocol's default (see {@link ServerConfig#ackMode()}). */
        public Builder ackMode(AckMode ackMode) {
            this.ackMode = ackMode;
            return this;
        }

        /** Police the peers' pings by these rules; null: do not ({@code --police-pings}). */
        public Builder policePings(PeerPingRules rules) {
            this.peerPingRules = rules;
            return this;
        }

        /** Heartbeat's connection lifecycle settings ({@code --max-age} and the rest). */
        public Builder lifecycle(Lifecycle lifecycle) {
            this.lifecycle = Objects.requireNonNull(lifecycle, "lifecycle");
            return this;
        }

        /**
         * The configuration.
         *
         * @throws IllegalArgumentException naming the bad setting and its value
         */
        public ServerConfig build() {
            requirePort("--port", port);
            if (metricsEnabled) {
                requirePort("--metrics-port", metricsPort);
            }
            requireTimeout("--idle-timeout", idleTimeout); // the demo's: also the deadline for an MQTT CONNECT
            if (maxLine < 1) {
                throw new IllegalArgumentException("--max-line must be at least 1 byte: " + maxLine);
            }
            if (workerThreads < 1) {
                throw new IllegalArgumentException("--worker-threads must be at least 1: " + workerThreads);
            }
            if (loopLag != null && (loopLag.isZero() || loopLag.isNegative())) {
                throw new IllegalArgumentException("--loop-lag must be a positive duration: "
                        + DurationConverter.format(loopLag));
            }
            requireProtocolFits();
            requireLifecycle();
            if (peerPingRules != null) {
                // the demo's rule: the library takes 0, which would accept every ping and police nothing
                requireTimeout("--peer-ping-min-interval", peerPingRules.minInterval());
            }
            LibraryChecks.require(this);
            return new ServerConfig(this);
        }

        /**
         * The lifecycle settings only with Heartbeat, which has them; their values are the library's to judge
         * ({@link LibraryChecks}).
         */
        private void requireLifecycle() {
            if (lifecycle.any() && idleImpl != IdleImpl.HEARTBEAT) {
                throw new IllegalArgumentException("--max-age, --write-stall, --max-unwritable and --action-budget "
                        + "are Heartbeat's: give --idle-impl heartbeat, not "
                        + idleImpl.name().toLowerCase(Locale.ROOT));
            }
        }

        IdleImpl idleImpl() {
            return idleImpl;
        }

        Policy policy() {
            return policy;
        }

        Protocol protocol() {
            return protocol;
        }

        Duration idleTimeout() {
            return idleTimeout;
        }

        Duration pingInterval() {
            return pingInterval;
        }

        Duration pingTimeout() {
            return pingTimeout;
        }

        int maxMissedPings() {
            return maxMissedPings;
        }

        AckMode ackMode() {
            return ackMode;
        }

        Duration tick() {
            return tick;
        }

        PeerPingRules peerPingRules() {
            return peerPingRules;
        }

        Lifecycle lifecycle() {
            return lifecycle;
        }

        /** The protocol against the idle settings: combinations that cannot mean anything are refused. */
        private void requireProtocolFits() {
            if (protocol == Protocol.MQTT && idleImpl != IdleImpl.NONE && policy != Policy.CLOSE) {
                throw new IllegalArgumentException("--probe mqtt serves MQTT, whose servers never ping: a client "
                        + "silent for " + MQTT_MULTIPLIER + " x the Keep Alive of its CONNECT is closed (and one that "
                        + "sends no CONNECT after --idle-timeout); give --policy close, not --policy " + policy);
            }
            if (ackMode == null) {
                return;
            }
            String mode = "--ack-mode " + ackMode.name().toLowerCase(Locale.ROOT);
            if (policy != Policy.PING || idleImpl == IdleImpl.NONE || !protocol.pings()) {
                throw new IllegalArgumentException(mode + " says what answers a ping: it needs --policy ping with "
                        + "--probe line, websocket or http2, not --policy " + policy + ", --idle-impl " + idleImpl
                        + ", --probe " + protocol);
            }
            if (ackMode.needsMatching() && !protocol.matchesAnswers()) {
                throw new IllegalArgumentException(mode + " needs pings whose answers carry their token (--probe "
                        + "websocket or http2); --probe " + protocol + " pings are answered by any input");
            }
            if (ackMode.needsMatching() && idleImpl == IdleImpl.NETTY) {
                throw new IllegalArgumentException(mode + " is Heartbeat's: with --idle-impl netty any input "
                        + "answers a ping (IdleStateHandler and a small handler); give --idle-impl heartbeat");
            }
        }

        private static void requirePort(String name, int port) {
            if (port < 0 || port > 65_535) {
                throw new IllegalArgumentException(name + " must be in 0-65535: " + port);
            }
        }

        private static void requireTimeout(String name, Duration d) {
            if (d.compareTo(MIN_TIMEOUT) < 0) {
                throw new IllegalArgumentException(name + " must be at least 1ms: " + DurationConverter.format(d));
            }
        }
    }
}
