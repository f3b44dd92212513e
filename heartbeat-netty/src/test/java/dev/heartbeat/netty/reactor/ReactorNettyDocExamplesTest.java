/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.reactor;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.probe.Probes;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.server.HttpServer;

/**
 * The Java examples of {@code docs/integrations/reactor-netty.md}, each a tagged region of this file
 * ({@code // tag::name[]} ... {@code // end::name[]}, the convention of the guide's other examples):
 * {@link #everyJavaBlockOfThePageIsATestedRegion} fails on a block of the page that is no region, and on a
 * region the page does not show; the other tests run them. The Spring Boot recipe compiles against two
 * stand-ins of Spring's types of the same shape ({@link Bean}, {@link NettyServerCustomizer}, a
 * {@code Function<HttpServer, HttpServer>} as Spring's is): no Spring context runs in this build.
 */
class ReactorNettyDocExamplesTest {

    private static final Path PAGE = Path.of("docs/integrations/reactor-netty.md");
    private static final Path SOURCE =
            Path.of("src/test/java/dev/heartbeat/netty/reactor/ReactorNettyDocExamplesTest.java");
    private static final Pattern BLOCK = Pattern.compile("(?m)^[ \\t]*```java[ \\t]*\\n(.*?)^[ \\t]*```[ \\t]*$",
            Pattern.DOTALL);
    private static final Pattern REGION = Pattern.compile(
            "(?m)^[ \\t]*// tag::([\\w-]+)\\[\\][ \\t]*\\n(.*?)^[ \\t]*// end::\\1\\[\\][ \\t]*$", Pattern.DOTALL);

    /** Stand-in of Spring's {@code @Bean}, for the recipe to compile here. */
    @Retention(RetentionPolicy.SOURCE)
    @interface Bean {
        String destroyMethod() default "";
    }

    /** Stand-in of Spring Boot's {@code NettyServerCustomizer}: the same shape. */
    @FunctionalInterface
    interface NettyServerCustomizer extends Function<HttpServer, HttpServer> {
    }

    @Test
    void theHttpServerExampleServesWithOneHandlerPerConnection() throws IOException {
        // tag::reactor-http-server[]
        HeartbeatMonitor monitor = HeartbeatMonitor.start(); // one per process
        HeartbeatConfig idle = ReactorHeartbeat.idleTimeout(Duration.ofSeconds(60)).build();
        DisposableServer server = ReactorHeartbeat.install(HttpServer.create().port(0), monitor, idle)
                .route(routes -> routes.get("/", (req, res) -> res.sendString(Mono.just("hello"))))
                .bindNow();
        // end::reactor-http-server[]
        try {
            assertEquals("hello", getOnce(server.port()));
            assertEquals(Duration.ofSeconds(60), idle.allIdle());
        } finally {
            server.disposeNow();
            monitor.close();
        }
    }

    @Test
    void theH2cExampleBuilds() {
        try (HeartbeatMonitor monitor = HeartbeatMonitor.start()) {
            // tag::reactor-h2c[]
            HeartbeatConfig http1 = ReactorHeartbeat.idleTimeout(Duration.ofSeconds(60))
                    .maxAge(Duration.ofMinutes(30)).maxAgeGrace(Duration.ofSeconds(30))
                    .build();
            HeartbeatConfig http2 = ReactorHeartbeat.idleTimeout(Duration.ofSeconds(60))
                    .maxAge(Duration.ofMinutes(30)).maxAgeGrace(Duration.ofSeconds(30))
                    .goodbye(Probes.http2()) // GOAWAY at max age, in a drain and before an idle close
                    .build();
            HttpServer h2c = ReactorHeartbeat.install(
                    HttpServer.create().protocol(HttpProtocol.HTTP11, HttpProtocol.H2C), monitor, http1, http2);
            // end::reactor-h2c[]
            assertTrue(h2c.configuration().doOnChannelInit() != null);
            assertTrue(http2.goodbye().isPresent());
        }
    }

    // tag::spring-boot[]
    @Bean(destroyMethod = "close")
    HeartbeatMonitor heartbeatMonitor() {
        return HeartbeatMonitor.start();
    }

    @Bean
    NettyServerCustomizer heartbeat(HeartbeatMonitor monitor) {
        HeartbeatConfig idle = ReactorHeartbeat.idleTimeout(Duration.ofSeconds(60)).build();
        return server -> ReactorHeartbeat.install(server, monitor, idle);
    }
    // end::spring-boot[]

    @Test
    void theSpringCustomizerInstallsHeartbeat() throws Exception {
        HeartbeatMonitor monitor = heartbeatMonitor();
        DisposableServer server = heartbeat(monitor).apply(HttpServer.create().host("127.0.0.1").port(0))
                .handle((req, res) -> res.sendString(Mono.just("hello")))
                .bindNow();
        try (Socket silent = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
            assertEquals("hello", getOnce(server.port()));
            long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (monitor.stats().channels() != 1 && System.nanoTime() - until < 0) {
                Thread.sleep(10); // the accept of the silent connection, real I/O
            }
            assertEquals(1, monitor.stats().channels(), "the silent connection " + silent + " has its handler");
        } finally {
            server.disposeNow();
            monitor.close();
        }
    }

    @Test
    void everyJavaBlockOfThePageIsATestedRegion() throws IOException {
        Map<String, String> regions = new LinkedHashMap<>();
        Matcher r = REGION.matcher(Files.readString(SOURCE, UTF_8));
        while (r.find()) {
            regions.put(r.group(1), dedent(r.group(2)));
        }
        List<String> problems = new ArrayList<>();
        TreeSet<String> unused = new TreeSet<>(regions.keySet());
        Matcher b = BLOCK.matcher(Files.readString(PAGE, UTF_8));
        while (b.find()) {
            String block = dedent(b.group(1));
            List<String> same = regions.entrySet().stream().filter(e -> e.getValue().equals(block))
                    .map(Map.Entry::getKey).collect(Collectors.toList());
            if (same.isEmpty()) {
                problems.add("a java block of " + PAGE + " is no tagged region of " + SOURCE.getFileName() + ":\n"
                        + block);
            }
            unused.removeAll(same);
        }
        unused.forEach(name -> problems.add("region " + name + " is not on " + PAGE));
        assertEquals(3, regions.size(), regions.keySet().toString());
        assertTrue(problems.isEmpty(), String.join("\n\n", problems));
    }

    /** {@code text} without the leading indentation its non-blank lines share, trailing blanks trimmed. */
    private static String dedent(String text) {
        List<String> lines = text.lines().map(String::stripTrailing).collect(Collectors.toList());
        int indent = lines.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent))
                .collect(Collectors.joining("\n")).strip();
    }

    /** One GET / on a new connection with {@code Connection: close}: the body. */
    private static String getOnce(int port) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(5_000);
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                    .getBytes(US_ASCII));
            String response = new String(s.getInputStream().readAllBytes(), US_ASCII);
            assertTrue(response.startsWith("HTTP/1.1 200"), response);
            return response.substring(response.indexOf("\r\n\r\n") + 4);
        }
    }
}
