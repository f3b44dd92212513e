/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

class DurationConverterTest {

    @Test
    void parsesNumbersWithUnits() {
        assertEquals(Duration.ofSeconds(30), DurationConverter.parse("30s"));
        assertEquals(Duration.ofMillis(500), DurationConverter.parse("500ms"));
        assertEquals(Duration.ofMinutes(2), DurationConverter.parse("2m"));
        assertEquals(Duration.ofHours(1), DurationConverter.parse("1h"));
        assertEquals(Duration.ofDays(1), DurationConverter.parse("1d"));
        assertEquals(Duration.ofNanos(1500), DurationConverter.parse("1500ns"));
        assertEquals(Duration.ofNanos(1500), DurationConverter.parse("1.5us"));
        assertEquals(Duration.ofMillis(1500), DurationConverter.parse("1.5s"));
        assertEquals(Duration.ofMillis(250), DurationConverter.parse(" 250 ms "));
        assertEquals(Duration.ZERO, DurationConverter.parse("0s"));
        assertEquals(Duration.ofSeconds(30), DurationConverter.parse("PT30S"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"30", "30x", "s", "-5s", "1.5", "30 seconds", "", "PT", "1e3ms", "0.5ns", "999999999d"})
    void refusesOtherFormsNamingTheValue(String bad) {
        CommandLine.TypeConversionException e =
                assertThrows(CommandLine.TypeConversionException.class, () -> DurationConverter.parse(bad));
        assertTrue(e.getMessage().startsWith("'" + bad + "' is "), e.getMessage());
        assertTrue(e.getMessage().contains("e.g. 500ms, 30s, 2m"), e.getMessage());
    }

    @Test
    void formatsTheShortestExactForm() {
        assertEquals("30s", DurationConverter.format(Duration.ofSeconds(30)));
        assertEquals("500ms", DurationConverter.format(Duration.ofMillis(500)));
        assertEquals("2m", DurationConverter.format(Duration.ofMinutes(2)));
        assertEquals("90s", DurationConverter.format(Duration.ofSeconds(90)));
        assertEquals("1500us", DurationConverter.format(Duration.ofNanos(1_500_000)));
        assertEquals("0s", DurationConverter.format(Duration.ZERO));
    }
}
