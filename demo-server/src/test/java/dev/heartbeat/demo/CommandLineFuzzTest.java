/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Property-based fuzz of the demo server's command line: random flags with random values (valid,
 * edge and junk strings). Every input either yields a configuration, or is refused with picocli's
 * {@code ParameterException} or an {@code IllegalArgumentException} whose message names the flag
 * (or setting) and shows the value. Nothing else is thrown. Nothing is started.
 *
 * <p>{@code -Dheartbeat.seed=N} replays a run; the seed is printed.
 */
class CommandLineFuzzTest {

    private static final String[] FLAGS = {"--host", "--port", "--idle-impl", "--policy", "--idle-timeout",
        "--ping-interval", "--ping-timeout", "--max-missed-pings", "--max-line", "--transport", "--metrics-port",
        "--worker-threads", "--tick", "--probe", "--ack-mode", "--police-pings", "--peer-ping-min-interval",
        "--peer-ping-max-strikes", "--permit-pings-without-traffic"};
    private static final String[] VALUES = {"", " ", "0", "-1", "1", "65535", "65536", "2147483647", "2147483648",
        "-9223372036854775808", "1ms", "0ms", "-5s", "30s", "2m", "1h", "99999999999999d", "1.5s", "10 s", "s",
        "ms", "NaN", "heartbeat", "netty", "none", "close", "ping", "event", "EVENT", "nio", "epoll", "auto",
        "::1", "127.0.0.1", "localhost", "line", "websocket", "http2", "mqtt", "any_inbound",
        "matched_only", "MATCHED_EXTENDS", "true", "false", "\u00e9t\u00e9", "%s%n", "--port", "1e3", "0x10", "\0"};

    @Test
    void everyCommandLineParsesOrIsRefusedNamingTheFlag() {
        long seed = Long.getLong("heartbeat.seed", System.nanoTime());
        System.out.println("CommandLineFuzzTest: seed " + seed + " (replay with -Dheartbeat.seed=" + seed + ")");
        SplittableRandom r = new SplittableRandom(seed);
        int parsed = 0;
        int refused = 0;
        for (int i = 0; i < 5_000; i++) {
            List<String> args = new ArrayList<>();
            String flag = null;
            for (int n = r.nextInt(4); n >= 0; n--) {
                flag = FLAGS[r.nextInt(FLAGS.length)];
                String value = r.nextInt(4) == 0 ? Long.toString(r.nextLong()) : VALUES[r.nextInt(VALUES.length)];
                if (r.nextBoolean()) {
                    args.add(flag + "=" + value);
                } else {
                    args.add(flag);
                    args.add(value);
                }
            }
            CommandLine cmd = DemoCommand.commandLine();
            try {
                cmd.parseArgs(args.toArray(new String[0]));
                ((DemoCommand) cmd.getCommand()).toConfig();
                parsed++;
            } catch (CommandLine.ParameterException | IllegalArgumentException e) {
                String message = String.valueOf(e.getMessage());
                if (!namesAFlagOrSetting(message)) {
                    fail("seed " + seed + ", args " + args + ": the message names no flag or setting: " + message);
                }
                if (Boolean.getBoolean("heartbeat.printRefusals") && i % 250 == 0) {
                    System.out.println("  refused " + args + ": " + message);
                }
                refused++;
            } catch (RuntimeException e) {
                fail("seed " + seed + ", args " + args + " (last flag " + flag + ") threw " + e, e);
            }
        }
        System.out.println("CommandLineFuzzTest: " + parsed + " parsed, " + refused + " refused");
        assertTrue(parsed > 50 && refused > 50, parsed + " parsed, " + refused + " refused");
    }

    /** Whether the message names one of the flags, or the setting behind one (as ServerConfig words it). */
    private static boolean namesAFlagOrSetting(String message) {
        for (String flag : FLAGS) {
            String setting = flag.substring(2);
            if (message.contains(flag) || message.contains(setting) || message.contains(camel(setting))) {
                return true;
            }
        }
        // "Unknown option": a boolean flag (--police-pings) takes no value, so a value such as -5s is read as a flag
        return message.contains("Unmatched argument") || message.contains("Missing required parameter")
                || message.contains("Unknown option");
    }

    private static String camel(String dashed) {
        StringBuilder s = new StringBuilder();
        boolean up = false;
        for (int i = 0; i < dashed.length(); i++) {
            char c = dashed.charAt(i);
            if (c == '-') {
                up = true;
            } else {
                s.append(up ? Character.toUpperCase(c) : c);
                up = false;
            }
        }
        return s.toString();
    }
}
