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
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.JitterMode;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

// Over 500 lines (listed in checkstyle.xml): the picocli command: its options, their one-line help, and the checks
// of the flags against each other (load-test/docs/roles.md has the roles' full meaning).
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
        usageHelpWidth = LoadTest.HELP_WIDTH,
        customSynopsis = "load-test [OPTION...]   (java -jar load-test/target/load-test.jar)",
        description = {
            "Opens N connections to the Heartbeat demo echo server with a mix of roles, runs them against each idle "
                    + "implementation in turn (--compare) and writes report.json, report.md and report.html into "
                    + "--out.",
            "Roles and what --check requires of the servers (full text: load-test/docs/roles.md):",
            "  active      sends a line at --active-rate; echo latency measured; must stay open",
            "  silent      never sends; must be closed (PING_TIMEOUT, or READER_IDLE with --policy close)",
            "  pong        answers the servers' pings (mqtt: PINGREQ); must stay open with --policy ping",
            "  dying       answers until a random moment, then silent; must be closed",
            "  trickle     line only: a byte every 3/4 of the close window; closed by the decoder past --max-line",
            "  pingflood   line only: --flood-lines PING lines a millisecond; must stay open and get PONGs",
            "  halfopen    line only: stops reading and writing, no FIN; must be closed for idleness",
            "  longline    line only: one line of --max-line + 1 bytes; closed by the decoder, not for idleness",
            "  junk        line only: random binary lines at --active-rate; must stay open, echoed",
            "  flooder     pings too often (the servers get --police-pings); must be closed for PING_ABUSE",
            "  aged        keeps alive as pong; servers get --max-age; reconnects on MAX_AGE, judged on its bounds",
            "  stalled     line, tcp: never reads, writes until unwritable; Heartbeat must close it for WRITE_STALL",
            "  slowreader  line, tcp: reads slowly but steadily; must never be closed",
            "Durations: 500ms, 30s, 2m. Sizes: 512m, 2g. A flag the chosen policy, protocol or mix would ignore is "
                    + "refused.",
            ""},
        footer = {"", "Smoke test (about 30 s, 2,000 connections in one JVM, Heartbeat and IdleStateHandler):",
            "  java -jar load-test/target/load-test.jar " + LoadTest.SMOKE_TEST_1 + " \\",
            "    " + LoadTest.SMOKE_TEST_2,
            "Exit status: 0 done (with --check: passed); 1 --check failed; 2 bad command line; 3 a run could not be "
                    + "completed."})
public final class LoadTest implements Callable<Integer> {

    /** The smoke test {@code --help} shows: small timeouts, so that a short run sees every close. */
    static final String SMOKE_TEST_1 = "--transport local --connections 2000 --ping-interval 3s";
    static final String SMOKE_TEST_2 = "--ping-timeout 2s --active-rate 2 --duration 10s --out reports/smoke";
    static final String SMOKE_TEST = SMOKE_TEST_1 + " " + SMOKE_TEST_2;

    /** The width of {@code --help}: each option's description fits on its line. */
    static final int HELP_WIDTH = 120;
    /** The widest option name and label of {@code --help} that keeps its description beside it. */
    private static final int HELP_OPTION_WIDTH = 36;

    /**
     * The sections of {@code --help}'s options, each a heading and its options' names in order. Every option
     * is in one ({@code LoadTestHelpTest}); {@link #groupedOptions} renders them.
     */
    static final String[][] OPTION_GROUPS = {
        {"Connections:", "--connections", "--transport", "--compare", "--connect-rate", "--churn-rate", "--seed",
            "--target", "--target-metrics"},
        {"Timeouts (the servers' idle policy and the run window):", "--policy", "--idle-timeout", "--ping-interval",
            "--ping-timeout", "--max-missed-pings", "--duration", "--tick"},
        {"Mix:", "--mix", "--active-rate", "--storm"},
        {"Protocol:", "--probe", "--max-line", "--flood-lines"},
        {"Lifecycle (Heartbeat's guards; each for the role or scenario it names):", "--write-stall", "--drain",
            "--max-age", "--max-age-jitter", "--max-age-jitter-mode", "--max-age-grace", "--action-budget"},
        {"Processes:", "--server-heap", "--client-heap", "--jvm-arg", "--server-threads", "--client-threads",
            "--max-connections-per-process", "--base-port", "--worker-host", "--hand-offs", "--demo-server-jar"},
        {"Output:", "--out", "--check", "--loop-lag", "--help", "--version"}};

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
            description = "Loopback sockets to demo-server processes, or in-JVM. Default: tcp.")
    Transport transport;

    @Option(names = "--compare", paramLabel = "IMPL", split = ",", defaultValue = "heartbeat,netty",
            description = "Run in turn: heartbeat, netty (IdleStateHandler), none. "
                    + "Default: all but none.")
    List<Impl> compare;

    @Option(names = "--probe", paramLabel = "PROTOCOL", defaultValue = "line",
            description = "line, websocket, http2 or mqtt (Keep Alive = --ping-interval). Default: ${DEFAULT-VALUE}.")
    ServerConfig.Protocol probe;

    @Option(names = "--mix", paramLabel = "ROLE=PCT,...", defaultValue = Mix.DEFAULT,
            description = {"Share of each role in percent, adding up to 100.", "Default: ${DEFAULT-VALUE}."})
    String mix;

    @Option(names = "--policy", paramLabel = "close|ping", defaultValue = "ping",
            description = "Close after --idle-timeout, or ping (mqtt: clients ping). "
                    + "Default: ${DEFAULT-VALUE}.")
    Scenario.Policy policy;

    @Option(names = "--idle-timeout", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "40s",
            description = "--policy close: reader idle timeout. Default: ${DEFAULT-VALUE}.")
    Duration idleTimeout;

    @Option(names = "--ping-interval", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "40s",
            description = "--policy ping: silence before a PING (past the connect phase). Default: ${DEFAULT-VALUE}.")
    Duration pingInterval;

    @Option(names = "--ping-timeout", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "5s",
            description = "--policy ping, not mqtt: how long each PING waits. Default: ${DEFAULT-VALUE}.")
    Duration pingTimeout;

    @Option(names = "--max-missed-pings", paramLabel = "N", defaultValue = "2",
            description = "--policy ping, not mqtt: unanswered PINGs before the close. Default: ${DEFAULT-VALUE}.")
    int maxMissedPings;

    @Option(names = "--duration", paramLabel = "DURATION",
            converter = DurationConverter.class, defaultValue = "100s",
            description = "The measured run: the close window, a grace and more. "
                    + "Default: ${DEFAULT-VALUE}.")
    Duration duration;

    @Option(names = "--active-rate", paramLabel = "LINES_PER_S", defaultValue = "0.2",
            description = "Lines per second of each active (and junk) connection. Default: ${DEFAULT-VALUE}.")
    double activeRate;

    @Option(names = "--max-line", paramLabel = "BYTES", defaultValue = "" + ServerConfig.DEFAULT_MAX_LINE,
            description = "The servers' longest line (trickle, longline), at least " + Scenario.MIN_MAX_LINE
                    + ". Default: ${DEFAULT-VALUE}.")
    int maxLine;

    @Option(names = "--flood-lines", paramLabel = "N", defaultValue = "1",
            description = "With pingflood in --mix: PING lines a millisecond (1 to " + Scenario.MAX_FLOOD_LINES
                    + "). Default: ${DEFAULT-VALUE}.")
    int floodLines;

    @Option(names = "--write-stall", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With stalled or slowreader: the servers'. Default: a quarter of the window.")
    Duration writeStall;

    @Option(names = "--drain", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "POST /drain?window=DURATION late in the run (Heartbeat only).")
    Duration drain;

    @Option(names = "--churn-rate", paramLabel = "PER_S", defaultValue = "0",
            description = "Soak: connections closed and reopened a second. Default: 0 (off).")
    double churnRate;

    @Option(names = "--connect-rate", paramLabel = "PER_S",
            description = "Connects a second. Default: 5000 (tcp), 50000 (local), all (--storm).")
    Double connectRate;

    @Option(names = "--max-age", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With aged in --mix: the servers' --max-age. Default: --duration / "
                    + Scenario.DEFAULT_AGES_PER_WINDOW + ".")
    Duration maxAge;

    @Option(names = "--max-age-jitter", paramLabel = "FRACTION",
            description = "With aged in --mix: the servers' --max-age-jitter, in [0, 1). Default: "
                    + Scenario.DEFAULT_AGE_JITTER + ".")
    Double maxAgeJitter;

    @Option(names = "--max-age-jitter-mode", paramLabel = "MODE", defaultValue = "symmetric",
            description = "With aged in --mix: symmetric, down_only or up_only. Default: ${DEFAULT-VALUE}.")
    JitterMode maxAgeJitterMode;

    @Option(names = "--max-age-grace", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With aged in --mix: the servers' --max-age-grace. Default: --max-age / "
                    + Scenario.DEFAULT_GRACE_DIVISOR + ".")
    Duration maxAgeGrace;

    @Option(names = "--storm",
            description = "Every connection silent, all opened within a second, due together.")
    boolean storm;

    @Option(names = "--action-budget", paramLabel = "N", defaultValue = "0",
            description = "Heartbeat servers' actions a second, over them all. Default: 0 (none).")
    int actionBudget;

    @Option(names = "--server-heap", paramLabel = "SIZE",
            description = "-Xmx of each server, or of the local JVM. Default: 512m; local 1g + 8k/conn.")
    String serverHeap;

    @Option(names = "--client-heap", paramLabel = "SIZE", defaultValue = "512m",
            description = "--transport tcp: -Xmx of each client process. Default: ${DEFAULT-VALUE}.")
    String clientHeap;

    @Option(names = "--jvm-arg", paramLabel = "ARG",
            description = "Extra flag for every child JVM, repeatable, e.g. --jvm-arg=-XX:+UseParallelGC.")
    List<String> jvmArgs = new ArrayList<>();

    @Option(names = "--server-threads", paramLabel = "N",
            description = "Event loops of each server. Default: the ${sys:loadtest.cores} cores shared out, "
                    + "at least 1.")
    Integer serverThreads;

    @Option(names = "--client-threads", paramLabel = "N", defaultValue = "1",
            description = "Event loops of each client process, or of the local client. Default: ${DEFAULT-VALUE}.")
    int clientThreads;

    @Option(names = "--max-connections-per-process", paramLabel = "N",
            description = "--transport tcp: per server and client process. Default: ${sys:loadtest.perProcess} here.")
    Integer maxPerProcess;

    @Option(names = "--base-port", paramLabel = "PORT", defaultValue = "20000",
            description = "--transport tcp: first echo port; " + TcpLayout.PORTS_PER_RUN
                    + " per impl. Default: ${DEFAULT-VALUE}.")
    int basePort;

    @Option(names = "--tick", paramLabel = "DURATION",
            converter = DurationConverter.class,
            description = "Heartbeat servers' wheel tick. Default: the library's (2^20 ns, about 1ms).")
    Duration tick;

    @Option(names = "--worker-host", paramLabel = "loop|thread", defaultValue = "loop",
            description = "Heartbeat servers' worker: on an event loop, or its own thread. Default: ${DEFAULT-VALUE}.")
    ServerConfig.WorkerHost workerHost;

    @Option(names = "--hand-offs", paramLabel = "lazy|eager", defaultValue = "eager",
            description = "Heartbeat servers' hand-offs: lazy (no wake-up) or eager. Default: ${DEFAULT-VALUE}.")
    HandOffs handOffs;

    /** {@code --hand-offs}. */
    enum HandOffs {
        LAZY, EAGER
    }

    @Option(names = "--target", paramLabel = "HOST:PORT", split = ",",
            description = "tcp, one impl: running demo servers to use (give their timeouts too).")
    List<String> target = new ArrayList<>();

    @Option(names = "--target-metrics", paramLabel = "HOST:PORT", split = ",",
            description = "With --target: their HTTP endpoints, for heap, CPU and --drain.")
    List<String> targetMetrics = new ArrayList<>();

    @Option(names = "--seed", paramLabel = "N", defaultValue = "1",
            description = "Seed of the role shuffle, send phases and moments of death. Default: ${DEFAULT-VALUE}.")
    long seed;

    @Option(names = "--loop-lag", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Servers' event-loop lag, probed every DURATION, in the report. Default: off.")
    Duration loopLag;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Where the reports and logs go. Default: reports/load-test-<date>-<time>.")
    Path out;

    @Option(names = "--check",
            description = "Exit 1 unless every close came as the roles require: for CI.")
    boolean check;

    @Option(names = "--demo-server-jar", paramLabel = "PATH",
            description = "--transport tcp: the demo server's jar. Default: the build's.")
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
        cmd.getCommandSpec().usageMessage().longOptionsMaxWidth(HELP_OPTION_WIDTH);
        cmd.getHelpSectionMap().put(CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST,
                LoadTest::groupedOptions);
        return cmd;
    }

    /**
     * The options of {@code --help}, under the headings of {@link #OPTION_GROUPS}, one line each; an option
     * in no group would be listed last, under "Other:".
     */
    static String groupedOptions(CommandLine.Help help) {
        StringBuilder s = new StringBuilder();
        List<String> listed = new ArrayList<>();
        for (String[] group : OPTION_GROUPS) {
            List<CommandLine.Model.OptionSpec> options = new ArrayList<>();
            for (int i = 1; i < group.length; i++) {
                CommandLine.Model.OptionSpec o = help.commandSpec().findOption(group[i]);
                if (o != null) {
                    options.add(o);
                    listed.add(o.longestName());
                }
            }
            s.append(optionList(help, group[0], options));
        }
        List<CommandLine.Model.OptionSpec> other = new ArrayList<>();
        for (CommandLine.Model.OptionSpec o : help.commandSpec().options()) {
            if (!listed.contains(o.longestName())) {
                other.add(o);
            }
        }
        return other.isEmpty() ? s.toString() : s.append(optionList(help, "Other:", other)).toString();
    }

    private static String optionList(CommandLine.Help help, String heading, List<CommandLine.Model.OptionSpec> opts) {
        CommandLine.Help.Layout layout = help.createDefaultLayout();
        for (CommandLine.Model.OptionSpec o : opts) {
            layout.addOption(o, help.parameterLabelRenderer());
        }
        return heading + System.lineSeparator() + layout;
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
        boolean mixGiven = given("--mix");
        requireEveryFlagCounts();
        if (loopLag != null && (loopLag.isZero() || loopLag.isNegative())) {
            throw new IllegalArgumentException("--loop-lag must be a positive duration: "
                    + DurationConverter.format(loopLag));
        }
        if (tick != null) {
            // the scenario's tick 0 is the library's default: a given one is the library's to judge
            LibraryChecks.as("--tick", () -> HeartbeatMonitor.builder().tick(tick));
        }
        Scenario.Builder b = Scenario.builder()
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
                .loopLagNanos(loopLag == null ? 0 : loopLag.toNanos())
                .maxLine(maxLine)
                .floodLines(floodLines)
                .churnPerSecond(churnRate)
                .protocol(probe)
                .maxAgeNanos(maxAge == null ? 0 : maxAge.toNanos())
                .maxAgeJitterMode(maxAgeJitterMode)
                .maxAgeGraceNanos(maxAgeGrace == null ? -1 : maxAgeGrace.toNanos())
                .storm(storm)
                .actionBudget(actionBudget)
                .writeStallNanos(writeStall == null ? 0 : writeStall.toNanos())
                .drainNanos(drain == null ? 0 : drain.toNanos());
        if (maxAgeJitter != null) {
            b.maxAgeJitter(maxAgeJitter);
        }
        return b.build();
    }

    /** Whether the command line gave {@code flag} (not just its default). */
    private boolean given(String flag) {
        return spec != null && spec.commandLine().getParseResult() != null
                && spec.commandLine().getParseResult().hasMatchedOption(flag);
    }

    /**
     * Refuses a flag that the chosen policy, protocol, transport, implementations or mix would ignore, naming
     * it and the flag that would make it count.
     */
    private void requireEveryFlagCounts() {
        boolean mqtt = probe == ServerConfig.Protocol.MQTT;
        if (mqtt) {
            refuse("--probe mqtt servers close after 1.5 x the clients' Keep Alive (--ping-interval)",
                    "give --probe line, websocket or http2", "--ping-timeout", "--max-missed-pings", "--idle-timeout");
        } else if (policy == Scenario.Policy.CLOSE) {
            refuse("--policy close sends no pings", "give --policy ping", "--ping-interval", "--ping-timeout",
                    "--max-missed-pings");
        } else {
            refuse("--policy ping closes after --ping-interval + --max-missed-pings x --ping-timeout",
                    "give --policy close", "--idle-timeout");
        }
        if (transport == Transport.LOCAL) {
            refuse("--transport local runs one JVM, without sockets", "give --transport tcp", "--client-heap",
                    "--max-connections-per-process", "--base-port", "--demo-server-jar");
        }
        if (!compare.contains(Impl.HEARTBEAT)) {
            refuse("it is Heartbeat's, and --compare " + compare + " has no heartbeat", "give --compare heartbeat",
                    "--tick", "--worker-host", "--hand-offs");
        }
        if (!mix.contains(Role.PINGFLOOD.toString())) {
            refuse("only pingflood connections send PING lines that fast", "give --mix with pingflood=N",
                    "--flood-lines");
        }
        if (target.isEmpty()) {
            refuse("it names the endpoints of --target servers", "give --target", "--target-metrics");
        } else {
            refuse("--target servers run with the flags they were started with (their lag is read if they have it)",
                    "start them with --loop-lag", "--loop-lag");
        }
    }

    /**
     * Refuses the first of {@code flags} given: "--flag VALUE would do nothing: why; fix, or leave --flag
     * out".
     */
    private void refuse(String why, String fix, String... flags) {
        for (String flag : flags) {
            if (given(flag)) {
                List<String> values = spec.commandLine().getParseResult().matchedOption(flag).originalStringValues();
                String value = values.isEmpty() ? "" : " " + values.get(values.size() - 1);
                throw new IllegalArgumentException(flag + value + " would do nothing: " + why + "; " + fix
                        + ", or leave " + flag + " out");
            }
        }
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
        progress.println(new ReportVerdicts(report).text());
        for (String t : report.transports()) {
            progress.println(report.textTable(t));
        }
        List<String> failures = report.checkFailures();
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
