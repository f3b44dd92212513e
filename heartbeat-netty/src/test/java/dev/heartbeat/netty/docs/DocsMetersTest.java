/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.micrometer.HeartbeatMetrics;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.probe.Probes;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * The meters table of {@code heartbeat-netty/docs/metrics.md} is what {@link HeartbeatMetrics} registers: every
 * meter the table lists exists with that name, type and tag keys, and every meter registered is in the table.
 * The monitor has a ping configuration bound and has sent and timed a ping, so the meters registered per probe
 * (and any registered lazily) exist.
 */
class DocsMetersTest {

    private static final Path METRICS_MD = Path.of("docs/metrics.md");
    /** A row of the table: {@code | `name` | type | tags | what |}. */
    private static final Pattern ROW = Pattern.compile(
            "(?m)^\\|\\s*`(heartbeat\\.[a-z0-9_.]+)`\\s*\\|([^|]*)\\|([^|]*)\\|");

    /** One meter as the docs or the registry describe it: its type and its tag keys (beside the user's). */
    record Described(String type, Set<String> tags) {
    }

    /** The meters the table of {@code markdown} lists, by name. */
    static Map<String, Described> documented(String markdown) {
        Map<String, Described> meters = new TreeMap<>();
        Matcher m = ROW.matcher(markdown);
        while (m.find()) {
            String type = m.group(2).trim().replaceAll("[ ,(].*", "").toLowerCase(Locale.ROOT);
            Set<String> tags = new TreeSet<>();
            Matcher t = Pattern.compile("`([a-z_]+)`").matcher(m.group(3));
            while (t.find()) {
                tags.add(t.group(1));
            }
            Described previous = meters.put(m.group(1), new Described(type, tags));
            assertEquals(null, previous, "listed twice: " + m.group(1));
        }
        return meters;
    }

    /** The meters {@link HeartbeatMetrics} registered in {@code registry}, by name, without {@code userTags}. */
    static Map<String, Described> registered(SimpleMeterRegistry registry, Set<String> userTags) {
        Map<String, Described> meters = new TreeMap<>();
        for (Meter meter : registry.getMeters()) {
            Set<String> tags = new TreeSet<>();
            for (Tag tag : meter.getId().getTags()) {
                if (!userTags.contains(tag.getKey())) {
                    tags.add(tag.getKey());
                }
            }
            meters.merge(meter.getId().getName(),
                    new Described(meter.getId().getType().name().toLowerCase(Locale.ROOT), tags),
                    (a, b) -> {
                        assertEquals(a, b, "one name, two kinds of meter: " + meter.getId().getName());
                        return a;
                    });
        }
        return meters;
    }

    /** The differences between the docs' meters and the registry's, one line each. */
    static List<String> differences(Map<String, Described> docs, Map<String, Described> code) {
        List<String> differences = new ArrayList<>();
        docs.forEach((name, d) -> {
            Described c = code.get(name);
            if (c == null) {
                differences.add("documented, not registered: " + name);
            } else if (!c.equals(d)) {
                differences.add(name + ": documented as " + d + ", registered as " + c);
            }
        });
        code.keySet().stream().filter(n -> !docs.containsKey(n))
                .forEach(n -> differences.add("registered, not documented: " + n + " " + code.get(n)));
        return differences;
    }

    /** A registry bound to a monitor whose channel has sent a ping and timed its answer (a matched probe). */
    static SimpleMeterRegistry boundRegistry() {
        ManualTicker ticker = new ManualTicker(0);
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).maxCoalescing(Duration.ZERO)
                .build();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HeartbeatMetrics(monitor, Tags.of("server", "test")).bindTo(registry);
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(HeartbeatConfig
                .ping(Probes.custom(c -> "PING", "PONG"::equals)).interval(Duration.ofSeconds(1)).build()));
        for (int ms = 0; ms < 1_100; ms++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
            ch.runPendingTasks();
        }
        assertEquals("PING", ch.readOutbound());
        ticker.advance(3, TimeUnit.MILLISECONDS);
        ch.writeInbound("PONG");
        ch.finishAndReleaseAll();
        monitor.close();
        assertEquals(1, registry.get("heartbeat.ping.rtt").timer().count(), "the answer was timed");
        return registry;
    }

    @Test
    void theDocumentedMetersAreTheRegisteredOnes() throws IOException {
        Map<String, Described> docs = documented(Files.readString(METRICS_MD, StandardCharsets.UTF_8));
        Map<String, Described> code = registered(boundRegistry(), Set.of("server"));
        assertTrue(docs.size() >= 20, "the table of " + METRICS_MD + ": " + docs.keySet());
        List<String> differences = differences(docs, code);
        assertTrue(differences.isEmpty(), METRICS_MD + " against HeartbeatMetrics:\n" + String.join("\n", differences));
    }

    @Test
    void theCheckFindsAWrongNameAWrongTypeAndAMissingMeter() {
        String table = "| meter | type | tags | what |\n|---|---|---|---|\n"
                + "| `heartbeat.rtt` | timer | `probe` | a name that does not exist |\n"
                + "| `heartbeat.connections.tracked` | counter | | a gauge called a counter |\n";
        List<String> differences = differences(documented(table), Map.of(
                "heartbeat.connections.tracked", new Described("gauge", Set.of()),
                "heartbeat.ping.rtt", new Described("timer", Set.of("probe"))));
        assertEquals(List.of("heartbeat.connections.tracked: documented as Described[type=counter, tags=[]], "
                + "registered as Described[type=gauge, tags=[]]", "documented, not registered: heartbeat.rtt",
                "registered, not documented: heartbeat.ping.rtt Described[type=timer, tags=[probe]]"), differences);
    }
}
