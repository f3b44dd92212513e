/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Plan;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * Property-based fuzz of every public way to configure Heartbeat: random settings, in random order,
 * including values at and around every limit. Every input either builds, or fails at once with an
 * {@code IllegalArgumentException}, {@code IllegalStateException} or {@code NullPointerException}
 * whose message names the setting (and, for a bad value, the value). Nothing else is ever thrown: no
 * {@code ArithmeticException}, no silent clamp of a builder value.
 *
 * <p>{@code -Dheartbeat.seed=N} replays a run; the seed is printed.
 */
class ConfigFuzzTest {

    private static final int CASES = Integer.getInteger("heartbeat.configCases", 20_000);
    private static final String[] SETTINGS = {"readerIdle", "writerIdle", "allIdle", "observeOutput",
        "withTimeoutExceptions", "interval", "timeout", "maxMissedPings", "jitter", "whenWriterIdle",
        "closeWhenReaderIdle", "maxAge", "maxCloseHold", "beforeClose", "holdWhile"};
    /** Where the ping policy's own settings start in {@link #SETTINGS}, and where the settings of any policy start. */
    private static final int PING_SETTINGS = 5;
    private static final int ANY_POLICY = 11;

    private static Duration duration(SplittableRandom r) {
        switch (r.nextInt(10)) {
            case 0: return null;
            case 1: return Duration.ZERO;
            case 2: return Duration.ofNanos(-1 - r.nextLong(Long.MAX_VALUE));
            case 3: return Duration.ofNanos(r.nextLong(2_000_000)); // around 1 ms
            case 4: return HeartbeatConfig.MAX_TIMEOUT.plusNanos(r.nextInt(3) - 1);
            case 5: return Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);
            case 6: return Duration.ofSeconds(Long.MIN_VALUE);
            default:
                return Duration.of(1 + r.nextLong(1_000_000), r.nextBoolean() ? ChronoUnit.MILLIS : ChronoUnit.SECONDS);
        }
    }

    private static double fraction(SplittableRandom r) {
        double[] edges = {Double.NaN, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, -0.0, 0.0, 1.0,
            Math.nextDown(1.0), -Double.MIN_VALUE};
        return r.nextBoolean() ? edges[r.nextInt(edges.length)] : r.nextDouble() * 2 - 0.5;
    }

    private static int count(SplittableRandom r) {
        int[] edges = {Integer.MIN_VALUE, -1, 0, 1, HeartbeatConfig.MAX_MISSED_PINGS,
            HeartbeatConfig.MAX_MISSED_PINGS + 1, Integer.MAX_VALUE};
        return r.nextBoolean() ? edges[r.nextInt(edges.length)] : r.nextInt(20);
    }

    /**
     * Applies one random setting, after writing its name and value into {@code last} (for the message
     * check when it throws).
     *
     * @return the builder to go on with ({@code withTimeoutExceptions} returns a new one)
     */
    private static HeartbeatConfig.Builder apply(HeartbeatConfig.Builder b, boolean ping, SplittableRandom r,
            String[] last) {
        // Mostly settings of the builder's own policy (so that many inputs build), sometimes any.
        int own = r.nextInt(4);
        String setting = r.nextInt(5) == 0 ? SETTINGS[r.nextInt(SETTINGS.length)]
                : own == 0 ? SETTINGS[ANY_POLICY + r.nextInt(SETTINGS.length - ANY_POLICY)]
                : ping ? SETTINGS[PING_SETTINGS + r.nextInt(ANY_POLICY - PING_SETTINGS)]
                : SETTINGS[r.nextInt(PING_SETTINGS)];
        last[0] = setting;
        last[1] = "";
        switch (setting) {
            case "readerIdle": return b.readerIdle(remember(duration(r), last));
            case "writerIdle": return b.writerIdle(remember(duration(r), last));
            case "allIdle": return b.allIdle(remember(duration(r), last));
            case "observeOutput": return b.observeOutput(r.nextBoolean());
            case "withTimeoutExceptions": return b.withTimeoutExceptions();
            case "interval": return b.interval(remember(duration(r), last));
            case "timeout": return b.timeout(remember(duration(r), last));
            case "maxMissedPings": return b.maxMissedPings(remember(count(r), last));
            case "jitter": return b.jitter(remember(fraction(r), last));
            case "whenWriterIdle": return b.whenWriterIdle();
            case "closeWhenReaderIdle": return b.closeWhenReaderIdle(remember(duration(r), last));
            case "maxAge": return b.maxAge(remember(duration(r), last));
            case "maxCloseHold": return b.maxCloseHold(remember(duration(r), last));
            case "beforeClose": return b.beforeClose((ch, reason) -> CloseDecision.PROCEED);
            default: return b.holdWhile(ch -> false);
        }
    }

    private static <T> T remember(T value, String[] last) {
        last[1] = String.valueOf(value);
        return value;
    }

    @Test
    void everyBuilderInputBuildsOrFailsNamingTheSettingAndValue() {
        long seed = Long.getLong("heartbeat.seed", System.nanoTime());
        System.out.println("ConfigFuzzTest: seed " + seed + " (replay with -Dheartbeat.seed=" + seed + ")");
        SplittableRandom r = new SplittableRandom(seed);
        int built = 0;
        int refused = 0;
        for (int i = 0; i < CASES; i++) {
            int start = r.nextInt(3);
            HeartbeatConfig.Builder b = start == 0 ? HeartbeatConfig.events()
                    : start == 1 ? HeartbeatConfig.closeWhenIdle() : HeartbeatConfig.ping(ch -> "PING");
            String[] last = {"build", ""};
            try {
                for (int n = r.nextInt(5); n >= 0; n--) {
                    b = apply(b, start == 2, r, last);
                }
                last[0] = "build";
                last[1] = "";
                HeartbeatConfig cfg = b.build();
                Plan plan = cfg.plan;
                assertTrue(plan.readerIdleNanos >= 0 && plan.writerIdleNanos >= 0 && plan.allIdleNanos >= 0);
                assertTrue(plan.coalescingNanos >= 0);
                built++;
            } catch (IllegalArgumentException | IllegalStateException | NullPointerException e) {
                String message = String.valueOf(e.getMessage());
                boolean names = message.contains(last[0])
                        || ("build".equals(last[0]) && message.contains(" needs ")) // names what is missing
                        || message.contains("applies only") || message.contains("does not apply");
                if (!names) {
                    fail("seed " + seed + ", case " + i + ": the message does not name the setting " + last[0]
                            + ": " + message);
                }
                if (e instanceof IllegalArgumentException && !"null".equals(last[1]) && !message.contains(last[1])) {
                    fail("seed " + seed + ", case " + i + ": the message does not show the value " + last[1]
                            + ": " + message);
                }
                refused++;
            } catch (RuntimeException e) {
                fail("seed " + seed + ", case " + i + ": " + last[0] + "=" + last[1] + " threw " + e, e);
            }
        }
        System.out.println("ConfigFuzzTest: " + built + " built, " + refused + " refused");
        assertTrue(built > CASES / 20 && refused > CASES / 20, built + " built, " + refused + " refused");
    }

    @Test
    void theDropInOverloadTakesAnyLongInAnyUnit() {
        long seed = Long.getLong("heartbeat.seed", System.nanoTime());
        SplittableRandom r = new SplittableRandom(seed);
        long[] edges = {Long.MIN_VALUE, -1, 0, 1, Long.MAX_VALUE};
        for (int i = 0; i < CASES; i++) {
            long[] t = new long[3];
            for (int k = 0; k < 3; k++) {
                t[k] = r.nextBoolean() ? edges[r.nextInt(edges.length)] : r.nextLong();
            }
            TimeUnit unit = TimeUnit.values()[r.nextInt(TimeUnit.values().length)];
            try {
                HeartbeatConfig cfg = HeartbeatConfig.events(r.nextBoolean(), t[0], t[1], t[2], unit);
                Plan plan = cfg.plan;
                for (long nanos : new long[] {plan.readerIdleNanos, plan.writerIdleNanos, plan.allIdleNanos}) {
                    assertTrue(nanos == 0 || (nanos >= HeartbeatConfig.MIN_TIMEOUT.toNanos()
                            && nanos <= HeartbeatConfig.MAX_TIMEOUT.toNanos()), "seed " + seed + ": " + nanos);
                }
            } catch (RuntimeException e) {
                fail("seed " + seed + ": IdleStateHandler takes " + t[0] + ", " + t[1] + ", " + t[2] + " " + unit
                        + "; Heartbeat threw " + e, e);
            }
        }
    }
}
