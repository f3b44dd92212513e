/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.PrintWriter;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import dev.heartbeat.demo.DurationConverter;
import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.JitterMode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

// Over 500 lines (listed in checkstyle.xml): the picocli command: its options and their help texts; the help moves to
// load-test/docs under issue 28.
/**
 * The load test's command line: {@code java -jar load-test/target/load-test.jar --help}. Opens N
 * connections to the demo server with a mix of roles, runs the same scenario against each idle
 * implementation in turn (fresh server processes, the same JVM flags), and writes the side-by-side
 * report. Every run is bounded in time and stops every process it started.
 *
 * <pre>
 * java -jar load-test/target/load-test.jar --out reports/100k          # 100k tcp, heartbeat vs netty
 * java -jar load-test/target/load-test.jar --transport local --connections 1000000 ...
 * </pre>
 */
@Command(name = "load-test",
        mixinStandardHelpOptions = true,
        version = "heartbeat load-test 0.1.0-SNAPSHOT",
        sortOptions = false,
        usageHelpAutoWidth = true,
        description = {
            "Opens N connections to the Heartbeat demo echo server and runs a mix of connection roles against each "
                    + "idle implementation in turn (--compare), then writes report.json, report.md and report.html "
                    + "(tables and charts) into --out and prints the side-by-side table.",
            "",
            "Roles: active (a line at --active-rate, echo latency measured from each line's intended send time), "
                    + "silent (never sends: must be closed), pong (answers the server's PING: must stay open with "
                    + "--policy ping), dying (answers until a random moment in the run, then silent: must be closed). "
                    + "With --probe websocket or http2 the line is a text frame or a DATA frame, PING a Ping frame or "
                    + "an HTTP/2 PING, and silent clients do not answer pings (no automatic answers); with mqtt, a "
                    + "PUBLISH, and pong and dying ones keep alive by PINGREQ.",
            "Every close is checked against the role: the servers say why before closing for idleness (BYE "
                    + "<REASON>, a WebSocket Close frame, an HTTP/2 GOAWAY), and a silent or dying connection must be "
                    + "told PING_TIMEOUT (--policy ping) or READER_IDLE (--policy close; mqtt: no goodbye), with the "
                    + "servers' own counts per reason matching.",
            "Edge roles (issue 12): trickle (a slow-loris: a byte, never a newline, every 3/4 of the idle timeout or "
                    + "ping interval: must stay open until it has sent more than --max-line bytes, then be closed by "
                    + "the server's line decoder), pingflood (--flood-lines PING lines a millisecond: must stay open "
                    + "and get PONGs), halfopen (stops reading and never writes, no FIN: must be closed for "
                    + "idleness), longline (one line of --max-line + 1 bytes early in its close window: must be "
                    + "closed by the decoder with ERR line too long, not for idleness), junk (random binary lines, "
                    + "invalid UTF-8, at --active-rate: must stay open and get them echoed).",
            "flooder, with every --probe: pings in its protocol's own words (a PING line, a WebSocket Ping, an "
                    + "HTTP/2 PING, an MQTT PINGREQ), " + Scenario.FLOOD_BURST + " at once, back to back, once set "
                    + "up, and again every half ping interval (or idle timeout) while open. A mix with flooders "
                    + "starts the servers with --police-pings: peer pings at least a sixth of the ping interval (or "
                    + "idle timeout) apart, " + Scenario.PEER_PING_MAX_STRIKES + " strikes forgiven, permitted "
                    + "without traffic (the pong and dying roles' keep-alives carry none). Each flooder must be "
                    + "closed for PING_ABUSE, not before it sent more pings than forgiven, and told so (BYE "
                    + "PING_ABUSE, a Close frame 1008 or a GOAWAY ENHANCE_YOUR_CALM, both 'too_many_pings'; mqtt: no "
                    + "goodbye, the servers' counts), and no other role may be. Not with pingflood, which must stay "
                    + "open.",
            "aged (Heartbeat only): answers pings and keeps alive as pong, so it is never idle; a mix with aged "
                    + "connections starts the servers with --max-age, --max-age-jitter, --max-age-jitter-mode and "
                    + "--max-age-grace (they then age every connection). On the MAX_AGE goodbye (BYE MAX_AGE, a Close "
                    + "frame 1001, an HTTP/2 GOAWAY, the first of its two; mqtt: the close) the client opens a new "
                    + "connection of the same role; the servers close the old one at the end of the grace. Each "
                    + "max-age close must name MAX_AGE, its goodbye come no sooner than the shortest age the jitter "
                    + "allows after the connect started (age x (1 - jitter), up_only: the age) and its close no "
                    + "later than the longest age + the grace + 1s after the connect completed. A connection of "
                    + "any other role told MAX_AGE is judged the same way and reopened with its role (a replacement "
                    + "due to be closed after the run ends is not judged open). Not with halfopen; with mqtt not "
                    + "with silent or dying (no goodbye to tell the closes apart). Reports the reconnects per second "
                    + "(peak, mean, peak / mean).",
            "Storm (--storm): every connection silent, all opened within about a second, so that their pings and "
                    + "closes come due together; the clients count the servers' pings and closes per second. With "
                    + "--action-budget (Heartbeat only), --check also fails on a second with more actions than the "
                    + "servers' buckets allow (as they count, and as the clients see) or a close later than the "
                    + "budget makes it by design (see "
                    + "--action-budget); the servers' deferred actions and worst deferral are reported. Without a "
                    + "budget the worst second is reported only.",
            "stalled (line only, --transport tcp: the local transport has no socket buffers to fill): never reads, "
                    + "and writes lines from the connect on until its own channel is unwritable (the server stopped "
                    + "reading it, its echoes backed up), then nothing more. Heartbeat servers get --write-stall "
                    + "(default a quarter of the ping interval or idle timeout) and must close it for WRITE_STALL: not "
                    + "before --write-stall after its first line, and within the close window after its last. Its "
                    + "goodbye cannot reach a peer that does not read: the servers' write_stall count must equal the "
                    + "stalled closes, and no other role may be closed so. IdleStateHandler has no write-stall "
                    + "deadline: under --compare netty it must be closed for idleness, not before the close window "
                    + "after its first line (the server stopped reading it then or later).",
            "slowreader (line only, --transport tcp; not with aged or --drain): the slow reader that still "
                    + "drains. It writes lines as stalled does, with the same small buffers, so that the server's "
                    + "echoes back up, but reads, one small receive window at a time, " + Scenario.SLOW_READS_PER_STALL
                    + " times per --write-stall (Heartbeat servers get --write-stall as with stalled), so that echoes "
                    + "keep leaving the server's outbound buffer, slowly. It must never be closed, by any impl, for "
                    + "any reason (WRITE_STALL above all), unless its own reads show no bytes for --write-stall "
                    + "before a Heartbeat server closed it (reported as such), and --check also fails unless one of "
                    + "them stayed unwritable for longer than --write-stall (the server did not read it for that "
                    + "long: it stops only while its echoes to it are over its high water mark, so they were pending "
                    + "all along). Reports the bytes they wrote and read, their read rate and the longest unwritable "
                    + "span.",
            "--drain DURATION: late in the run (its window and a grace before the end) the harness POSTs "
                    + "/drain?window=DURATION to every server (Heartbeat only): every connection still open must then "
                    + "be closed, told DRAIN (BYE DRAIN, a Close frame 1001 or a GOAWAY with 'DRAIN'; mqtt: no "
                    + "goodbye, the servers' counts), none before the drain started, and the closes spread: no "
                    + "second of the clock with more than 1.5 x the window's mean (drained / window) plus one.",
            "",
            "A close before the moment a correct server may act (the client's clock just before its last input, "
                    + "plus the idle timeout, or the ping interval plus every missed ping's timeout) is premature. "
                    + "Lateness is the close time minus that moment.",
            "",
            "Transports: tcp starts as many demo-server and client processes as the per-process open-file limit "
                    + "needs (loopback, source addresses 127.x.y.z, ports below 32768); local runs the demo "
                    + "server's own pipeline on Netty's in-JVM transport, one JVM per implementation.",
            "",
            "Durations are a number and a unit: 500ms, 30s, 2m. Sizes: 512m, 2g.",
            "",
            "A quick smoke test (about 30 s, 2,000 connections in one JVM, Heartbeat and IdleStateHandler):",
            "  java -jar load-test/target/load-test.jar " + LoadTest.SMOKE_TEST,
            "The run window (--duration) must hold the close window (--idle-timeout, or --ping-interval + "
                    + "--max-missed-pings x --ping-timeout) plus a grace: shorten both together.",
            ""},
        footer = {"", "Exit status: 0 done (and with --check: no failure); 1 --check failed (a premature close, a "
                + "silent, dying, flooder or stalled connection left open, an unexpected close (a slowreader's among "
                + "them), no slowreader backed up, a close told the wrong reason, a max-age close later than its "
                + "bound, a storm second over the budget, a drain not spread, or a connection not opened); 2 bad "
                + "command line; 3 a run could not be completed (its report still lists what was measured).",
            "Every child process is stopped at the end, on Ctrl-C and on errors; children also stop by themselves "
                + "if this process dies."})
public final class LoadTest implements Callable<Integer> {

    /** The smoke test {@code --help} shows: small timeouts, so that a short run sees every close. */
    static final String SMOKE_TEST = "--transport local --connections 2000 --ping-interval 3s --ping-timeout 2s "
            + "--active-rate 2 --duration 10s --out reports/smoke";

    /** Lines per second of one active connection, at most: the client sends from a 1 ms tick. */
    private static final double MAX_ACTIVE_RATE = 1000;

    private static final Pattern SIZE = Pattern.compile("[1-9][0-9]*[kKmMgG]?");

    @Spec
    CommandSpec spec;

    @Option(names = "--connections", paramLabel = "N", defaultValue = "100000",
            description = "Connections to open. Default: ${DEFAULT-VALUE}.")
    int connections;

    /** The transports a run can use. */
    enum Transport {
        TCP, LOCAL;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The idle implementations a run can compare: the demo server's {@code --idle-impl} values. */
    enum Impl {
        HEARTBEAT, NETTY, NONE;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    @Option(names = "--transport", paramLabel = "tcp|local", defaultValue = "tcp",
            description = "tcp: real loopback sockets to demo-server processes; local: Netty's in-JVM transport. "
                    + "Default: ${DEFAULT-VALUE}.")
    Transport transport;

    @Option(names = "--compare", paramLabel = "IMPL", split = ",", defaultValue = "heartbeat,netty",
            description = "Idle implementations to run in turn, comma-separated: heartbeat, netty (IdleStateHandler), "
                    + "none (no idle handling: a heap and CPU baseline, no closes expected). Default: heartbeat,netty.")
    List<Impl> compare;

    @Option(names = "--probe", paramLabel = "PROTOCOL", defaultValue = "line",
            description = "The protocol, given to the servers' --probe: line, websocket (frames at /ws, Ping/Pong), "
                    + "http2 (h2c, DATA echoed on a stream, PING/ACK) or mqtt (PUBLISH echoed; the clients announce "
                    + "--ping-interval as their Keep Alive, whole seconds, and pong/dying ones send PINGREQ that "
                    + "often; "
                    + "the server closes after 1.5 x it: --ping-timeout and --max-missed-pings do not apply). The "
                    + "roles mean the same in each; the edge roles are line-only. Default: ${DEFAULT-VALUE}.")
    ServerConfig.Protocol probe;

    @Option(names = "--mix", paramLabel = "ROLE=PCT,...", defaultValue = Mix.DEFAULT,
            description = "Share of each role in percent, adding up to 100. Default: ${DEFAULT-VALUE}.")
    String mix;

    @Option(names = "--policy", paramLabel = "close|ping", defaultValue = "ping",
            description = "What the server does with idle connections: close after --idle-timeout, or ping after "
                    + "--ping-interval and close after --max-missed-pings unanswered. Default: ${DEFAULT-VALUE}.")
    Scenario.Policy policy;

    @Option(names = "--idle-timeout", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "40s",
            description = "Close policy: reader idle timeout. Default: ${DEFAULT-VALUE}.")
    Duration idleTimeout;

    @Option(names = "--ping-interval", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "40s",
            description = "Ping policy: silence before the server sends PING. Long enough that the connect phase "
                    + "ends first, so the heap is measured before any ping. Default: ${DEFAULT-VALUE}.")
    Duration pingInterval;

    @Option(names = "--ping-timeout", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "5s",
            description = "Ping policy: how long each PING waits for an answer. Default: ${DEFAULT-VALUE}.")
    Duration pingTimeout;

    @Option(names = "--max-missed-pings", paramLabel = "N", defaultValue = "2",
            description = "Ping policy: unanswered PINGs before the close. Default: ${DEFAULT-VALUE}.")
    int maxMissedPings;

    @Option(names = "--duration", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "100s",
            description = "The measured run, from the moment every connection is up; it must cover the close "
                    + "window plus a grace. Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--active-rate", paramLabel = "LINES_PER_S", defaultValue = "0.2",
            description = "Lines per second of each active connection. Default: ${DEFAULT-VALUE} (20,000 active "
                    + "connections then offer 4,000 echoes a second, which 2 cores sustain next to 100,000 "
                    + "connections; an offered load the machine cannot keep up with measures only its backlog).")
    double activeRate;

    @Option(names = "--max-line", paramLabel = "BYTES", defaultValue = "" + ServerConfig.DEFAULT_MAX_LINE,
            description = "The servers' --max-line: a longer line closes its connection (roles longline and trickle). "
                    + "At least " + Scenario.MIN_MAX_LINE + ". Default: ${DEFAULT-VALUE}.")
    int maxLine;

    @Option(names = "--flood-lines", paramLabel = "N", defaultValue = "1",
            description = "PING lines each pingflood connection sends every millisecond (1 to "
                    + Scenario.MAX_FLOOD_LINES + "). Default: ${DEFAULT-VALUE} (about 1,000 lines a second).")
    int floodLines;

    @Option(names = "--write-stall", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With stalled or slowreader connections in --mix: the Heartbeat servers' --write-stall "
                    + "(a slowreader reads " + Scenario.SLOW_READS_PER_STALL + " times per it). At most a "
                    + "third of the close window. Default: a quarter of --ping-interval (--policy ping) or "
                    + "--idle-timeout.")
    Duration writeStall;

    @Option(names = "--drain", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "POST /drain?window=DURATION to every server late in the run window (starting at "
                    + "--duration minus the grace minus DURATION): every connection closed, told DRAIN, spread over "
                    + "the window. Heartbeat only (--compare heartbeat). At least 1s. Default: no drain.")
    Duration drain;

    @Option(names = "--churn-rate", paramLabel = "PER_S", defaultValue = "0",
            description = "Soak: connections the clients close and reopen per second in the run window (until the "
                    + "last close window and grace before its end), across roles (the same index and role again); tcp "
                    + "runs then also sample the servers' heap after a full GC at "
                    + "each fifth of the window and report its slope. Default: ${DEFAULT-VALUE} (off).")
    double churnRate;

    @Option(names = "--connect-rate", paramLabel = "PER_S",
            description = "New connections per second over all clients. Default: 5000 (tcp), 50000 (local); with "
                    + "--storm, --connections (all within one second, as fast as the clients can).")
    Double connectRate;

    @Option(names = "--max-age", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With aged connections in --mix: the servers' --max-age (Heartbeat only). Default: "
                    + "--duration / " + Scenario.DEFAULT_AGES_PER_WINDOW + " (each aged connection ages out about "
                    + "3 times). The longest age the jitter allows plus the grace must fit twice in --duration.")
    Duration maxAge;

    @Option(names = "--max-age-jitter", paramLabel = "FRACTION",
            description = "With aged connections: the servers' --max-age-jitter, in [0, 1). Default: "
                    + Scenario.DEFAULT_AGE_JITTER + ".")
    Double maxAgeJitter;

    @Option(names = "--max-age-jitter-mode", paramLabel = "MODE", defaultValue = "symmetric",
            description = "With aged connections: symmetric (age x (1 +/- jitter)), down_only (age x (1 - jitter) to "
                    + "age) or up_only (age to age x (1 + jitter)). Default: ${DEFAULT-VALUE}.")
    JitterMode maxAgeJitterMode;

    @Option(names = "--max-age-grace", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With aged connections: the servers' --max-age-grace, from the goodbye to the close. "
                    + "Default: --max-age / " + Scenario.DEFAULT_GRACE_DIVISOR + ".")
    Duration maxAgeGrace;

    @Option(names = "--storm",
            description = "Storm: every connection silent (--mix silent=100), all opened within about one second "
                    + "(--connect-rate defaults to --connections), so that their pings and closes all come due "
                    + "together. Reports the closes and pings the clients saw per second, and the worst second.")
    boolean storm;

    @Option(names = "--action-budget", paramLabel = "N", defaultValue = "0",
            description = "The servers' action budget, actions a second over all server processes: each of the P "
                    + "processes gets N / P (rounded down) as its --action-budget (Heartbeat only). With --storm, "
                    + "--check fails if a server counted more actions in one whole second of its clock than its "
                    + "bucket allows (N / P + its capacity, a hundredth of N / P and at least 1), if any whole second "
                    + "of the clients' saw more pings and closes than the P buckets allow and 20 ms of N for their "
                    + "delivery (a close handed over late in one second is seen in the next), or the last close "
                    + "later than the actions per connection (1, or 1 + --max-missed-pings with --policy ping) x the "
                    + "connections of a server / its budget, + 1s. Default: 0 (none).")
    int actionBudget;

    @Option(names = "--server-heap", paramLabel = "SIZE",
            description = "-Xmx of each demo-server process (tcp), or of the one JVM of a local run. Default: 512m "
                    + "(tcp); 1g plus 8k per connection (local: both ends of each pair live in it, about 3.3k with "
                    + "compressed oops, 5.8k with ZGC, which has none).")
    String serverHeap;

    @Option(names = "--client-heap", paramLabel = "SIZE", defaultValue = "512m",
            description = "-Xmx of each client process (tcp). Default: ${DEFAULT-VALUE}.")
    String clientHeap;

    @Option(names = "--jvm-arg", paramLabel = "ARG",
            description = "Extra flag for every child JVM, the same for every implementation (repeatable), "
                    + "e.g. --jvm-arg=-XX:+UseParallelGC.")
    List<String> jvmArgs = new ArrayList<>();

    @Option(names = "--server-threads", paramLabel = "N",
            description = "Event loop threads of each server. Default: the cores (${sys:loadtest.cores}) shared out "
                    + "among the server processes, at least 1 each.")
    Integer serverThreads;

    @Option(names = "--client-threads", paramLabel = "N", defaultValue = "1",
            description = "Event loop threads of each client process (tcp) or of the local run's client. "
                    + "Default: ${DEFAULT-VALUE}.")
    int clientThreads;

    @Option(names = "--max-connections-per-process", paramLabel = "N",
            description = "Connections per server and per client process, at most (tcp). Default: the open-file "
                    + "limit minus " + TcpLayout.RESERVED_FDS + " (${sys:loadtest.perProcess} here).")
    Integer maxPerProcess;

    @Option(names = "--base-port", paramLabel = "PORT", defaultValue = "20000",
            description = "First echo port of the started servers (tcp); each implementation gets "
                    + TcpLayout.PORTS_PER_RUN + " ports from here, all below 32768. Default: ${DEFAULT-VALUE}.")
    int basePort;

    @Option(names = "--tick", paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Heartbeat's wheel tick, given to the servers. Default: the library's (2^20 ns, about 1ms).")
    Duration tick;

    @Option(names = "--worker-host", paramLabel = "loop|thread", defaultValue = "loop",
            description = "Where Heartbeat's worker runs its cycles in the servers (the demo server's --worker-host): "
                    + "loop (on one of the server's event loops, the worker's own thread only watching) or thread "
                    + "(its own thread). Default: ${DEFAULT-VALUE}.")
    ServerConfig.WorkerHost workerHost;

    @Option(names = "--hand-offs", paramLabel = "lazy|eager", defaultValue = "eager",
            description = "How Heartbeat's servers hand pings to their event loops (the demo server's --hand-offs): "
                    + "lazy (without waking a sleeping loop) or eager (every hand-off wakes its loop). "
                    + "Default: ${DEFAULT-VALUE}.")
    HandOffs handOffs;

    /** {@code --hand-offs}. */
    enum HandOffs {
        LAZY, EAGER
    }

    @Option(names = "--target", paramLabel = "HOST:PORT", split = ",",
            description = "Use these already running demo servers instead of starting them (tcp, one implementation; "
                    + "give the servers' --policy and timeouts here too; with flooders in --mix the servers must "
                    + "police pings as this tool would start them: the report's scenario says how).")
    List<String> target = new ArrayList<>();

    @Option(names = "--target-metrics", paramLabel = "HOST:PORT", split = ",",
            description = "The HTTP endpoints of the --target servers, in the same order, for heap and CPU.")
    List<String> targetMetrics = new ArrayList<>();

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Seed of the role shuffle, send phases and moments of death. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Where report.json, report.md, report.html and the child logs go. Default: "
                    + "reports/load-test-<date>-<time>.")
    Path out;

    @Option(names = "--check",
            description = "Exit with status 1 if any connection was closed prematurely or unexpectedly, a silent, "
                    + "dying, flooder or stalled one was left open or told the wrong reason, another role was closed "
                    + "for WRITE_STALL, a slowreader was closed or none backed up, a --drain left a connection open "
                    + "or closed them in a burst, or one could not be opened: for CI.")
    boolean check;

    @Option(names = "--demo-server-jar", paramLabel = "PATH",
            description = "The demo server's runnable jar (tcp). Default: demo-server/target/demo-server.jar next to "
                    + "this jar's module, or under the working directory.")
    Path demoServerJar;

    private String[] args = new String[0];

    /** Runs the command line: see {@code --help}. */
    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String... args) {
        CommandLine cmd = commandLine();
        ((LoadTest) cmd.getCommand()).args = args.clone();
        return cmd.execute(args);
    }

    static CommandLine commandLine() {
        System.setProperty("loadtest.cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
        System.setProperty("loadtest.perProcess", Integer.toString(TcpLayout.defaultPerProcess()));
        CommandLine cmd = new CommandLine(new LoadTest()).setCaseInsensitiveEnumValuesAllowed(true);
        cmd.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            c.getErr().println(ex.getMessage());
            c.getErr().println("Try 'load-test --help' for more information.");
            return c.getCommandSpec().exitCodeOnInvalidInput();
        });
        return cmd;
    }

    /**
     * The scenario the flags describe.
     *
     * @throws IllegalArgumentException naming the flag and value that cannot work
     */
    Scenario scenario() {
        if (!(activeRate > 0) || Double.isInfinite(activeRate)) {
            throw new IllegalArgumentException("--active-rate must be a positive number of lines per second: "
                    + activeRate);
        }
        if (activeRate > MAX_ACTIVE_RATE) {
            throw new IllegalArgumentException("--active-rate must be at most " + (int) MAX_ACTIVE_RATE
                    + " lines per second: " + activeRate);
        }
        boolean mixGiven = spec != null && spec.commandLine().getParseResult() != null
                && spec.commandLine().getParseResult().hasMatchedOption("--mix");
        return Scenario.builder()
                .connections(connections)
                .mix(Mix.parse(storm && !mixGiven ? "silent=100" : mix))
                .policy(policy)
                .idleTimeoutNanos(idleTimeout.toNanos())
                .pingIntervalNanos(pingInterval.toNanos())
                .pingTimeoutNanos(pingTimeout.toNanos())
                .maxMissedPings(maxMissedPings)
                .activePeriodNanos((long) (1e9 / activeRate))
                .durationNanos(duration.toNanos())
                .seed(seed)
                .tickNanos(tick == null ? 0 : tick.toNanos())
                .workerHost(workerHost)
                .lazyHandOffs(handOffs == HandOffs.LAZY)
                .maxLine(maxLine)
                .floodLines(floodLines)
                .churnPerSecond(churnRate)
                .protocol(probe)
                .maxAgeNanos(maxAge == null ? 0 : maxAge.toNanos())
                .maxAgeJitter(maxAgeJitter == null ? -1 : maxAgeJitter)
                .maxAgeJitterMode(maxAgeJitterMode)
                .maxAgeGraceNanos(maxAgeGrace == null ? -1 : maxAgeGrace.toNanos())
                .storm(storm)
                .actionBudget(actionBudget)
                .writeStallNanos(writeStall == null ? 0 : writeStall.toNanos())
                .drainNanos(drain == null ? 0 : drain.toNanos())
                .build();
    }

    /**
     * The plan the flags describe.
     *
     * @throws IllegalArgumentException naming the flag and value that cannot work
     */
    /** Connections opened a second: {@code --connect-rate}, else all within a second for a storm, else by transport. */
    double connectRate(Scenario s) {
        return connectRate != null ? connectRate : s.storm ? s.connections
                : transport.toString().equals(RunPlan.TCP) ? 5_000 : 50_000;
    }

    RunPlan plan(Scenario s) {
        String t = transport.toString();
        List<String> impls = impls(compare);
        List<String> targets = target;
        List<String> metrics = targetMetrics;
        requireHostPorts("--target", targets);
        requireHostPorts("--target-metrics", metrics);
        if (!targets.isEmpty()) {
            if (t.equals(RunPlan.LOCAL)) {
                throw new IllegalArgumentException("--target needs --transport tcp, not local");
            }
            if (impls.size() != 1) {
                throw new IllegalArgumentException("--target servers run one implementation: give --compare with "
                        + "exactly one (the servers' --idle-impl), not " + impls);
            }
            if (!metrics.isEmpty() && metrics.size() != targets.size()) {
                throw new IllegalArgumentException("--target-metrics names " + metrics.size()
                        + " endpoints for " + targets.size() + " --target servers");
            }
        }
        requireHeartbeatOnly(s, impls);
        requireLifecycleFits(s, t, impls, targets, metrics);
        double rate = connectRate(s);
        if (!(rate > 0) || Double.isInfinite(rate)) {
            throw new IllegalArgumentException("--connect-rate must be a positive number per second: " + rate);
        }
        String heap = serverHeap != null ? serverHeap : t.equals(RunPlan.TCP) ? "512m"
                : (1024 + (long) Math.ceil(s.connections * 8.0 / 1024)) + "m";
        requireSize("--server-heap", heap);
        requireSize("--client-heap", clientHeap);
        int cores = Runtime.getRuntime().availableProcessors();
        int servers = t.equals(RunPlan.TCP) && targets.isEmpty()
                ? TcpLayout.plan(s.connections, maxPerProcess != null && maxPerProcess > 0 ? maxPerProcess
                        : TcpLayout.defaultPerProcess()).servers : 1;
        int sThreads = serverThreads != null ? serverThreads : Math.max(1, cores / servers);
        if (sThreads < 1) {
            throw new IllegalArgumentException("--server-threads must be at least 1: " + sThreads);
        }
        if (clientThreads < 1) {
            throw new IllegalArgumentException("--client-threads must be at least 1: " + clientThreads);
        }
        int perProcess = maxPerProcess != null ? maxPerProcess : TcpLayout.defaultPerProcess();
        long limit = TcpLayout.fileLimit();
        if (perProcess < 1 || perProcess > limit - 100) {
            throw new IllegalArgumentException("--max-connections-per-process must be in 1-" + (limit - 100)
                    + " (the open-file limit " + limit + " less room for the JVM's own files): " + perProcess);
        }
        requireBudgetFits(s, servers);
        if (t.equals(RunPlan.TCP) && targets.isEmpty()) {
            TcpLayout.plan(s.connections, perProcess);
            TcpLayout.echoPort(basePort, impls.size() - 1, 0); // every run's ports below the ephemeral range
        }
        Path outDir = out != null ? out : Path.of("reports", "load-test-"
                + LocalDateTime.now(ZoneId.systemDefault()).format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        Path loadTestJar = locateLoadTestJar();
        Path demoJar = null;
        if (t.equals(RunPlan.TCP) && targets.isEmpty()) {
            demoJar = locateDemoServerJar(loadTestJar);
        }
        return new RunPlan(s, t, impls, outDir.toAbsolutePath(), heap, clientHeap, jvmArgs, sThreads, clientThreads,
                rate, perProcess, basePort, targets, metrics, demoJar, loadTestJar);
    }

    @Override
    // Java 17's System.console() is null unless both stdin and stdout are a terminal: what the live
    // progress line needs to know (on JDK 22+ it is non-null more often, and the line prints in place).
    @SuppressWarnings("SystemConsoleNull")
    public Integer call() throws Exception {
        Scenario s;
        RunPlan plan;
        try {
            s = scenario();
            plan = plan(s);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
        }
        PrintWriter err = spec.commandLine().getErr();
        Progress progress = new Progress(System.out, System.console() != null);
        Files.createDirectories(plan.out);
        String startedAt = ZonedDateTime.now(ZoneId.systemDefault()).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        long started = System.nanoTime();
        progress.println(String.format(Locale.ROOT, "load-test: %s %s connections, mix %s, %s; compare %s; "
                + "run window %s; report in %s", Progress.count(s.connections), plan.transport, s.mix,
                s.describePolicy(), String.join(", ", plan.impls), Scenario.format(s.durationNanos), plan.out));
        List<RunResult> results = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        for (int i = 0; i < plan.impls.size(); i++) {
            String impl = plan.impls.get(i);
            try {
                RunResult r = plan.transport.equals(RunPlan.TCP) ? new TcpCoordinator(plan, progress).run(impl, i)
                        : new LocalCoordinator(plan, progress).run(impl);
                results.add(r);
                progress.println(String.format(Locale.ROOT, "%s/%s done in %s: %d premature, %s/%s closed as "
                        + "expected, p99 lateness %s ms, echo p99 %s us, heap/connection %s B, server CPU %s s",
                        impl, plan.transport, Progress.seconds(r.wallSeconds), r.client.premature,
                        Progress.count(r.client.observedCloses), Progress.count(r.client.expectedCloses),
                        Report.num(r.latenessMillis(99)), Report.num(r.echoMicros(99)),
                        Report.num(r.heapBytesPerConnection()), Report.num(r.serverCpuSeconds)));
            } catch (Exception e) {
                String message = impl + "/" + plan.transport + " could not be completed: " + e.getMessage();
                errors.add(message);
                progress.println("load-test: " + message);
            } finally {
                ChildProcess.destroyAll(); // nothing of this run may leak into the next
            }
            if (i + 1 < plan.impls.size()) {
                List<Long> left = ChildProcess.awaitAllGone(TimeUnit.SECONDS.toNanos(20));
                if (!left.isEmpty()) {
                    progress.println("load-test: processes of the previous run still there after 20 s: " + left);
                }
                TimeUnit.SECONDS.sleep(2); // let the kernel settle the previous run's sockets
            }
        }
        double wall = (System.nanoTime() - started) / 1e9;
        Report report = new Report(s, plan, results, commandLine(plan.loadTestJar, args), startedAt, wall, errors);
        report.write(plan.out);
        progress.println("");
        for (String t : report.transports()) {
            progress.println(report.textTable(t));
            for (Report.Goal g : report.goals(t)) {
                progress.println(String.format(Locale.ROOT, "  %-6s %s: %s (target %s)", g.verdict(), g.goal(),
                        g.measured(), g.target()));
            }
            progress.println("");
        }
        List<String> failures = report.checkFailures();
        for (String f : failures) {
            err.println("load-test: " + f);
        }
        progress.println("Report: " + plan.out.resolve("report.html") + " (and report.json, report.md); wall time "
                + Progress.seconds(wall));
        if (!errors.isEmpty()) {
            return 3;
        }
        if (check && !failures.isEmpty()) {
            err.println("load-test: --check failed");
            return 1;
        }
        return 0;
    }

    /** Max age and the action budget are Heartbeat's: the demo server refuses them under netty and none. */
    private static void requireHeartbeatOnly(Scenario s, List<String> impls) {
        for (String impl : impls) {
            if (Scenario.HEARTBEAT.equals(impl)) {
                continue;
            }
            if (s.agesConnections()) {
                throw new IllegalArgumentException("--mix " + Role.AGED + "=" + s.mix.percent(Role.AGED) + " needs "
                        + "servers that close connections at a maximum age, which only Heartbeat has (the demo "
                        + "server refuses --max-age under --idle-impl " + impl + "): give --compare heartbeat");
            }
            if (s.actionBudget > 0) {
                throw new IllegalArgumentException("--action-budget " + s.actionBudget + " is Heartbeat's storm "
                        + "control (the demo server refuses it under --idle-impl " + impl + "): give --compare "
                        + "heartbeat, or no --action-budget to see the burst of every impl");
            }
        }
    }

    /**
     * The budget against the server processes (each must get at least 1 a second), and a storm's window
     * against the time its budget takes to close everything.
     */
    private static void requireBudgetFits(Scenario s, int servers) {
        if (s.actionBudget > 0 && s.actionBudgetPerServer(servers) < 1) {
            throw new IllegalArgumentException("--action-budget " + s.actionBudget + " is the total over the " + servers
                    + " server processes, each of which needs at least 1 a second: give at least " + servers);
        }
        if (s.storm && s.actionBudget > 0) {
            long need = s.closeWindowNanos() + s.stormLatenessBoundNanos(servers) + s.graceNanos();
            if (need > s.durationNanos) {
                throw new IllegalArgumentException("--storm with --action-budget " + s.actionBudget + ": the last "
                        + "close may come up to " + Scenario.format(s.stormLatenessBoundNanos(servers)) + " late by "
                        + "design (" + s.actionsPerSilentConnection() + " actions for each of "
                        + Progress.count(s.connections) + " connections at " + s.actionBudgetPerServer(servers)
                        + "/s per server, + 1s), after the close window " + Scenario.format(s.closeWindowNanos())
                        + " and before a grace of " + Scenario.format(s.graceNanos()) + ": give --duration "
                        + Scenario.format(need) + " or more, or a larger --action-budget");
            }
        }
    }

    /**
     * Stalled and slowreader connections need sockets; a drain needs Heartbeat servers, and their HTTP
     * endpoints.
     */
    private static void requireLifecycleFits(Scenario s, String transport, List<String> impls, List<String> targets,
            List<String> metrics) {
        Role backup = s.echoBackupRole();
        if (backup != null && transport.equals(RunPlan.LOCAL)) {
            throw new IllegalArgumentException("--mix " + backup + "=" + s.mix.percent(backup) + " needs "
                    + "--transport tcp: a " + backup + " connection backs the server's echoes up into socket buffers, "
                    + "and Netty's local transport has none (a write there never waits for the peer to read)");
        }
        if (backup != null && s.agesConnections()) {
            throw new IllegalArgumentException("--mix with both " + backup + " and " + Role.AGED + ": a " + backup
                    + " connection " + (backup == Role.STALLED ? "reads nothing" : "reads its echoes far behind")
                    + ", so its max-age goodbye cannot be timed; run them apart");
        }
        if (!s.drains()) {
            return;
        }
        if (s.mix.percent(Role.SLOWREADER) > 0) {
            throw new IllegalArgumentException("--drain with --mix " + Role.SLOWREADER + "="
                    + s.mix.percent(Role.SLOWREADER) + ": a " + Role.SLOWREADER + " connection reads its echoes far "
                    + "behind, so its DRAIN goodbye comes too late to tell its close from an unexpected one; run them "
                    + "apart");
        }
        if (s.agesConnections() || s.storm) {
            throw new IllegalArgumentException("--drain with " + (s.storm ? "--storm" : "--mix " + Role.AGED + "=N")
                    + ": a drained connection's end would be judged two ways; run them apart");
        }
        for (String impl : impls) {
            if (!Scenario.HEARTBEAT.equals(impl)) {
                throw new IllegalArgumentException("--drain " + Scenario.format(s.drainNanos) + " is Heartbeat's "
                        + "(POST /drain answers 409 under other idle impls): give --compare heartbeat, not "
                        + String.join(",", impls));
            }
        }
        if (!targets.isEmpty() && metrics.isEmpty()) {
            throw new IllegalArgumentException("--drain with --target needs --target-metrics: the drain is "
                    + "POST /drain on each server's metrics port");
        }
    }

    static List<String> impls(List<Impl> compare) {
        List<String> impls = new ArrayList<>();
        for (Impl impl : compare) {
            if (impls.contains(impl.toString())) {
                throw new IllegalArgumentException("--compare names " + impl + " twice: " + compare);
            }
            impls.add(impl.toString());
        }
        return impls;
    }

    private static void requireHostPorts(String flag, List<String> hostPorts) {
        for (String h : hostPorts) {
            try {
                TcpLayout.parseHostPort(h);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(flag + " " + e.getMessage(), e);
            }
        }
    }

    private static void requireSize(String flag, String size) {
        if (!SIZE.matcher(size).matches()) {
            throw new IllegalArgumentException(flag + " is not a JVM heap size such as 512m or 2g: '" + size + "'");
        }
    }

    /**
     * The command that ran: this JVM's own command line when it was started for this command (java,
     * its flags, the jar as given), else (run in-process, as tests do) the jar and the arguments.
     */
    static String commandLine(Path jar, String[] args) {
        String given = String.join(" ", args);
        String jvm = ProcessHandle.current().info().commandLine().orElse("");
        if (jvm.contains(" -jar ") && jvm.endsWith(given)) {
            return jvm;
        }
        return "java -jar " + jar + (given.isEmpty() ? "" : " " + given);
    }

    /** This jar, or load-test/target/load-test.jar when running from classes (tests, an IDE). */
    static Path locateLoadTestJar() {
        try {
            Path self = Path.of(LoadTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isRegularFile(self) && self.getFileName().toString().endsWith(".jar")) {
                return self;
            }
            // load-test/connections/target/classes -> load-test/target/load-test.jar
            Path aggregator = self.getParent() == null ? null : self.getParent().getParent();
            Path built = aggregator == null || aggregator.getParent() == null ? null
                    : aggregator.getParent().resolve("target").resolve("load-test.jar");
            if (built != null && Files.isRegularFile(built)) {
                return built;
            }
        } catch (URISyntaxException | RuntimeException e) {
            // fall through to the working directory
        }
        Path cwd = Path.of("load-test", "target", "load-test.jar").toAbsolutePath();
        if (Files.isRegularFile(cwd)) {
            return cwd;
        }
        throw new IllegalArgumentException("load-test.jar not found (the child processes run from it): run "
                + "./mvnw -B package first, then java -jar load-test/target/load-test.jar");
    }

    private Path locateDemoServerJar(Path loadTestJar) {
        List<Path> tried = new ArrayList<>();
        if (demoServerJar != null) {
            if (Files.isRegularFile(demoServerJar)) {
                return demoServerJar.toAbsolutePath();
            }
            throw new IllegalArgumentException("--demo-server-jar " + demoServerJar + " is not a file");
        }
        Path module = loadTestJar.getParent() == null ? null : loadTestJar.getParent().getParent();
        if (module != null && module.getParent() != null) {
            tried.add(module.getParent().resolve("demo-server").resolve("target").resolve("demo-server.jar"));
        }
        tried.add(Path.of("demo-server", "target", "demo-server.jar").toAbsolutePath());
        for (Path p : tried) {
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        throw new IllegalArgumentException("demo-server.jar not found at " + tried + ": run ./mvnw -B package first "
                + "(or give --demo-server-jar)");
    }
}
