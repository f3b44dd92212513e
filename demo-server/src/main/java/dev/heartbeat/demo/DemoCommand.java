/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.JitterMode;
import dev.heartbeat.netty.PingPolicing;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The command line of the demo server (picocli). */
@Command(name = "demo-server",
        mixinStandardHelpOptions = true,
        version = "demo-server 0.1.0-SNAPSHOT",
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "A Netty echo server, for trying Heartbeat (one shared timing wheel for idle connections) against "
                    + "Netty's IdleStateHandler, over one of four protocols (--probe).",
            "",
            "line: every line is echoed back; a line PING is answered PONG. In ping mode the server itself sends "
                    + "PING to silent clients, and any line counts as the answer. A line longer than --max-line "
                    + "closes the connection.",
            "websocket: an HTTP upgrade at /ws, then text and binary frames echoed; pings are Ping frames, answered "
                    + "by the Pong with the same data (--ack-mode).",
            "http2: HTTP/2 over cleartext with prior knowledge; each stream's DATA is echoed on that stream; pings are "
                    + "PING frames, answered by the PING ACK with the same data (--ack-mode).",
            "mqtt: a minimal MQTT 3.1.1 broker: CONNECT -> CONNACK, PINGREQ -> PINGRESP, PUBLISH (QoS 0) echoed to its "
                    + "sender, DISCONNECT closes. The server never pings: a client silent for 1.5 x the Keep Alive of "
                    + "its CONNECT is closed (needs --policy close; --idle-timeout is the deadline for CONNECT).",
            "",
            "Before every close for idleness the server says why, with the protocol's goodbye: the line 'BYE "
                    + "<REASON>', a WebSocket Close frame 1001 with the reason as its text, an HTTP/2 GOAWAY with the "
                    + "reason as debug data (MQTT 3.1.1 has no server goodbye). REASON is READER_IDLE or PING_TIMEOUT.",
            "",
            "With --police-pings the server also polices its clients' own pings (gRPC's rule, Heartbeat's "
                    + "PingPolicing): a PING line, a WebSocket Ping, an HTTP/2 PING or an MQTT PINGREQ sooner than "
                    + "--peer-ping-min-interval after the last accepted one is a strike, and the ping after "
                    + "--peer-ping-max-strikes strikes closes the connection after the goodbye for PING_ABUSE: the "
                    + "line 'BYE PING_ABUSE', a Close frame 1008 or an HTTP/2 GOAWAY ENHANCE_YOUR_CALM, both with the "
                    + "words 'too_many_pings' (MQTT: none). A message of the application's, read or written, forgives "
                    + "the strikes. Under every --idle-impl; counted as reason ping_abuse.",
            "",
            "HTTP on --metrics-port: GET /metrics (Prometheus text), GET /healthz, POST /debug/gc (runs "
                    + "System.gc() twice, returns {\"heap_used_bytes\": N, \"connections\": M}).",
            "",
            "Durations are a number and a unit: 500ms, 30s, 2m, 1.5s (units ns, us, ms, s, m, h, d).",
            ""},
        footer = {"", "On start, one line 'demo-server listening on HOST:PORT (...) metrics on :PORT' goes to stdout. "
                + "SIGINT or SIGTERM stops the server and exits with status 0 within 5 s."})
final class DemoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--host", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "Address to listen on, for echo and metrics. Default: ${DEFAULT-VALUE}.")
    String host;

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "" + ServerConfig.DEFAULT_PORT,
            description = "Echo TCP port; 0 lets the OS choose (the startup line shows it). Default: ${DEFAULT-VALUE}, "
                    + "below Linux's ephemeral range 32768-60999 so client sockets cannot take it.")
    int port;

    @Option(names = "--idle-impl", paramLabel = "IMPL", defaultValue = "heartbeat", converter = ImplConverter.class,
            description = "Who watches idle connections: heartbeat (the shared wheel), netty (Netty's "
                    + "IdleStateHandler per connection plus a handler with the same policy, for A/B runs; with every "
                    + "--probe: it writes the probe's own ping on the reader-idle event, and any input answers it) "
                    + "or none. Default: ${DEFAULT-VALUE}.")
    ServerConfig.IdleImpl idleImpl;

    @Option(names = "--probe", paramLabel = "PROTOCOL", defaultValue = "line", converter = ProtocolConverter.class,
            description = "The protocol on --port, and the ping Heartbeat sends with --policy ping: line, websocket "
                    + "(path /ws), http2 (h2c, prior knowledge) or mqtt (see above). Default: ${DEFAULT-VALUE}.")
    ServerConfig.Protocol protocol;

    @Option(names = "--ack-mode", paramLabel = "MODE", converter = AckModeConverter.class,
            description = "Ping policy, Heartbeat: what answers a ping. any_inbound (any input), matched_only (only "
                    + "the answer carrying the ping's token: --probe websocket or http2) or matched_extends (only "
                    + "that answer, other input pushing the deadline out). Default: matched_only for websocket and "
                    + "http2, any_inbound for line.")
    AckMode ackMode;

    @Option(names = "--policy", paramLabel = "POLICY", defaultValue = "close", converter = PolicyConverter.class,
            description = "What happens to an idle connection: close (closed after --idle-timeout without input), "
                    + "ping (PING after --ping-interval of silence; closed after --max-missed-pings unanswered), "
                    + "event (idle events are only counted). Default: ${DEFAULT-VALUE}.")
    ServerConfig.Policy policy;

    @Option(names = "--idle-timeout", paramLabel = "DURATION", defaultValue = "30s",
            converter = DurationConverter.class,
            description = "Reader idle timeout of the close and event policies. Default: ${DEFAULT-VALUE}.")
    Duration idleTimeout;

    @Option(names = "--ping-interval", paramLabel = "DURATION", defaultValue = "30s",
            converter = DurationConverter.class,
            description = "Ping policy: silence before the server sends PING. Default: ${DEFAULT-VALUE}.")
    Duration pingInterval;

    @Option(names = "--ping-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Ping policy: how long each PING waits for an answer. Default: the ping interval.")
    Duration pingTimeout;

    @Option(names = "--max-missed-pings", paramLabel = "N", defaultValue = "" + ServerConfig.DEFAULT_MAX_MISSED_PINGS,
            description = "Ping policy: unanswered PINGs before the connection is closed. Default: ${DEFAULT-VALUE}.")
    int maxMissedPings;

    @Option(names = "--max-line", paramLabel = "BYTES", defaultValue = "" + ServerConfig.DEFAULT_MAX_LINE,
            description = "Longest line in bytes, line ending excluded; a longer one is answered 'ERR line too long' "
                    + "and closes the connection (counted as reason max_line). Default: ${DEFAULT-VALUE}.")
    int maxLine;

    @Option(names = "--transport", paramLabel = "TRANSPORT", defaultValue = "auto",
            converter = TransportConverter.class,
            description = "Netty transport: auto (epoll if available, else nio), nio or epoll. "
                    + "Default: ${DEFAULT-VALUE}.")
    ServerConfig.Transport transport;

    @Option(names = "--metrics-port", paramLabel = "PORT", defaultValue = "" + ServerConfig.DEFAULT_METRICS_PORT,
            description = "HTTP port of /metrics, /healthz and /debug/gc; 0 disables it. Default: ${DEFAULT-VALUE}.")
    int metricsPort;

    @Option(names = "--worker-threads", paramLabel = "N",
            description = "Event loop threads for the connections. Default: the number of cores (${sys:demo.cores}).")
    Integer workerThreads;

    @Option(names = "--tick", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Heartbeat's wheel tick (rounded up to a power of two nanoseconds): the most an idle "
                    + "connection is acted on late. Default: 2^20 ns (about 1ms).")
    Duration tick;

    @Option(names = "--loop-lag", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Measure the event loops' lag: a probe per loop every DURATION (/metrics). Default: off.")
    Duration loopLag;

    @Option(names = "--worker-host", paramLabel = "loop|thread", defaultValue = "loop",
            converter = WorkerHostConverter.class,
            description = "Where Heartbeat's worker runs its cycles: loop (on one of the server's event loops, which "
                    + "runs them while awake for I/O anyway; the worker's own thread only takes over if that loop "
                    + "stops running them) or thread (the worker's own thread, which wakes for every cycle). "
                    + "Default: ${DEFAULT-VALUE}.")
    ServerConfig.WorkerHost workerHost;

    @Option(names = "--hand-offs", paramLabel = "lazy|eager", defaultValue = "eager",
            converter = HandOffsConverter.class,
            description = "How Heartbeat's worker hands pings to the event loops: lazy (queued without waking a "
                    + "sleeping loop, which runs them when it wakes for I/O, or is woken by a later worker cycle, "
                    + "within a coalescing window) or eager (every hand-off wakes its loop). Closes always wake. "
                    + "Default: ${DEFAULT-VALUE}.")
    HandOffs handOffs;

    @Option(names = "--police-pings",
            description = "Police the clients' own pings (see above): too-frequent pingers are closed, told "
                    + "PING_ABUSE.")
    boolean policePings;

    @Option(names = "--peer-ping-min-interval", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With --police-pings: the shortest accepted gap between two pings of a client; one sooner "
                    + "is a strike. Default: ${sys:demo.peerPingMinInterval} (gRPC's permitKeepAliveTime).")
    Duration peerPingMinInterval;

    @Option(names = "--peer-ping-max-strikes", paramLabel = "N",
            description = "With --police-pings: too-early pings forgiven; the next one closes the connection. "
                    + "Default: " + PingPolicing.DEFAULT_MAX_STRIKES + " (gRPC's).")
    Integer peerPingMaxStrikes;

    @Option(names = "--permit-pings-without-traffic",
            description = "With --police-pings: hold pings to --peer-ping-min-interval even when no application "
                    + "message went either way since the last accepted one (an idle client's keep-alive); without "
                    + "it such a ping must wait ${sys:demo.peerPingMinIntervalWithoutTraffic} (gRPC's "
                    + "permitKeepAliveWithoutCalls=false).")
    boolean permitPingsWithoutTraffic;

    @Option(names = "--max-age", paramLabel = "DURATION", defaultValue = "0s", converter = DurationConverter.class,
            description = "Heartbeat: close every connection at this age, whatever its activity (reason MAX_AGE); "
                    + "0s is off. Default: ${DEFAULT-VALUE}.")
    Duration maxAge;

    @Option(names = "--max-age-jitter", paramLabel = "FRACTION", defaultValue = "0",
            description = "With --max-age: spread each connection's age by up to this fraction of it, in [0, 1), so "
                    + "connections opened together do not reconnect together. Default: ${DEFAULT-VALUE}.")
    double maxAgeJitter;

    @Option(names = "--max-age-jitter-mode", paramLabel = "MODE", defaultValue = "symmetric",
            converter = JitterModeConverter.class,
            description = "With --max-age-jitter: symmetric (gRPC's 0.9-1.1 x), down_only or up_only. "
                    + "Default: ${DEFAULT-VALUE}.")
    JitterMode maxAgeJitterMode;

    @Option(names = "--max-age-grace", paramLabel = "DURATION", defaultValue = "0s",
            converter = DurationConverter.class,
            description = "With --max-age: how long a connection may go on after its goodbye event before it is "
                    + "closed; 0s closes at the age. Default: ${DEFAULT-VALUE}.")
    Duration maxAgeGrace;

    @Option(names = "--write-stall", paramLabel = "DURATION", defaultValue = "0s", converter = DurationConverter.class,
            description = "Heartbeat: close a connection whose pending output has not moved for this long (a client "
                    + "that stopped reading; reason WRITE_STALL); 0s is off. Default: ${DEFAULT-VALUE}.")
    Duration writeStall;

    @Option(names = "--max-unwritable", paramLabel = "DURATION", defaultValue = "0s",
            converter = DurationConverter.class,
            description = "Heartbeat: close a connection that stays unwritable (output above the high water mark) "
                    + "this long (reason UNWRITABLE); 0s is off. Default: ${DEFAULT-VALUE}.")
    Duration maxUnwritable;

    @Option(names = "--action-budget", paramLabel = "N", defaultValue = "0",
            description = "Heartbeat storm control: hand at most N pings, closes and events a second to the event "
                    + "loops, the rest waiting oldest first; 0 is off. POST /drain?window=DURATION on --metrics-port "
                    + "closes every connection spread over the window (reason DRAIN). Default: ${DEFAULT-VALUE}.")
    int actionBudget;

    @Option(names = "--stop-with-parent",
            description = "Stop (as on SIGTERM) when the process that started this one exits. The load test "
                    + "starts its servers with it, so no server outlives a load test that was killed.")
    boolean stopWithParent;

    /** Parses, runs and returns the exit status: 0, 1 (could not start) or 2 (bad command line). */
    static int run(String... args) {
        return commandLine().execute(args);
    }

    static CommandLine commandLine() {
        System.setProperty("demo.cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
        System.setProperty("demo.peerPingMinInterval", DurationConverter.format(PingPolicing.DEFAULT_MIN_INTERVAL));
        System.setProperty("demo.peerPingMinIntervalWithoutTraffic",
                DurationConverter.format(PingPolicing.DEFAULT_MIN_INTERVAL_WITHOUT_TRAFFIC));
        CommandLine cmd = new CommandLine(new DemoCommand());
        // A usage error: the message and a pointer to --help, not the whole help text.
        cmd.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            c.getErr().println(ex.getMessage());
            c.getErr().println("Try 'demo-server --help' for more information.");
            return c.getCommandSpec().exitCodeOnInvalidInput();
        });
        return cmd;
    }

    /**
     * The settings the flags describe.
     *
     * @throws IllegalArgumentException naming the flag that cannot work, or that would do nothing
     */
    ServerConfig toConfig() {
        requireEveryFlagCounts();
        ServerConfig.Builder b = ServerConfig.builder()
                .host(host)
                .port(port)
                .idleImpl(idleImpl)
                .policy(policy)
                .idleTimeout(idleTimeout)
                .pingInterval(pingInterval)
                .pingTimeout(pingTimeout)
                .maxMissedPings(maxMissedPings)
                .maxLine(maxLine)
                .transport(transport)
                .tick(tick)
                .loopLag(loopLag)
                .workerHost(workerHost)
                .lazyHandOffs(handOffs == HandOffs.LAZY)
                .protocol(protocol)
                .ackMode(ackMode);
        if (metricsPort == 0) {
            b.metricsDisabled();
        } else {
            b.metricsPort(metricsPort);
        }
        if (workerThreads != null) {
            b.workerThreads(workerThreads);
        }
        b.policePings(peerPingRules());
        b.lifecycle(new ServerConfig.Lifecycle(maxAge, maxAgeJitter, maxAgeJitterMode, maxAgeGrace, writeStall,
                maxUnwritable, actionBudget));
        return b.build();
    }

    /** Whether the command line gave {@code flag} (not just its default). */
    private boolean given(String flag) {
        return spec != null && spec.commandLine().getParseResult() != null
                && spec.commandLine().getParseResult().hasMatchedOption(flag);
    }

    /**
     * Refuses a flag that the chosen idle impl, policy or protocol would ignore, naming it and the flag that
     * would make it count.
     *
     * @throws IllegalArgumentException for the first such flag
     */
    private void requireEveryFlagCounts() {
        String impl = "--idle-impl " + idleImpl;
        if (idleImpl == ServerConfig.IdleImpl.NONE) {
            refuse(impl + " watches no idleness", "give --idle-impl heartbeat or netty", "--policy", "--idle-timeout",
                    "--ping-interval", "--ping-timeout", "--max-missed-pings", "--ack-mode");
        }
        if (idleImpl != ServerConfig.IdleImpl.HEARTBEAT) {
            refuse("it is Heartbeat's, and " + impl + " has no Heartbeat", "give --idle-impl heartbeat", "--tick",
                    "--worker-host", "--hand-offs");
        }
        if (policy != ServerConfig.Policy.PING || protocol == ServerConfig.Protocol.MQTT) {
            refuse("it applies to the ping policy, and " + (protocol == ServerConfig.Protocol.MQTT ? "--probe mqtt "
                    + "servers never ping (the clients' Keep Alive rules)" : "--policy " + policy + " sends no pings"),
                    protocol == ServerConfig.Protocol.MQTT ? "give --probe line, websocket or http2 with --policy ping"
                            : "give --policy ping", "--ping-interval", "--ping-timeout", "--max-missed-pings");
        } else {
            refuse("--policy ping closes after --ping-interval + --max-missed-pings x --ping-timeout, not after an "
                    + "idle timeout", "give --policy close or event", "--idle-timeout");
        }
        if (!given("--max-age-jitter") && !given("--max-age")) {
            refuse("it says how --max-age-jitter spreads the ages, and there is none", "give --max-age and "
                    + "--max-age-jitter", "--max-age-jitter-mode");
        }
    }

    /** Refuses the first of {@code flags} given: "--flag does nothing here: why; fix". */
    private void refuse(String why, String fix, String... flags) {
        for (String flag : flags) {
            if (given(flag)) {
                throw new IllegalArgumentException(flag + " would do nothing: " + why + "; " + fix + ", or leave "
                        + flag + " out");
            }
        }
    }

    /**
     * The ping policing's rules, or null without {@code --police-pings}.
     *
     * @throws IllegalArgumentException if a policing flag is given without {@code --police-pings}
     */
    private ServerConfig.PeerPingRules peerPingRules() {
        if (!policePings) {
            String flag = peerPingMinInterval != null ? "--peer-ping-min-interval"
                    : peerPingMaxStrikes != null ? "--peer-ping-max-strikes"
                    : permitPingsWithoutTraffic ? "--permit-pings-without-traffic" : null;
            if (flag != null) {
                throw new IllegalArgumentException(flag + " says how the clients' pings are policed, but they are "
                        + "not: give --police-pings too");
            }
            return null;
        }
        ServerConfig.PeerPingRules d = ServerConfig.PeerPingRules.DEFAULT;
        return new ServerConfig.PeerPingRules(peerPingMinInterval != null ? peerPingMinInterval : d.minInterval(),
                permitPingsWithoutTraffic, peerPingMaxStrikes != null ? peerPingMaxStrikes : d.maxStrikes());
    }

    @Override
    public Integer call() throws Exception {
        ServerConfig config;
        try {
            config = toConfig();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        DemoServer server;
        try {
            server = DemoServer.start(config);
        } catch (Exception e) {
            System.err.println("demo-server: cannot start on " + config.host() + " port " + config.port()
                    + (config.metricsEnabled() ? " (metrics port " + config.metricsPort() + ")" : "") + ": " + e);
            return 1;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            System.out.flush();
            System.err.flush();
            // On SIGTERM/SIGINT the JVM would exit with 128 + the signal number (143, 130) after the
            // hooks; a clean stop is success, so end the process here with 0. halt, not System.exit,
            // which would block forever inside a hook. No other hook of this process needs to run.
            Runtime.getRuntime().halt(0);
        }, "demo-server-shutdown"));
        if (stopWithParent) {
            stopWithParent();
        }
        System.out.println(server.readyLine());
        System.out.flush();
        server.awaitClosed();
        return 0;
    }

    /** Exits (running the shutdown hook, which stops the server) once the parent process has ended. */
    private static void stopWithParent() {
        Optional<ProcessHandle> parent = ProcessHandle.current().parent();
        if (parent.isEmpty() || !parent.get().isAlive()) {
            System.exit(0);
        }
        parent.get().onExit().thenRun(() -> System.exit(0));
    }

    /** Enum values as the help shows them: lower case, matched ignoring case. */
    abstract static class LowerCaseEnumConverter<E extends Enum<E>> implements CommandLine.ITypeConverter<E> {
        private final Class<E> type;

        LowerCaseEnumConverter(Class<E> type) {
            this.type = type;
        }

        @Override
        public E convert(String value) {
            StringBuilder names = new StringBuilder();
            for (E e : type.getEnumConstants()) {
                if (e.name().equalsIgnoreCase(value.trim())) {
                    return e;
                }
                names.append(names.length() == 0 ? "" : ", ").append(e.name().toLowerCase(Locale.ROOT));
            }
            throw new CommandLine.TypeConversionException("'" + value + "' is not one of: " + names);
        }
    }

    static final class ImplConverter extends LowerCaseEnumConverter<ServerConfig.IdleImpl> {
        ImplConverter() {
            super(ServerConfig.IdleImpl.class);
        }
    }

    /** {@code --hand-offs}. */
    enum HandOffs {
        LAZY, EAGER
    }

    static final class HandOffsConverter extends LowerCaseEnumConverter<HandOffs> {
        HandOffsConverter() {
            super(HandOffs.class);
        }
    }

    static final class WorkerHostConverter extends LowerCaseEnumConverter<ServerConfig.WorkerHost> {
        WorkerHostConverter() {
            super(ServerConfig.WorkerHost.class);
        }
    }

    static final class PolicyConverter extends LowerCaseEnumConverter<ServerConfig.Policy> {
        PolicyConverter() {
            super(ServerConfig.Policy.class);
        }
    }

    static final class ProtocolConverter extends LowerCaseEnumConverter<ServerConfig.Protocol> {
        ProtocolConverter() {
            super(ServerConfig.Protocol.class);
        }
    }

    static final class AckModeConverter extends LowerCaseEnumConverter<AckMode> {
        AckModeConverter() {
            super(AckMode.class);
        }
    }

    static final class TransportConverter extends LowerCaseEnumConverter<ServerConfig.Transport> {
        TransportConverter() {
            super(ServerConfig.Transport.class);
        }
    }

    static final class JitterModeConverter extends LowerCaseEnumConverter<JitterMode> {
        JitterModeConverter() {
            super(JitterMode.class);
        }
    }
}
