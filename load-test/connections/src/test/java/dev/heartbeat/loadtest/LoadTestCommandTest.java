/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.heartbeat.core.TimingWheel;
import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class LoadTestCommandTest {

    /** Runs the command line; returns {status, stdout, stderr}. */
    private static String[] execute(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = LoadTest.commandLine();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int status = cmd.execute(args);
        return new String[] {Integer.toString(status), out.toString(), err.toString()};
    }

    private static void assertRefused(String expected, String... args) {
        String[] r = execute(args);
        assertEquals("2", r[0], "status for " + String.join(" ", args) + ": " + r[2]);
        assertTrue(r[2].contains(expected), "expected '" + expected + "' in: " + r[2]);
        assertTrue(r[2].contains("Try 'load-test --help'"), r[2]);
    }

    /** {@code --help} is short: every option on a line of its own, grouped; each role one line. */
    @Test
    void helpIsUnder80LinesAndListsEveryOptionAndRole() {
        String[] r = execute("--help");
        assertEquals("0", r[0]);
        List<String> lines = r[1].lines().collect(Collectors.toList());
        assertTrue(lines.size() <= 80, "--help has " + lines.size() + " lines:\n" + r[1]);
        for (String l : lines) {
            assertTrue(l.length() <= LoadTest.HELP_WIDTH, "over " + LoadTest.HELP_WIDTH + " columns: " + l);
        }
        for (CommandLine.Model.OptionSpec o : LoadTest.commandLine().getCommandSpec().options()) {
            assertTrue(lines.stream().anyMatch(l -> l.trim().startsWith(o.longestName() + "=")
                    || l.trim().startsWith(o.longestName() + " ") || l.trim().equals(o.longestName())
                    || l.trim().contains(", " + o.longestName())), o.longestName() + " listed in:\n" + r[1]);
        }
        assertFalse(r[1].contains("Other:"), "every option is in a group of LoadTest.OPTION_GROUPS");
        for (String heading : new String[] {"Connections:", "Timeouts", "Mix:", "Protocol:", "Lifecycle", "Output:"}) {
            assertTrue(lines.stream().anyMatch(l -> l.startsWith(heading)), heading);
        }
        for (Role role : Role.values()) {
            assertTrue(lines.stream().anyMatch(l -> l.startsWith("  " + role + " ")), role + " on a line of its own");
        }
        assertFalse(r[1].matches("(?s).*issue \\d+.*"), "no issue numbers in --help");
    }

    /** The roles' full meaning, which --help no longer holds, is in load-test/docs/roles.md. */
    @Test
    void theRolesFullMeaningIsInTheDocs() throws IOException {
        String doc = Files.readString(Path.of("../docs/roles.md"), StandardCharsets.UTF_8);
        for (Role role : Role.values()) {
            assertTrue(doc.contains("**" + role + "**") || doc.contains("## " + role), role.toString());
        }
        for (String word : new String[] {"PINGREQ", "GOAWAY", "--police-pings", "PING_ABUSE", "ENHANCE_YOUR_CALM",
            "too_many_pings", "MAX_AGE", "--storm", "--action-budget", "WRITE_STALL", "--drain", "DRAIN",
            "premature", "Lateness", "--churn-rate"}) {
            assertTrue(doc.contains(word), word);
        }
    }

    @Test
    void badValuesFailNamingTheValue() {
        assertRefused("--connections must be at least 1: 0", "--connections", "0");
        assertRefused("Invalid value for option '--transport': expected one of [TCP, LOCAL] (case-insensitive) but "
                + "was 'udp'", "--transport", "udp");
        assertRefused("Invalid value for option '--compare' (IMPL): expected one of [HEARTBEAT, NETTY, NONE]",
                "--compare", "heartbeat,idle");
        assertRefused("--compare names netty twice", "--compare", "netty,netty");
        assertRefused("Invalid value for option '--policy': expected one of [CLOSE, PING]", "--policy", "sometimes");
        assertRefused("--mix shares must add up to 100, not 110", "--mix", "silent=60,pong=50");
        assertRefused("Invalid value for option '--ping-interval': '5' ", "--ping-interval", "5");
        assertRefused("--server-heap is not a JVM heap size such as 512m or 2g: '12x'", "--server-heap", "12x");
        assertRefused("--active-rate must be a positive number of lines per second: -1.0", "--active-rate", "-1");
        assertRefused("--active-rate must be at most 1000 lines per second: 1.0E14", "--active-rate", "1e14");
        assertRefused("--connect-rate must be a positive number per second: 0.0", "--connect-rate", "0");
        assertRefused("--target needs --transport tcp", "--transport", "local", "--target", "127.0.0.1:7000",
                "--compare", "heartbeat");
        assertRefused("--target servers run one implementation", "--target", "127.0.0.1:7000");
        assertRefused("--target '127.0.0.1' is not host:port", "--target", "127.0.0.1", "--compare", "netty");
        assertRefused("--base-port 32700 leaves no room", "--base-port", "32700");
        assertRefused("--max-connections-per-process must be in 1-", "--max-connections-per-process", "0");
        assertRefused("--duration 20s is too short", "--duration", "20s");
        assertRefused("give --duration 63.5s or more, or a close window of at most 7s for this duration, e.g. "
                + "--ping-interval 3s --ping-timeout 2s", "--connections", "1000", "--duration", "10s");
        assertRefused("give an --active-rate above 0.333/s or a --ping-interval above 5s", "--active-rate", "0.2",
                "--ping-interval", "3s", "--ping-timeout", "1s", "--duration", "20s");
        assertRefused("--duration 30s is too short", "--policy", "close", "--duration", "30s");
        assertRefused("Unknown option: '--bogus'", "--bogus");
        assertRefused("Invalid value for option '--probe': expected one of [LINE, WEBSOCKET, HTTP2, MQTT]", "--probe",
                "grpc");
        assertRefused("--mix trickle=50: the edge role trickle speaks the line protocol (raw bytes and lines), not "
                + "--probe websocket", "--probe", "websocket", "--mix", "silent=50,trickle=50");
        assertRefused("give --policy ping, not --policy close", "--probe", "mqtt", "--policy", "close");
        assertRefused("--probe mqtt: --ping-interval is the Keep Alive the clients announce in CONNECT, whole seconds "
                + "from 1s to 65535s: 2.5s", "--probe", "mqtt", "--ping-interval", "2500ms");
        assertRefused("(--probe mqtt: 1.5 x --ping-interval 40s = 1m)", "--probe", "mqtt", "--duration", "40s");
        assertRefused("--mix pingflood=25 with flooder=25: with flooders the servers police peer pings",
                "--mix", "silent=50,pingflood=25,flooder=25");
        assertRefused("--mix stalled=10 needs --transport tcp: a stalled connection backs the server's echoes up "
                + "into socket buffers", "--transport", "local", "--mix", "silent=90,stalled=10");
        assertRefused("--drain 4s is Heartbeat's (POST /drain answers 409 under other idle impls): give --compare "
                + "heartbeat, not heartbeat,netty", "--drain", "4s", "--duration", "100s");
        assertRefused("--drain 4s is Heartbeat's", "--drain", "4s", "--compare", "none");
        assertRefused("--drain with --mix aged=N: a drained connection's end would be judged two ways", "--drain", "4s",
                "--compare", "heartbeat", "--mix", "silent=50,aged=50", "--duration", "100s");
        assertRefused("--drain with --storm", "--drain", "4s", "--compare", "heartbeat", "--storm",
                "--duration", "100s");
        assertRefused("--mix with both stalled and aged", "--compare", "heartbeat", "--mix",
                "silent=50,aged=40,stalled=10", "--duration", "100s");
        assertRefused("--mix slowreader=10 needs --transport tcp: a slowreader connection backs the server's echoes "
                + "up into socket buffers", "--transport", "local", "--mix", "silent=90,slowreader=10");
        assertRefused("--mix with both slowreader and aged: a slowreader connection reads its echoes far behind",
                "--compare", "heartbeat", "--mix", "silent=50,aged=40,slowreader=10", "--duration", "100s");
        assertRefused("--drain with --mix slowreader=10: a slowreader connection reads its echoes far behind",
                "--drain", "4s", "--compare", "heartbeat", "--mix", "silent=90,slowreader=10", "--duration", "100s");
        assertRefused("--mix slowreader=10: the edge role slowreader speaks the line protocol (raw bytes and lines), "
                + "not --probe http2", "--probe", "http2", "--mix", "silent=90,slowreader=10");
        assertRefused("--drain with --target needs --target-metrics", "--drain", "4s", "--compare", "heartbeat",
                "--target", "127.0.0.1:7000");
    }

    /**
     * The library judges its own settings (LibraryChecks builds its objects from the flags); its message is
     * reported under the flag that gave the value, not restated by the load test.
     */
    @Test
    void theLibrarysOwnErrorsAreReportedUnderTheFlagNames() {
        String local = "--transport local --connections 2000 --duration 10s ";
        String ping = local + "--active-rate 2 ";
        assertRefused("--ping-interval: interval must be at least 1ms: PT0.0005S",
                (ping + "--ping-interval 500us --ping-timeout 2s").split(" "));
        assertRefused("--ping-interval: interval must be positive: PT0S",
                (ping + "--ping-interval 0s --ping-timeout 2s").split(" "));
        assertRefused("--ping-timeout: timeout must be positive: PT0S",
                (ping + "--ping-interval 3s --ping-timeout 0s").split(" "));
        assertRefused("--max-missed-pings: maxMissedPings must be in [1, 10000]: 0",
                (ping + "--ping-interval 3s --ping-timeout 2s --max-missed-pings 0").split(" "));
        assertRefused("--max-missed-pings: maxMissedPings must be in [1, 10000]: 10001",
                (ping + "--ping-interval 3s --ping-timeout 2s --max-missed-pings 10001").split(" "));
        String close = local + "--mix silent=100 --policy close ";
        assertRefused("--idle-timeout: readerIdle must be 0 (disabled) or at least 1ms: PT0.0005S",
                (close + "--idle-timeout 500us").split(" "));
        assertRefused("--idle-timeout 0s: policy ", (close + "--idle-timeout 0s").split(" "));
        assertRefused("needs a timeout: set readerIdle", (close + "--idle-timeout 0s").split(" "));
        String smoke = LoadTest.SMOKE_TEST + " --compare heartbeat ";
        assertRefused("--tick: tick must be in [1ns, 1073741824ns]: PT2S", (smoke + "--tick 2s").split(" "));
        assertRefused("--tick: tick must be in [1ns, 1073741824ns]: PT0S", (smoke + "--tick 0s").split(" "));
        assertRefused("--action-budget: actionBudget must be 0 (off) or in [1, 100000000] a second: -1",
                (smoke + "--action-budget -1").split(" "));
        assertRefused("--action-budget: actionBudget must be 0 (off) or in [1, 100000000] a second: 100000001",
                (smoke + "--action-budget 100000001").split(" "));
        String aged = "--transport local --connections 2000 --ping-interval 1s --ping-timeout 500ms --compare "
                + "heartbeat --duration 12s --mix silent=20,pong=60,aged=20 ";
        assertRefused("--max-age: maxAge must be 0 (disabled) or at least 1ms: PT0.0005S",
                (aged + "--max-age 500us").split(" "));
        assertRefused("--max-age-jitter: maxAgeJitter must be in [0, 1): 1.5",
                (aged + "--max-age 3s --max-age-jitter 1.5").split(" "));
        assertRefused("--max-age-jitter: maxAgeJitter must be in [0, 1): -0.5",
                (aged + "--max-age 3s --max-age-jitter -0.5").split(" "));
        assertRefused("--max-age-jitter: maxAgeJitter must be in [0, 1): NaN",
                (aged + "--max-age 3s --max-age-jitter NaN").split(" "));
        assertRefused("--max-age-grace: maxAgeGrace must be 0 (disabled) or at least 1ms: PT0.0005S",
                (aged + "--max-age 3s --max-age-grace 500us").split(" "));
        String stalled = "--connections 2000 --ping-interval 3s --ping-timeout 2s --duration 20s --compare heartbeat "
                + "--mix silent=90,stalled=10 ";
        assertRefused("--write-stall: writeStall must be 0 (disabled) or at least 1ms: PT0.0005S",
                (stalled + "--write-stall 500us").split(" "));
        assertRefused("--write-stall (not given: a quarter of --idle-timeout 2ms): writeStall must be 0 (disabled) or "
                + "at least 1ms: PT0.0005S", ("--connections 2000 --compare heartbeat --mix silent=90,stalled=10 "
                + "--duration 10s --policy close --idle-timeout 2ms").split(" "));
    }

    /** The same through the scenario's builder, which the child processes use (its JSON hand-over). */
    @Test
    void theScenarioBuilderReportsTheLibrarysErrorsUnderTheFlagNames() {
        assertScenarioRefused("--ping-interval: interval must be at least 1ms: PT0.000999999S",
                Scenario.builder().pingIntervalNanos(999_999));
        assertScenarioRefused("--ping-timeout: timeout must be at least 1ms: PT0.000999999S",
                Scenario.builder().pingTimeoutNanos(999_999));
        assertScenarioRefused("--tick: tick must be in [1ns, 1073741824ns]: PT-0.000000001S",
                Scenario.builder().tickNanos(-1));
        assertScenarioRefused("--write-stall: writeStall cannot be negative: PT-1S",
                Scenario.builder().mix(Mix.parse("silent=90,stalled=10")).writeStallNanos(-1_000_000_000L));
        assertScenarioRefused("--max-age-jitter: maxAgeJitter must be in [0, 1): 1.0", Scenario.builder()
                .mix(Mix.parse("silent=20,pong=60,aged=20")).maxAgeJitter(1.0));
        assertScenarioRefused("--probe mqtt: --ping-interval is the Keep Alive the clients announce in CONNECT, whole "
                + "seconds from 1s to 65535s: 0s", Scenario.builder().protocol(ServerConfig.Protocol.MQTT)
                .pingIntervalNanos(0));
        // what the scenario's JSON carries after the defaults were filled in builds again
        Scenario s = Scenario.builder().connections(2000).mix(Mix.parse("silent=20,pong=60,aged=20")).build();
        assertEquals(Scenario.DEFAULT_AGE_JITTER, s.maxAgeJitter);
        assertEquals(s.settings(), s.settings().scenario().settings());
        assertEquals(TimingWheel.DEFAULT_TICK_NANOS, s.effectiveTickNanos(), "the library's default tick");
    }

    private static void assertScenarioRefused(String expected, Scenario.Builder b) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().startsWith(expected), "expected '" + expected + "' at the start of: "
                + e.getMessage());
    }

    @Test
    void loopLagIsAPositiveDurationPassedToEveryServer() {
        assertRefused("--loop-lag must be a positive duration: 0s", "--loop-lag", "0s");
        assertRefused("Invalid value for option '--loop-lag': '-1ms' is not a duration", "--loop-lag", "-1ms");
        assertRefused("--loop-lag 1ms would do nothing", "--target", "127.0.0.1:7000", "--compare", "heartbeat",
                "--loop-lag", "1ms");
        CommandLine cmd = LoadTest.commandLine();
        cmd.parseArgs((LoadTest.SMOKE_TEST + " --loop-lag 1ms").split(" "));
        Scenario s = ((LoadTest) cmd.getCommand()).scenario();
        assertEquals(TimeUnit.MILLISECONDS.toNanos(1), s.loopLagNanos);
        for (String impl : List.of(Scenario.HEARTBEAT, Scenario.NETTY, Scenario.NONE)) {
            assertTrue(String.join(" ", s.serverFlags(impl, 1)).contains("--loop-lag 1000000ns"), impl);
        }
        assertEquals(s.settings(), s.settings().scenario().settings(), "the period survives the JSON hand-over");
        assertEquals(Duration.ofMillis(1), LocalWorker.serverConfig(s, Scenario.NETTY, 1).loopLag());
        cmd = LoadTest.commandLine();
        cmd.parseArgs(LoadTest.SMOKE_TEST.split(" "));
        Scenario off = ((LoadTest) cmd.getCommand()).scenario();
        assertFalse(String.join(" ", off.serverFlags(Scenario.HEARTBEAT, 1)).contains("--loop-lag"), "off by default");
        assertNull(LocalWorker.serverConfig(off, Scenario.HEARTBEAT, 1).loopLag());
    }

    @Test
    void theProbeGoesToTheServersAndMqttClosesAfterOneAndAHalfKeepAlives() {
        CommandLine cmd = LoadTest.commandLine();
        cmd.parseArgs((LoadTest.SMOKE_TEST + " --probe WebSocket").split(" "));
        Scenario ws = ((LoadTest) cmd.getCommand()).scenario();
        assertEquals(ServerConfig.Protocol.WEBSOCKET, ws.protocol);
        assertEquals(TimeUnit.SECONDS.toNanos(7), ws.closeWindowNanos(), "3 s + 2 x 2 s, as with lines");
        assertEquals(CloseReason.PING_TIMEOUT, ws.expectedGoodbye());
        assertTrue(String.join(" ", ws.serverFlags()).startsWith("--probe websocket --policy ping "),
                String.join(" ", ws.serverFlags()));
        assertEquals(ws.settings(), ws.settings().scenario().settings(), "the probe survives the JSON hand-over");

        cmd = LoadTest.commandLine();
        cmd.parseArgs((LoadTest.SMOKE_TEST.replace(" --ping-timeout 2s", "") + " --probe mqtt").split(" "));
        Scenario mqtt = ((LoadTest) cmd.getCommand()).scenario();
        assertEquals(3, mqtt.mqttKeepAliveSeconds());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(4500), mqtt.closeWindowNanos());
        assertNull(mqtt.expectedGoodbye(), "MQTT 3.1.1 has no server goodbye");
        assertEquals(CloseReason.READER_IDLE, mqtt.idleCloseReason());
        assertTrue(mqtt.sendsKeepAlives(Role.PONG) && mqtt.sendsKeepAlives(Role.DYING));
        assertFalse(mqtt.sendsKeepAlives(Role.SILENT) || mqtt.sendsKeepAlives(Role.ACTIVE));
        assertFalse(mqtt.expectsClose(Scenario.HEARTBEAT, Role.PONG), "PINGREQ keeps it");
        assertTrue(mqtt.expectsClose(Scenario.HEARTBEAT, Role.SILENT));
        assertTrue(String.join(" ", mqtt.serverFlags()).startsWith("--probe mqtt --policy close --idle-timeout "
                + TimeUnit.MILLISECONDS.toNanos(4500) + "ns "), "the CONNECT deadline: the close window");
    }

    @Test
    void floodersWorkWithEveryProbeAndMakeTheServersPolicePings() {
        for (String probe : new String[] {"line", "websocket", "http2", "mqtt"}) {
            CommandLine cmd = LoadTest.commandLine();
            String smoke = probe.equals("mqtt") ? LoadTest.SMOKE_TEST.replace(" --ping-timeout 2s", "")
                    : LoadTest.SMOKE_TEST;
            cmd.parseArgs((smoke + " --probe " + probe + " --mix silent=20,active=20,pong=40,dying=10,"
                    + "flooder=10").split(" "));
            Scenario s = ((LoadTest) cmd.getCommand()).scenario();
            assertEquals(10, s.mix.percent(Role.FLOODER), probe);
            assertTrue(String.join(" ", s.serverFlags()).contains("--police-pings --peer-ping-min-interval "
                    + TimeUnit.MILLISECONDS.toNanos(500) + "ns"), String.join(" ", s.serverFlags()));
        }
    }

    @Test
    void agedConnectionsNeedHeartbeatAndGiveTheServersTheirAge() {
        assertRefused("--mix aged=20 needs servers that close connections at a maximum age, which only Heartbeat "
                + "has", "--transport", "local", "--mix", "silent=20,active=20,pong=40,aged=20", "--duration", "100s");
        CommandLine cmd = LoadTest.commandLine();
        cmd.parseArgs(("--transport local --connections 2000 --ping-interval 1s --ping-timeout 500ms "
                + "--compare heartbeat --duration 12s --mix silent=20,pong=60,aged=20 --max-age 3s "
                + "--max-age-jitter 0.1 --max-age-jitter-mode up_only --max-age-grace 200ms").split(" "));
        LoadTest lt = (LoadTest) cmd.getCommand();
        Scenario s = lt.scenario();
        assertEquals(TimeUnit.SECONDS.toNanos(3), s.minAgeNanos(), "up_only: never shorter than the age");
        assertTrue(String.join(" ", s.serverFlags()).contains("--max-age 3000000000ns --max-age-jitter 0.1 "
                + "--max-age-jitter-mode up_only --max-age-grace 200000000ns"), String.join(" ", s.serverFlags()));
    }

    @Test
    void theStormMakesEveryConnectionSilentAndItsBudgetIsHeartbeats() {
        CommandLine cmd = LoadTest.commandLine();
        cmd.parseArgs("--transport", "local", "--storm", "--connections", "20000", "--compare", "heartbeat",
                "--policy", "close", "--idle-timeout", "2s", "--action-budget", "5000", "--duration", "12s");
        LoadTest lt = (LoadTest) cmd.getCommand();
        Scenario s = lt.scenario();
        assertEquals(100, s.mix.percent(Role.SILENT));
        assertEquals(20_000, lt.connectRate(s), 0, "all within a second"); // (plan() needs the built jar)
        assertRefused("--action-budget 5000 is Heartbeat's storm control", "--transport", "local", "--storm",
                "--connections", "20000", "--policy", "close", "--idle-timeout", "2s", "--action-budget", "5000",
                "--duration", "12s");
        assertRefused("give --duration 9s or more, or a larger --action-budget", "--transport", "local", "--storm",
                "--connections", "20000", "--compare", "heartbeat", "--policy", "close", "--idle-timeout", "2s",
                "--action-budget", "5000", "--duration", "8s");
        assertRefused("--storm: every connection is silent", "--transport", "local", "--storm", "--mix",
                "silent=50,pong=50", "--compare", "heartbeat");
    }

    /** The argument lists .ci/run gives the load test: each parses and makes its scenario. */
    @Test
    void theCiRunsCommandsAreAccepted() throws IOException {
        String ci = Files.readString(Path.of("../../.ci/run"), StandardCharsets.UTF_8).replace("\\\n", " ")
                .replace("\"target/ci-reports/local-$probe\"", "target/ci-reports/x").replace("\"$probe\"", "PROBE")
                .replace("$timeouts", "TIMEOUTS");
        Matcher m = Pattern.compile("java -jar load-test/target/load-test.jar ([^\\n]*)").matcher(ci);
        int found = 0;
        while (m.find()) {
            for (String probe : new String[] {"websocket", "http2", "mqtt"}) {
                String args = m.group(1).trim().replaceAll("\\s+", " ").replace("PROBE", probe)
                        .replace("TIMEOUTS", probe.equals("mqtt") ? "" : "--ping-timeout 2s --max-missed-pings 2")
                        .replaceAll("\\s+", " ");
                CommandLine cmd = LoadTest.commandLine();
                cmd.parseArgs(args.split(" "));
                Scenario s = ((LoadTest) cmd.getCommand()).scenario();
                assertTrue(s.connections >= 2000, args);
            }
            found++;
        }
        assertEquals(4, found, "the load tests of .ci/run");
    }

    /** A flag the chosen policy, protocol, transport, impls or mix would ignore is refused, naming what would count. */
    @Test
    void flagsThatWouldDoNothingAreRefused() {
        assertRefused("--ping-timeout 2s would do nothing: --policy close sends no pings; give --policy ping",
                "--policy", "close", "--ping-timeout", "2s");
        assertRefused("--idle-timeout 5s would do nothing: --policy ping closes after", "--idle-timeout", "5s");
        assertRefused("--max-missed-pings 2 would do nothing: --probe mqtt servers close after 1.5 x", "--probe",
                "mqtt", "--max-missed-pings", "2");
        assertRefused("--base-port 21000 would do nothing: --transport local runs one JVM", "--transport", "local",
                "--base-port", "21000");
        assertRefused("--tick 2ms would do nothing: it is Heartbeat's", "--compare", "netty", "--tick", "2ms");
        assertRefused("--flood-lines 5 would do nothing: only pingflood connections", "--flood-lines", "5");
        assertRefused("--target-metrics 127.0.0.1:9100 would do nothing", "--target-metrics", "127.0.0.1:9100");
    }

    /** Each scenario's server flags are only the ones that count for the impl (the demo server refuses others). */
    @Test
    void theServersAreGivenOnlyTheFlagsThatCount() {
        Scenario ping = Scenario.builder().connections(2000).build();
        String hb = String.join(" ", ping.serverFlags(Scenario.HEARTBEAT, 1));
        assertFalse(hb.contains("--idle-timeout"), hb);
        assertTrue(hb.contains("--ping-interval") && hb.contains("--hand-offs"), hb);
        String netty = String.join(" ", ping.serverFlags(Scenario.NETTY, 1));
        assertFalse(netty.contains("--hand-offs") || netty.contains("--worker-host"), netty);
        String none = String.join(" ", ping.serverFlags(Scenario.NONE, 1));
        assertFalse(none.contains("--policy") || none.contains("--ping-interval"), none);
        Scenario close = Scenario.builder().connections(2000).policy(Scenario.Policy.CLOSE).build();
        String c = String.join(" ", close.serverFlags(Scenario.HEARTBEAT, 1));
        assertTrue(c.contains("--policy close --idle-timeout"), c);
        assertFalse(c.contains("--ping-interval") || c.contains("--ping-timeout"), c);
    }

    @Test
    void theSmokeTestInTheHelpIsAValidScenario() {
        String[] r = execute("--help");
        String help = r[1].replace(" \\\n", " ").replaceAll("\\s+", " ");
        assertTrue(help.contains("java -jar load-test/target/load-test.jar "
                + LoadTest.SMOKE_TEST), r[1]);
        for (String extra : new String[] {"", " --compare heartbeat", " --seed 7 --mix active=50,silent=50"}) {
            CommandLine cmd = LoadTest.commandLine();
            cmd.parseArgs((LoadTest.SMOKE_TEST + extra).split(" "));
            Scenario s = ((LoadTest) cmd.getCommand()).scenario();
            assertEquals(TimeUnit.SECONDS.toNanos(10), s.durationNanos);
        }
    }

    @Test
    void theFlagsMakeTheScenario() {
        CommandLine cmd = LoadTest.commandLine();
        cmd.parseArgs("--connections", "2000", "--policy", "close", "--idle-timeout", "4s", "--active-rate", "2",
                "--duration", "12s", "--mix", "silent=50,active=50", "--seed", "9", "--tick", "4ms");
        Scenario s = ((LoadTest) cmd.getCommand()).scenario();
        assertEquals(2000, s.connections);
        assertEquals(Scenario.Policy.CLOSE, s.policy);
        assertEquals(TimeUnit.SECONDS.toNanos(4), s.closeWindowNanos());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(500), s.activePeriodNanos);
        assertEquals(50, s.mix.percent(Role.ACTIVE));
        assertEquals(9, s.seed);
        assertEquals(TimeUnit.MILLISECONDS.toNanos(4), s.tickNanos);
    }

    @Test
    void theReadmesEdgeRoleAndSoakCommandsAreValidScenarios() throws IOException {
        String readme = documentedCommands();
        Matcher m = Pattern.compile("`java -jar load-test/target/load-test.jar ([^`]*(?:trickle|--churn-rate)[^`]*)`")
                .matcher(readme);
        int found = 0;
        while (m.find()) {
            CommandLine cmd = LoadTest.commandLine();
            cmd.parseArgs(m.group(1).trim().split(" "));
            Scenario s = ((LoadTest) cmd.getCommand()).scenario();
            assertTrue(s.mix.percent(Role.TRICKLE) > 0 || s.churnPerSecond > 0, m.group(1));
            found++;
        }
        assertTrue(found >= 4, "the edge-role and soak commands in README.md: " + found);
    }

    /** The README's runs of the lifecycle roles and scenarios (aged, storm, stalled, slowreader, drain) still parse. */
    @Test
    void theReadmesLifecycleCommandsAreValidScenarios() throws IOException {
        String readme = documentedCommands();
        Matcher m = Pattern.compile("`java -jar load-test/target/load-test.jar "
                + "([^`]*(?:aged=|--storm|stalled=|slowreader=|--drain )[^`]*)`").matcher(readme);
        int found = 0;
        while (m.find()) {
            CommandLine cmd = LoadTest.commandLine();
            cmd.parseArgs(m.group(1).trim().split(" "));
            Scenario s = ((LoadTest) cmd.getCommand()).scenario();
            assertTrue(s.agesConnections() || s.storm || s.drains() || s.mix.percent(Role.STALLED) > 0
                    || s.mix.percent(Role.SLOWREADER) > 0, m.group(1));
            found++;
        }
        assertTrue(found >= 8, "the lifecycle commands in README.md: " + found);
    }

    @Test
    void theReadmesProbeCommandsAreValidScenarios() throws IOException {
        String readme = documentedCommands();
        Matcher m = Pattern.compile("`java -jar load-test/target/load-test.jar ([^`]*--probe [^`]*)`").matcher(readme);
        int found = 0;
        while (m.find()) {
            CommandLine cmd = LoadTest.commandLine();
            cmd.parseArgs(m.group(1).trim().split(" "));
            Scenario s = ((LoadTest) cmd.getCommand()).scenario();
            assertTrue(m.group(1).contains("--probe " + s.protocol), m.group(1));
            found++;
        }
        assertTrue(found >= 3, "the --probe commands in README.md: " + found);
    }

    /** The README and the load test's docs (load-test/docs/*.md), whitespace collapsed: where its commands are. */
    private static String documentedCommands() throws IOException {
        StringBuilder text = new StringBuilder(Files.readString(Path.of("../../README.md"), StandardCharsets.UTF_8));
        try (java.util.stream.Stream<Path> docs = Files.list(Path.of("../docs"))) {
            for (Path doc : (Iterable<Path>) docs.filter(p -> p.toString().endsWith(".md")).sorted()::iterator) {
                text.append('\n').append(Files.readString(doc, StandardCharsets.UTF_8));
            }
        }
        return text.toString().replaceAll("\\s+", " ");
    }
}
