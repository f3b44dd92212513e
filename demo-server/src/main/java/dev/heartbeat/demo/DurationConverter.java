/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import picocli.CommandLine;

/**
 * Durations on the command line: a number and a unit, such as {@code 30s}, {@code 500ms},
 * {@code 2m} or {@code 1.5s} (units ns, us, ms, s, m, h, d), or ISO-8601 such as {@code PT30S}.
 */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern FORM = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|µs|ms|s|m|h|d)");

    /** What every error message says after naming the bad value. */
    static final String EXPECTED = "expected a number and a unit, e.g. 500ms, 30s, 2m (units: ns, us, ms, s, m, h, d)";

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * Parses a duration.
     *
     * @throws CommandLine.TypeConversionException naming the bad value
     */
    public static Duration parse(String value) {
        String text = value == null ? "" : value.trim();
        if (text.startsWith("P") || text.startsWith("p")) {
            try {
                Duration d = Duration.parse(text.toUpperCase(Locale.ROOT));
                if (d.isNegative()) {
                    throw new CommandLine.TypeConversionException("'" + value + "' is negative: " + EXPECTED);
                }
                return d;
            } catch (DateTimeParseException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a duration: " + EXPECTED);
            }
        }
        Matcher m = FORM.matcher(text);
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a duration: " + EXPECTED);
        }
        BigDecimal nanos = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitNanos(m.group(2))));
        try {
            return Duration.ofNanos(nanos.toBigIntegerExact().longValueExact());
        } catch (ArithmeticException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is "
                    + (nanos.signum() > 0 && nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0
                            ? "too long (at most about 292 years)"
                            : "finer than a nanosecond")
                    + ": " + EXPECTED);
        }
    }

    /** The shortest exact form: 30s, 500ms, 2m, 1500us; "0s" for zero. */
    public static String format(Duration d) {
        long nanos;
        try {
            nanos = d.toNanos();
        } catch (ArithmeticException e) {
            return d.toString();
        }
        if (nanos == 0) {
            return "0s";
        }
        String[] units = {"d", "h", "m", "s", "ms", "us", "ns"};
        for (String unit : units) {
            long n = unitNanos(unit);
            if (nanos % n == 0) {
                return (nanos / n) + unit;
            }
        }
        throw new AssertionError(nanos); // "ns" always divides
    }

    private static long unitNanos(String unit) {
        switch (unit) {
            case "ns":
                return 1L;
            case "us":
            case "µs":
                return 1_000L;
            case "ms":
                return 1_000_000L;
            case "s":
                return 1_000_000_000L;
            case "m":
                return 60_000_000_000L;
            case "h":
                return 3_600_000_000_000L;
            case "d":
                return 86_400_000_000_000L;
            default:
                throw new IllegalArgumentException(unit);
        }
    }
}
