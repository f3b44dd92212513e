/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Property-based fuzz of the load test's command line: the smoke test's valid flags, then one to
 * three random flags with random values (valid, edge and junk strings). Every input either makes a
 * scenario and a run plan, or is refused with picocli's {@code ParameterException} or an
 * {@code IllegalArgumentException} whose message names a flag that was given and shows its value
 * (as given, or as the flag parsed it). Nothing else may be thrown. Nothing is started.
 *
 * <p>{@code -Dheartbeat.seed=N} replays a run; the seed is printed.
 */
class CommandLineFuzzTest {

    private static final String[] FLAGS = {"--connections", "--transport", "--compare", "--mix", "--policy",
        "--idle-timeout", "--ping-interval", "--ping-timeout", "--max-missed-pings", "--duration", "--active-rate",
        "--connect-rate", "--server-heap", "--client-heap", "--jvm-arg", "--server-threads", "--client-threads",
        "--max-connections-per-process", "--base-port", "--tick", "--target", "--target-metrics", "--seed", "--out",
        "--check", "--demo-server-jar", "--probe", "--max-age", "--max-age-jitter", "--max-age-jitter-mode",
        "--max-age-grace", "--storm", "--action-budget", "--write-stall", "--drain"};
    private static final String[] VALUES = {"", " ", "0", "-1", "1", "2", "3", "100", "2000", "65535", "65536",
        "2147483647", "2147483648", "-9223372036854775808", "1ms", "0ms", "-5s", "3s", "10s", "30s", "2m", "1h",
        "99999999999999d", "1.5s", "10 s", "s", "NaN", "Infinity", "-Infinity", "1e3", "1e400", "0x10", "0.0001",
        "tcp", "local", "udp", "heartbeat", "netty", "none", "heartbeat,netty", "netty,netty", ",", "close", "ping",
        "silent=100", "active=50,silent=50", "silent=10,dying=10,active=10,pong=70", "pong=100%", "silent=101",
        "silent=50,silent=50", "dying=-5,pong=105", "=", "512m", "2g", "0m", "12x", "-Xmx1g", "127.0.0.1:7000",
        "127.0.0.1", "[::1]:80", "host:99999", ":", "reports/x", "\u00e9t\u00e9", "%s%n", "--connections", "\0",
        "true", "false", "line", "websocket", "http2", "mqtt", "MQTT", "silent=50,trickle=50", "silent=50,flooder=50",
        "pingflood=50,flooder=50", "silent=50,aged=50", "pong=80,aged=20", "symmetric", "down_only", "up_only",
        "0.2", "1.0", "5000"};

    @Test
    void everyCommandLineMakesAPlanOrIsRefusedNamingTheFlagAndValue() {
        long seed = Long.getLong("heartbeat.seed", System.nanoTime());
        System.out.println("CommandLineFuzzTest: seed " + seed + " (replay with -Dheartbeat.seed=" + seed + ")");
        SplittableRandom r = new SplittableRandom(seed);
        int planned = 0;
        int refused = 0;
        for (int i = 0; i < 4_000; i++) {
            List<String[]> given = new ArrayList<>();
            for (int n = r.nextInt(3); n >= 0; n--) {
                String flag = FLAGS[r.nextInt(FLAGS.length)];
                String value = r.nextInt(5) == 0 ? Long.toString(r.nextLong() % 100_000) : VALUES[r.nextInt(
                        VALUES.length)];
                given.add(new String[] {flag, value});
            }
            List<String> args = smokeTestWithout(given);
            for (String[] g : given) {
                String flag = g[0];
                String value = g[1];
                if (r.nextBoolean()) {
                    args.add(flag + "=" + value);
                } else {
                    args.add(flag);
                    args.add(value);
                }
            }
            try {
                CommandLine cmd = LoadTest.commandLine();
                cmd.parseArgs(args.toArray(new String[0]));
                LoadTest command = (LoadTest) cmd.getCommand();
                command.plan(command.scenario());
                planned++;
            } catch (CommandLine.ParameterException | IllegalArgumentException e) {
                String message = String.valueOf(e.getMessage());
                if (message.startsWith("load-test.jar not found") || message.startsWith("demo-server.jar not found")) {
                    planned++; // every setting passed; only the jars are not built yet (a clean build's test phase)
                    continue;
                }
                if (!namesAFlagAndValue(message, args, given)) {
                    fail("seed " + seed + ", args " + args + ": the message names no flag with a value: "
                            + message);
                }
                if (Boolean.getBoolean("heartbeat.printRefusals") && i % 100 == 0) {
                    System.out.println("  refused " + given.stream().map(Arrays::toString).toList() + ": " + message);
                }
                refused++;
            } catch (RuntimeException e) {
                fail("seed " + seed + ", args " + args + " threw " + e, e);
            }
        }
        System.out.println("CommandLineFuzzTest: " + planned + " planned, " + refused + " refused");
        assertTrue(planned > 100 && refused > 100, planned + " planned, " + refused + " refused");
    }

    /** The smoke test's flags, but those given (random ones replace them, not repeat them). */
    private static List<String> smokeTestWithout(List<String[]> given) {
        List<String> smoke = Arrays.asList(LoadTest.SMOKE_TEST.split(" "));
        List<String> args = new ArrayList<>();
        for (int i = 0; i < smoke.size(); i += 2) {
            String flag = smoke.get(i);
            if (given.stream().noneMatch(g -> g[0].equals(flag))) {
                args.add(flag);
                args.add(smoke.get(i + 1));
            }
        }
        return args;
    }

    /**
     * Whether the message is picocli's refusal of an unknown or repeated argument (which quotes it),
     * or a missing one, or names a flag of the command line and shows a value: one of the command line
     * (trimmed, or an element of a list; the empty value given to a flag named may show as nothing),
     * or one a flag parsed it to (a number, a duration, {@code Infinity}).
     */
    private static boolean namesAFlagAndValue(String message, List<String> args, List<String[]> given) {
        if (message.startsWith("Unmatched argument") || message.startsWith("Unknown option")
                || message.startsWith("Missing required parameter")
                || message.contains("should be specified only once")
                || message.startsWith("Expected parameter for option")) {
            return true;
        }
        boolean namesAFlag = false;
        boolean showsAValue = message.chars().anyMatch(Character::isDigit) || message.contains("Infinity")
                || message.contains("NaN");
        for (String a : args) {
            String[] flagAndValue = a.split("=", 2);
            if (a.startsWith("--")) {
                namesAFlag |= message.contains(flagAndValue[0]);
            }
            String value = a.startsWith("--") ? flagAndValue.length > 1 ? flagAndValue[1] : "" : a;
            showsAValue |= !value.isBlank() && message.contains(value.trim());
            for (String part : value.split(",", -1)) { // lists: the message may show the bad element
                showsAValue |= !part.isBlank() && message.contains(part.trim());
            }
        }
        for (String[] g : given) {
            showsAValue |= g[1].isBlank() && message.contains(g[0]);
        }
        return namesAFlag && showsAValue;
    }
}
