/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;

import dev.heartbeat.netty.AckMode;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class DemoCommandTest {

    private static ServerConfig parse(String... args) {
        CommandLine cmd = DemoCommand.commandLine();
        cmd.parseArgs(args);
        return ((DemoCommand) cmd.getCommand()).toConfig();
    }

    /** Runs the command line as main would (without starting anything on success paths tested here). */
    private static String[] execute(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = DemoCommand.commandLine();
        cmd.setOut(new PrintWriter(out, true));
        cmd.setErr(new PrintWriter(err, true));
        int status = cmd.execute(args);
        return new String[] {Integer.toString(status), out.toString(), err.toString()};
    }

    @Test
    void defaults() {
        ServerConfig c = parse();
        assertEquals("127.0.0.1", c.host());
        assertEquals(7000, c.port());
        assertEquals(ServerConfig.IdleImpl.HEARTBEAT, c.idleImpl());
        assertEquals(ServerConfig.Policy.CLOSE, c.policy());
        assertEquals(Duration.ofSeconds(30), c.idleTimeout());
        assertEquals(Duration.ofSeconds(30), c.pingInterval());
        assertEquals(Duration.ofSeconds(30), c.pingTimeout());
        assertEquals(3, c.maxMissedPings());
        assertEquals(8192, c.maxLine());
        assertEquals(ServerConfig.Transport.AUTO, c.transport());
        assertTrue(c.metricsEnabled());
        assertEquals(9100, c.metricsPort());
        assertEquals(Runtime.getRuntime().availableProcessors(), c.workerThreads());
        assertNull(c.tick());
    }

    @Test
    void everyFlag() {
        ServerConfig c = parse("--host", "0.0.0.0", "--port", "7100", "--idle-impl", "heartbeat", "--policy", "PING",
                "--ping-interval", "10s", "--ping-timeout", "2500ms", "--max-missed-pings",
                "5", "--max-line", "100", "--transport", "nio", "--metrics-port", "0", "--worker-threads", "3",
                "--tick", "4ms");
        assertEquals("0.0.0.0", c.host());
        assertEquals(7100, c.port());
        assertEquals(ServerConfig.IdleImpl.HEARTBEAT, c.idleImpl());
        assertEquals(ServerConfig.Policy.PING, c.policy());
        assertEquals(Duration.ofSeconds(30), c.idleTimeout(), "the default: --policy ping refuses --idle-timeout");
        assertEquals(Duration.ofSeconds(10), c.pingInterval());
        assertEquals(Duration.ofMillis(2500), c.pingTimeout());
        assertEquals(5, c.maxMissedPings());
        assertEquals(100, c.maxLine());
        assertEquals(ServerConfig.Transport.NIO, c.transport());
        assertFalse(c.metricsEnabled());
        assertEquals(3, c.workerThreads());
        assertEquals(Duration.ofMillis(4), c.tick());
        assertEquals("policy=ping, ping-interval=10s, ping-timeout=2500ms, max-missed-pings=5", c.idleSummary());
    }

    @Test
    void helpExplainsEveryFlag() {
        String[] r = execute("--help");
        assertEquals("0", r[0]);
        for (String flag : List.of("--host", "--port", "--idle-impl", "--policy", "--idle-timeout", "--ping-interval",
                "--ping-timeout", "--max-missed-pings", "--max-line", "--transport", "--metrics-port",
                "--worker-threads", "--tick", "--stop-with-parent", "--help", "--version", "--probe", "--ack-mode",
                "websocket", "http2", "mqtt", "BYE <REASON>", "--police-pings", "--peer-ping-min-interval",
                "--peer-ping-max-strikes", "--permit-pings-without-traffic", "BYE PING_ABUSE", "too_many_pings",
                "Default: 5m", "wait 2h")) {
            assertTrue(r[1].contains(flag), flag + " missing from:\n" + r[1]);
        }
        assertTrue(r[1].contains("Default: 7000"), r[1]);
        String oneLine = r[1].replaceAll("\\s+", " ");
        assertTrue(oneLine.contains("Default: the number of cores (" + Runtime.getRuntime().availableProcessors()
                + ")"), r[1]);
    }

    @Test
    void probeAndAckMode() {
        assertEquals(ServerConfig.Protocol.LINE, parse().protocol());
        assertEquals(AckMode.ANY_INBOUND, parse().ackMode(), "line pings: any input answers");
        ServerConfig ws = parse("--probe", "websocket", "--policy", "ping");
        assertEquals(ServerConfig.Protocol.WEBSOCKET, ws.protocol());
        assertEquals(AckMode.MATCHED_ONLY, ws.ackMode(), "the default for a probe whose answers carry a token");
        assertTrue(ws.idleSummary().startsWith("probe=websocket, policy=ping,"), ws.idleSummary());
        assertTrue(ws.idleSummary().endsWith(", ack-mode=matched_only"), ws.idleSummary());
        assertEquals(AckMode.MATCHED_EXTENDS, parse("--probe", "HTTP2", "--policy", "ping", "--ack-mode",
                "matched_extends").ackMode());
        assertEquals(AckMode.ANY_INBOUND, parse("--probe", "line", "--policy", "ping", "--ack-mode", "any_inbound")
                .ackMode());
        ServerConfig mqtt = parse("--probe", "mqtt", "--idle-timeout", "10s");
        assertEquals("probe=mqtt, keep-alive x 1.5, before CONNECT: idle-timeout=10s", mqtt.idleSummary());
    }

    @Test
    void probeCombinationsThatMeanNothingAreRefused() {
        String[] r = execute("--probe", "mqtt", "--policy", "ping");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("--probe mqtt serves MQTT, whose servers never ping") && r[2].contains(
                "give --policy close, not --policy ping"), r[2]);
        r = execute("--policy", "ping", "--ack-mode", "matched_only");
        assertTrue(r[2].contains("--ack-mode matched_only needs pings whose answers carry their token (--probe "
                + "websocket or http2); --probe line pings are answered by any input"), r[2]);
        r = execute("--probe", "websocket", "--ack-mode", "matched_only");
        assertTrue(r[2].contains("--ack-mode matched_only says what answers a ping: it needs --policy ping"), r[2]);
        r = execute("--probe", "http2", "--policy", "ping", "--idle-impl", "netty", "--ack-mode", "matched_only");
        assertTrue(r[2].contains("with --idle-impl netty any input answers a ping"), r[2]);
        r = execute("--probe", "udp");
        assertTrue(r[2].contains("'udp' is not one of: line, websocket, http2, mqtt"), r[2]);
    }

    @Test
    void policePingsAndItsRules() {
        assertNull(parse().peerPingRules(), "off by default");
        assertEquals(ServerConfig.PeerPingRules.DEFAULT, parse("--police-pings").peerPingRules(), "gRPC's");
        assertEquals(Duration.ofMinutes(5), ServerConfig.PeerPingRules.DEFAULT.minInterval());
        ServerConfig c = parse("--probe", "http2", "--police-pings", "--peer-ping-min-interval", "500ms",
                "--peer-ping-max-strikes", "0", "--permit-pings-without-traffic");
        assertEquals(new ServerConfig.PeerPingRules(Duration.ofMillis(500), true, 0), c.peerPingRules());
        assertEquals("probe=http2, policy=close, idle-timeout=30s, police-pings: min-interval=500ms, max-strikes=0, "
                + "permit-without-traffic", c.idleSummary());
        assertTrue(parse("--police-pings", "--idle-impl", "none").policesPings(), "no timer: any idle impl");
    }

    @Test
    void policingFlagsWithoutPolicePingsOrOutOfRangeAreRefused() {
        String[] r = execute("--peer-ping-max-strikes", "3");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("--peer-ping-max-strikes says how the clients' pings are policed, but they are not: "
                + "give --police-pings too"), r[2]);
        r = execute("--permit-pings-without-traffic");
        assertTrue(r[2].contains("--permit-pings-without-traffic says how"), r[2]);
        r = execute("--police-pings", "--peer-ping-min-interval", "0s");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("--peer-ping-min-interval must be at least 1ms: 0s"), r[2]);
        r = execute("--police-pings", "--peer-ping-max-strikes", "-1");
        assertTrue(r[2].contains("--peer-ping-max-strikes: maxStrikes cannot be negative: -1"), r[2]);
    }

    @Test
    void loopLagIsOffByDefaultAndAPositiveDuration() {
        assertNull(parse().loopLag());
        assertEquals(Duration.ofMillis(1), parse("--loop-lag", "1ms").loopLag());
        String[] r = execute("--loop-lag", "0s");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("--loop-lag must be a positive duration: 0s"), r[2]);
        r = execute("--loop-lag", "-1ms");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("--loop-lag") && r[2].contains("'-1ms' is not a duration"), r[2]);
    }

    private static void assertRefused(String expected, String... args) {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> parse(args), String.join(" ", args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    /** A flag the chosen impl, policy or protocol ignores is refused, naming the flag that would make it count. */
    @Test
    void flagsThatWouldDoNothingAreRefused() {
        assertRefused("--ping-interval would do nothing: it applies to the ping policy, and --policy close sends no "
                + "pings; give --policy ping", "--ping-interval", "5s");
        assertRefused("--ping-timeout would do nothing", "--policy", "event", "--ping-timeout", "5s");
        assertRefused("--max-missed-pings would do nothing", "--policy", "close", "--max-missed-pings", "2");
        assertRefused("--ping-interval would do nothing: it applies to the ping policy, and --probe mqtt servers "
                + "never ping", "--probe", "mqtt", "--ping-interval", "5s");
        assertRefused("--idle-timeout would do nothing: --policy ping closes after --ping-interval", "--policy",
                "ping", "--idle-timeout", "5s");
        assertRefused("--tick would do nothing: it is Heartbeat's, and --idle-impl netty has no Heartbeat; give "
                + "--idle-impl heartbeat", "--idle-impl", "netty", "--tick", "1ms");
        assertRefused("--hand-offs would do nothing", "--idle-impl", "none", "--hand-offs", "lazy");
        assertRefused("--policy would do nothing: --idle-impl none watches no idleness", "--idle-impl", "none",
                "--policy", "close");
        assertRefused("--max-age-jitter-mode would do nothing", "--max-age-jitter-mode", "up_only");
        String[] r = execute("--ping-interval", "5s");
        assertEquals("2", r[0], "a usage error");
        assertTrue(r[2].contains("--ping-interval would do nothing"), r[2]);
    }

    /** What counts is accepted: the combinations the load test starts its servers with among them. */
    @Test
    void flagsThatCountAreAccepted() {
        assertEquals(Duration.ofSeconds(5), parse("--policy", "ping", "--ping-interval", "5s", "--ping-timeout", "2s",
                "--max-missed-pings", "2", "--tick", "1ms", "--worker-host", "thread", "--hand-offs", "lazy")
                .pingInterval());
        assertEquals(Duration.ofSeconds(4), parse("--probe", "mqtt", "--policy", "close", "--idle-timeout", "4s")
                .idleTimeout());
        parse("--idle-impl", "netty", "--policy", "ping", "--ping-interval", "3s");
        parse("--idle-impl", "none", "--police-pings");
        parse("--max-age", "10s", "--max-age-jitter", "0.1", "--max-age-jitter-mode", "down_only");
        parse("--policy", "event", "--idle-timeout", "3s");
    }

    /** The library judges its own settings; its message is reported under the flag that gave the value. */
    @Test
    void theLibrarysOwnErrorsAreReportedUnderTheFlagNames() {
        assertRefused("--max-age-jitter: maxAgeJitter must be in [0, 1): 1.5", "--max-age", "10s",
                "--max-age-jitter", "1.5");
        assertRefused("--max-age-grace: maxAgeGrace needs maxAge", "--max-age-grace", "1s");
        assertRefused("--max-missed-pings: maxMissedPings must be in [1, 10000]: 0", "--policy", "ping",
                "--max-missed-pings", "0");
        assertRefused("--write-stall: writeStall must be 0 (disabled) or at least 1ms", "--write-stall", "100us");
        assertRefused("--tick: tick must be in [1ns, ", "--tick", "2s");
        assertRefused("--action-budget: actionBudget must be 0 (off) or in [1, ", "--action-budget", "-1");
        assertRefused("--peer-ping-max-strikes: maxStrikes cannot be negative: -1", "--police-pings",
                "--peer-ping-max-strikes", "-1");
        assertEquals("--max-age-jitter", LibraryChecks.flagOf("maxAgeJitter needs maxAge: call maxAge(Duration) too"));
    }

    @Test
    void stopWithParentIsAFlagThatLeavesTheSettingsAlone() {
        CommandLine cmd = DemoCommand.commandLine();
        cmd.parseArgs("--stop-with-parent", "--port", "7100");
        DemoCommand command = (DemoCommand) cmd.getCommand();
        assertTrue(command.stopWithParent);
        assertEquals(7100, command.toConfig().port());
        DemoCommand.commandLine().parseArgs();
        assertFalse(((DemoCommand) DemoCommand.commandLine().getCommand()).stopWithParent, "off by default");
    }

    @Test
    void badDurationNamesTheOptionAndTheValue() {
        String[] r = execute("--idle-timeout", "30x");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("--idle-timeout") && r[2].contains("'30x' is not a duration"), r[2]);
    }

    @Test
    void badEnumAndOutOfRangeValuesAreUsageErrors() {
        String[] r = execute("--idle-impl", "wheel");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains(
                "Invalid value for option '--idle-impl': 'wheel' is not one of: heartbeat, netty, none"),
                r[2]);
        r = execute("--port", "0", "--metrics-port", "0", "--idle-timeout", "0s");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("idle-timeout must be at least 1ms: 0s"), r[2]);
        r = execute("--port", "70000");
        assertEquals("2", r[0]);
        assertTrue(r[2].contains("port must be in 0-65535: 70000"), r[2]);
    }
}
