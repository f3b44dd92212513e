/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.IOException;
import java.io.UncheckedIOException;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import org.HdrHistogram.Histogram;

/**
 * The load test's JSON: Jackson over records, snake_case names ({@code echoLatencyUs} is
 * {@code echo_latency_us}), and HdrHistograms in their compressed base64 form ({@link Histograms#encode}).
 * Used for {@code report.json} and for the one-line messages between the coordinator and its child
 * processes. Stateless; any thread.
 */
final class JsonCodec {

    private static final ObjectMapper MAPPER = JsonMapper.builder()
            .propertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
            .addModule(new SimpleModule("hdr-histogram")
                    .addSerializer(Histogram.class, new HistogramSerializer())
                    .addDeserializer(Histogram.class, new HistogramDeserializer()))
            .build();

    private JsonCodec() {
    }

    /** The value on one line. */
    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The value indented, for files a person may read. */
    static String writePretty(Object value) {
        try {
            return MAPPER.writer(SerializationFeature.INDENT_OUTPUT).writeValueAsString(value) + "\n";
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads one value of a type.
     *
     * @throws IllegalArgumentException saying what is wrong where, and the text's start
     */
    static <T> T read(String text, Class<T> type) {
        try {
            return MAPPER.readValue(text, type);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a " + type.getSimpleName() + " in JSON: "
                    + e.getOriginalMessage() + " in " + abbreviate(text), e);
        }
    }

    static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    /** A histogram as its compressed encoding in base64: small, exact, and what HdrHistogram tools read. */
    private static final class HistogramSerializer extends StdSerializer<Histogram> {
        private static final long serialVersionUID = 1L;

        HistogramSerializer() {
            super(Histogram.class);
        }

        @Override
        public void serialize(Histogram h, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeString(Histograms.encode(h));
        }
    }

    private static final class HistogramDeserializer extends StdDeserializer<Histogram> {
        private static final long serialVersionUID = 1L;

        HistogramDeserializer() {
            super(Histogram.class);
        }

        @Override
        public Histogram deserialize(JsonParser p, DeserializationContext ctx) throws IOException {
            try {
                return Histograms.decode(p.getValueAsString());
            } catch (IllegalArgumentException e) {
                return (Histogram) ctx.handleWeirdStringValue(Histogram.class, p.getValueAsString(), e.getMessage());
            }
        }
    }
}
