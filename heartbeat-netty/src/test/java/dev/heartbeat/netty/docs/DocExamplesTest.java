/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.AdaptiveKeepAlive;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatCloseEvent;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.micrometer.HeartbeatMetrics;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.JitterMode;
import dev.heartbeat.netty.MqttKeepAlive;
import dev.heartbeat.netty.PingPolicing;
import dev.heartbeat.netty.probe.Probes;
import dev.heartbeat.netty.Rtt;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttEncoder;
import io.netty.handler.timeout.IdleStateEvent;
import org.junit.jupiter.api.Test;

/**
 * Every Java example of the README and of the user guide ({@code heartbeat-netty/docs/}) is a tagged region
 * of this file ({@code // tag::name[]} ... {@code // end::name[]}): {@link #everyJavaBlockOfTheDocsIsATestedRegion}
 * fails on a {@code ```java} block that is not, modulo leading indentation, one of these regions, so an example
 * that no longer compiles cannot stay in the docs. The other tests run the examples, in virtual time where they
 * do something over time (a {@code manual()} monitor on a {@link ManualTicker}, {@link EmbeddedChannel}s).
 * Only the public API is used: the package is not {@code dev.heartbeat.netty}.
 */
class DocExamplesTest {

    /** The module's directory: Surefire runs the tests there. */
    private static final Path MODULE = Path.of("").toAbsolutePath();
    private static final Path SOURCE = MODULE.resolve("src/test/java/dev/heartbeat/netty/docs/DocExamplesTest.java");
    /** The integrations' examples are tested beside their integration's own tests. */
    private static final Path REACTOR_SOURCE =
            MODULE.resolve("src/test/java/dev/heartbeat/netty/reactor/ReactorNettyDocExamplesTest.java");
    private static final Path GRPC_SOURCE =
            MODULE.resolve("src/test/java/dev/heartbeat/netty/grpc/GrpcHeartbeatTest.java");
    private static final Pattern BLOCK = Pattern.compile("(?m)^[ \\t]*```java[ \\t]*\\n(.*?)^[ \\t]*```[ \\t]*$",
            Pattern.DOTALL);
    private static final Pattern REGION = Pattern.compile(
            "(?m)^[ \\t]*// tag::([\\w-]+)\\[\\][ \\t]*\\n(.*?)^[ \\t]*// end::\\1\\[\\][ \\t]*$", Pattern.DOTALL);

    // ---------------------------------------------------------------------------------------------------
    // The check: docs against this file.

    /** The markdown files whose Java examples must be tested: the README and the user guide. */
    static List<Path> documents() throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(MODULE.resolveSibling("README.md"));
        try (Stream<Path> guide = Files.walk(MODULE.resolve("docs"))) {
            guide.filter(p -> p.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** The tagged regions of {@code source}, by name, each without its common leading indentation. */
    static Map<String, String> regions(String source) {
        Map<String, String> regions = new LinkedHashMap<>();
        Matcher m = REGION.matcher(source);
        while (m.find()) {
            regions.put(m.group(1), dedent(m.group(2)));
        }
        return regions;
    }

    /** The {@code ```java} blocks of a markdown text, each without its common leading indentation. */
    static List<String> javaBlocks(String markdown) {
        List<String> blocks = new ArrayList<>();
        Matcher m = BLOCK.matcher(markdown);
        while (m.find()) {
            blocks.add(dedent(m.group(1)));
        }
        return blocks;
    }

    /** {@code text} without the leading indentation its non-blank lines share, trailing blanks trimmed. */
    static String dedent(String text) {
        List<String> lines = text.lines().map(String::stripTrailing).collect(Collectors.toList());
        int indent = lines.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(indent))
                .collect(Collectors.joining("\n")).strip();
    }

    /**
     * The problems of {@code docs} against the regions of {@code source}: a Java block that is no region, and a
     * region no document shows (an example kept in the test but dropped from the docs).
     */
    static List<String> problems(Map<String, String> docs, String source) {
        Map<String, String> regions = regions(source);
        List<String> problems = new ArrayList<>();
        TreeSet<String> unused = new TreeSet<>(regions.keySet());
        docs.forEach((name, text) -> {
            List<String> blocks = javaBlocks(text);
            for (int i = 0; i < blocks.size(); i++) {
                String block = blocks.get(i);
                List<String> same = regions.entrySet().stream().filter(e -> e.getValue().equals(block))
                        .map(Map.Entry::getKey).collect(Collectors.toList());
                if (same.isEmpty()) {
                    problems.add(name + ": java block " + (i + 1) + " is no tagged region of DocExamplesTest.java "
                            + "(nearest: " + nearest(block, regions) + "):\n" + block);
                }
                unused.removeAll(same);
            }
        });
        unused.forEach(r -> problems.add("region " + r + " of DocExamplesTest.java is in no document"));
        return problems;
    }

    /** The region whose first line is {@code block}'s, to point at what drifted. */
    private static String nearest(String block, Map<String, String> regions) {
        String first = block.lines().findFirst().orElse("");
        return regions.entrySet().stream().filter(e -> e.getValue().lines().findFirst().orElse("").equals(first))
                .map(Map.Entry::getKey).findFirst().orElse("none with the same first line");
    }

    @Test
    void everyJavaBlockOfTheDocsIsATestedRegion() throws IOException {
        Map<String, String> docs = new LinkedHashMap<>();
        for (Path p : documents()) {
            docs.put(MODULE.getParent().relativize(p).toString(), Files.readString(p, StandardCharsets.UTF_8));
        }
        String source = Files.readString(SOURCE, StandardCharsets.UTF_8) + "\n"
                + Files.readString(REACTOR_SOURCE, StandardCharsets.UTF_8) + "\n"
                + Files.readString(GRPC_SOURCE, StandardCharsets.UTF_8);
        assertTrue(docs.size() >= 10, "the README and the guide's pages: " + docs.keySet());
        assertTrue(regions(source).size() >= 15, "the tagged regions: " + regions(source).keySet());
        List<String> problems = problems(docs, source);
        assertTrue(problems.isEmpty(), String.join("\n\n", problems));
    }

    @Test
    void theCheckItselfFindsADriftedExampleAndAnUnusedRegion() {
        String source = "class X {\n    void a() {\n        // tag::a[]\n        int x = 1;\n          x++;\n"
                + "        // end::a[]\n    }\n    // tag::b[]\n    int y;\n    // end::b[]\n}\n";
        String good = "text\n\n  ```java\n  int x = 1;\n    x++;\n  ```\n\n```java\nint y;\n```\n";
        assertEquals(List.of(), problems(Map.of("good.md", good), source));
        String drifted = "```java\nint x = 2;\n  x++;\n```\n";
        List<String> problems = problems(Map.of("bad.md", drifted), source);
        assertEquals(3, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("bad.md: java block 1 is no tagged region"), problems.get(0));
        assertTrue(problems.get(1).startsWith("region a of"), problems.get(1));
        assertTrue(problems.get(2).startsWith("region b of"), problems.get(2));
    }

    /** A link of the guide to a test: {@code [`Name`](path/Name.java)} or {@code [`Name.method`](path/Name.java)}. */
    private static final Pattern TEST_LINK = Pattern.compile("\\[`(\\w+)(?:\\.(\\w+))?`\\]\\(([^)]+\\.java)\\)");

    @Test
    void everyTestTheGuideLinksExistsWithTheNamedMethod() throws IOException {
        int links = 0;
        for (Path doc : documents()) {
            Matcher m = TEST_LINK.matcher(Files.readString(doc, StandardCharsets.UTF_8));
            while (m.find()) {
                Path target = doc.getParent().resolve(m.group(3)).normalize();
                assertTrue(Files.isRegularFile(target), doc.getFileName() + " links to a missing file: " + m.group(3));
                String source = Files.readString(target, StandardCharsets.UTF_8);
                assertTrue(source.contains(" " + m.group(1) + " ") || source.contains(" " + m.group(1) + "<"),
                        doc.getFileName() + ": no " + m.group(1) + " in " + m.group(3));
                if (m.group(2) != null) {
                    assertTrue(Pattern.compile("\\b" + m.group(2) + "\\s*\\(|class " + m.group(2) + "\\b")
                            .matcher(source).find(), doc.getFileName() + ": no " + m.group(2) + " in " + m.group(3));
                }
                links++;
            }
        }
        assertTrue(links >= 50, "links to tests from the guide: " + links);
    }

    // ---------------------------------------------------------------------------------------------------
    // A virtual world for the examples that act over time.

    /** A manual monitor on a ticker, without timer slack, and a way to let time pass for some channels. */
    private static final class World implements AutoCloseable {
        final ManualTicker ticker = new ManualTicker(0);
        final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
                .maxCoalescing(Duration.ZERO).build();

        /** Lets {@code d} pass in 1 ms steps, a worker cycle after each, then runs {@code ch}'s actions. */
        void advance(Duration d, EmbeddedChannel ch) {
            for (long ms = d.toMillis(); ms > 0; ms--) {
                ticker.advance(1, TimeUnit.MILLISECONDS);
                monitor.runOnce();
                ch.runPendingTasks();
            }
        }

        @Override
        public void close() {
            monitor.close();
        }
    }

    /** Records the user events that reach the end of the pipeline. */
    static final class MyHandler extends ChannelInboundHandlerAdapter {
        final List<Object> events = new ArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            events.add(evt);
        }
    }

    /** The application's frame handler of the WebSocket example. */
    static final class MyFrameHandler extends ChannelInboundHandlerAdapter {
    }

    /** The broker of the MQTT example. */
    static final class MyBroker extends ChannelInboundHandlerAdapter {
    }

    // ---------------------------------------------------------------------------------------------------
    // README and migrating-from-idlestatehandler.md

    static HeartbeatConfig swap(Channel ch) {
        // tag::swap[]
        HeartbeatMonitor monitor = HeartbeatMonitor.start();                 // once per process
        HeartbeatConfig idle = HeartbeatConfig.events()                       // IdleStateHandler's semantics
                .readerIdle(Duration.ofSeconds(60)).writerIdle(Duration.ofSeconds(30)).build();

        ch.pipeline().addLast("idle", monitor.newHandler(idle));   // was: new IdleStateHandler(60, 30, 0)
        ch.pipeline().addLast(new MyHandler());                     // its userEventTriggered is unchanged
        // ... serve ...
        monitor.close();                                            // at shutdown
        // end::swap[]
        return idle;
    }

    @Test
    void theSwapFiresIdleStateHandlersEvents() {
        EmbeddedChannel installed = new EmbeddedChannel();
        HeartbeatConfig idle = swap(installed); // as written: a real monitor, started and closed
        assertNotNull(installed.pipeline().get("idle"));
        assertNotNull(installed.pipeline().get(MyHandler.class));
        installed.finishAndReleaseAll();

        try (World w = new World()) { // the same configuration, in virtual time
            MyHandler app = new MyHandler();
            EmbeddedChannel ch = new EmbeddedChannel(w.monitor.newHandler(idle), app);
            w.advance(Duration.ofMillis(30_010), ch);
            assertEquals(List.of(IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT), app.events);
            w.advance(Duration.ofSeconds(30), ch);
            assertTrue(app.events.contains(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT), app.events.toString());
            ch.finishAndReleaseAll();
        }
    }

    static boolean reconfigure(HeartbeatMonitor monitor, Channel ch, Runnable loggedIn) {
        // tag::reconfigure[]
        HeartbeatConfig login = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10)).build();
        HeartbeatConfig session = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5)).build();
        ch.pipeline().addLast("idle", monitor.newHandler(login));     // a 10 s deadline to log in
        // ... once the peer has logged in, from any thread:
        boolean switched = monitor.reconfigure(ch, session);          // false if the channel closed meanwhile
        // end::reconfigure[]
        loggedIn.run();
        return switched;
    }

    @Test
    void aReconfiguredChannelHasItsNewTimeout() {
        try (World w = new World()) {
            EmbeddedChannel ch = new EmbeddedChannel();
            assertTrue(reconfigure(w.monitor, ch, ch::runPendingTasks));
            w.advance(Duration.ofSeconds(30), ch);
            assertTrue(ch.isOpen(), "the login deadline no longer applies");
            w.advance(Duration.ofMinutes(5), ch);
            assertFalse(ch.isOpen(), "closed after 5 min of silence");
            ch.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // policy-close-when-idle.md

    static HeartbeatConfig closeWhenIdle() {
        // tag::close-when-idle[]
        HeartbeatConfig close = HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofSeconds(60))       // was: new ReadTimeoutHandler(60)
                .withTimeoutExceptions()                  // fire ReadTimeoutException first, as ReadTimeoutHandler
                .build();
        // end::close-when-idle[]
        return close;
    }

    static Object goodbye(CloseReason reason) {
        return "BYE " + reason + "\n";
    }

    /** The application's own goodbye, for configurations without a goodbye probe. */
    static final class SaysGoodbye extends ChannelInboundHandlerAdapter {
        // tag::close-event[]
        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof HeartbeatCloseEvent close) {   // its reason(): READER_IDLE, PING_TIMEOUT, ...
                ctx.writeAndFlush(goodbye(close.reason()));      // no goodbye probe; still open
            }
            ctx.fireUserEventTriggered(evt);
        }
        // end::close-event[]
    }

    @Test
    void anIdleCloseSaysWhyFirst() {
        try (World w = new World()) {
            List<Throwable> caught = new ArrayList<>();
            EmbeddedChannel ch = new EmbeddedChannel(w.monitor.newHandler(closeWhenIdle()), new SaysGoodbye(),
                    new ChannelInboundHandlerAdapter() {
                        @Override
                        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                            caught.add(cause);
                        }
                    });
            w.advance(Duration.ofMillis(60_010), ch);
            assertFalse(ch.isOpen());
            assertEquals("BYE READER_IDLE\n", ch.readOutbound());
            assertEquals(1, caught.size(), caught.toString());
            assertEquals("ReadTimeoutException", caught.get(0).getClass().getSimpleName());
            ch.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // policy-ping.md

    static HeartbeatConfig ping() {
        // tag::ping[]
        HeartbeatConfig pings = HeartbeatConfig.ping(channel -> "PING\n")   // a PingFactory: your protocol's ping
                .interval(Duration.ofSeconds(30))                            // after 30 s without a read
                .timeout(Duration.ofSeconds(5)).maxMissedPings(2)            // closed after 2 unanswered for 5 s each
                .build();
        // end::ping[]
        return pings;
    }

    @Test
    void aSilentPeerIsPingedThenClosed() {
        try (World w = new World()) {
            EmbeddedChannel ch = new EmbeddedChannel(w.monitor.newHandler(ping()));
            w.advance(Duration.ofMillis(30_010), ch);
            assertEquals("PING\n", ch.readOutbound());
            w.advance(Duration.ofSeconds(5), ch);
            assertEquals("PING\n", ch.readOutbound(), "the second ping after the first went unanswered");
            assertTrue(ch.isOpen());
            w.advance(Duration.ofSeconds(5), ch);
            assertFalse(ch.isOpen(), "closed for PING_TIMEOUT");
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void anAnsweringPeerStaysOpen() {
        try (World w = new World()) {
            EmbeddedChannel ch = new EmbeddedChannel(w.monitor.newHandler(ping()));
            for (int i = 0; i < 5; i++) {
                w.advance(Duration.ofMillis(30_010), ch);
                assertEquals("PING\n", ch.readOutbound());
                ch.writeInbound("PONG\n"); // any read answers a PingFactory's ping (ANY_INBOUND)
                assertEquals("PONG\n", ch.readInbound());
            }
            assertTrue(ch.isOpen());
            ch.finishAndReleaseAll();
        }
    }

    static HeartbeatConfig clientKeepAlive() {
        // tag::keep-alive-and-liveness[]
        HeartbeatConfig client = HeartbeatConfig.ping(Probes.http2()).whenWriterIdle()
                .interval(Duration.ofSeconds(20))              // a PING after 20 s without a write: keeps NATs open
                .closeWhenReaderIdle(Duration.ofMinutes(2))     // closed (READER_IDLE) after 2 min without a read
                .build();
        // end::keep-alive-and-liveness[]
        return client;
    }

    static HeartbeatConfig adaptiveTimeout() {
        // tag::adaptive-timeout[]
        HeartbeatConfig ws = HeartbeatConfig.ping(Probes.webSocket()).interval(Duration.ofSeconds(30))
                .ackMode(AckMode.MATCHED_ONLY)                                       // only the Pong settles a ping
                .adaptiveTimeout(Duration.ofMillis(500), Duration.ofSeconds(10))   // SRTT + 4 x RTTVAR
                .build();
        // end::adaptive-timeout[]
        return ws;
    }

    @Test
    void theProbeConfigurationsBuild() {
        assertEquals(Duration.ofMinutes(2), clientKeepAlive().closeWhenReaderIdle());
        assertTrue(clientKeepAlive().pingWhenWriterIdle());
        assertEquals(AckMode.MATCHED_ONLY, adaptiveTimeout().ackMode());
        assertEquals(Duration.ofMillis(500), adaptiveTimeout().adaptiveTimeoutMin());
    }

    // ---------------------------------------------------------------------------------------------------
    // ping-policing.md

    static PingPolicing policing(HeartbeatMonitor monitor, Channel ch) {
        Http2FrameCodec http2FrameCodec = Http2FrameCodecBuilder.forServer().build();
        // tag::policing[]
        PingPolicing policing = PingPolicing.builder(Probes.http2())      // or webSocket(), mqttClient() (PINGREQ)
                .minInterval(Duration.ofMinutes(5))                 // gRPC's defaults: 5 min,
                .permitWithoutTraffic(false).maxStrikes(2).build();   // 2 h without traffic, 2 strikes
        ch.pipeline().addLast(http2FrameCodec, policing.newHandler(monitor));   // after the codec
        // end::policing[]
        return policing;
    }

    @Test
    void thePolicingHasGrpcsDefaults() {
        try (World w = new World()) {
            EmbeddedChannel ch = new EmbeddedChannel();
            PingPolicing policing = policing(w.monitor, ch);
            assertEquals(Duration.ofMinutes(5), policing.minInterval());
            assertEquals(Duration.ofHours(2), policing.minIntervalWithoutTraffic());
            assertEquals(2, policing.maxStrikes());
            assertEquals(2, ch.pipeline().names().size() - 1, ch.pipeline().names().toString()); // codec, policing
            ch.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // adaptive-keep-alive.md

    static HeartbeatConfig adaptiveInterval() {
        // tag::adaptive-interval[]
        AdaptiveKeepAlive<SocketAddress> tuner = AdaptiveKeepAlive.builder().build();   // one per client, shared
        HeartbeatConfig nat = HeartbeatConfig.ping(Probes.http2()).whenWriterIdle()
                .interval(Duration.ofSeconds(30))              // until the tuner knows the peer
                .adaptiveInterval(tuner)                       // then the interval learned for its remote address
                .build();
        // end::adaptive-interval[]
        return nat;
    }

    @Test
    void theAdaptiveIntervalConfigurationBuilds() {
        assertTrue(adaptiveInterval().pingWhenWriterIdle());
    }

    // ---------------------------------------------------------------------------------------------------
    // lifecycle-guards.md

    static HeartbeatConfig guards(HeartbeatMonitor monitor) {
        // tag::lifecycle[]
        HeartbeatConfig cfg = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(30))
                .maxAge(Duration.ofMinutes(30)).maxAgeJitter(0.1, JitterMode.SYMMETRIC)   // gRPC's 0.9-1.1 x
                .maxAgeGrace(Duration.ofMinutes(1))
                .writeStall(Duration.ofSeconds(30))        // bytes pending, none sent for 30 s: WRITE_STALL
                .maxUnwritable(Duration.ofMinutes(2))      // !isWritable() for 2 min: UNWRITABLE
                .build();
        monitor.drain(Duration.ofSeconds(60));             // rolling restart: every channel closed, spread over 60 s
        // end::lifecycle[]
        return cfg;
    }

    @Test
    void theGuardsConfigurationBuildsAndADrainCloses() {
        try (World w = new World()) {
            EmbeddedChannel ch = new EmbeddedChannel(w.monitor.newHandler(
                    HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(10)).build()));
            HeartbeatConfig cfg = guards(w.monitor);
            assertEquals(Duration.ofMinutes(30), cfg.maxAge());
            w.advance(Duration.ofSeconds(61), ch);
            assertFalse(ch.isOpen(), "drained within the window");
            ch.finishAndReleaseAll();
        }
    }

    static int requestsInFlight;

    static int requestsInFlight(Channel channel) {
        return requestsInFlight;
    }

    static HeartbeatConfig veto() {
        // tag::hold-while[]
        HeartbeatConfig held = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5))
                .holdWhile(channel -> requestsInFlight(channel) > 0)   // Armeria's rule: asked again every second
                .maxCloseHold(Duration.ofMinutes(5))                    // then closed without asking
                .build();
        // end::hold-while[]
        return held;
    }

    @Test
    void aCloseIsHeldWhileRequestsAreInFlight() {
        try (World w = new World()) {
            EmbeddedChannel ch = new EmbeddedChannel(w.monitor.newHandler(veto()));
            requestsInFlight = 1;
            w.advance(Duration.ofMinutes(6), ch);
            assertTrue(ch.isOpen(), "held: a request is in flight");
            requestsInFlight = 0;
            w.advance(Duration.ofSeconds(2), ch);
            assertFalse(ch.isOpen(), "closed once none is");
            ch.finishAndReleaseAll();
        } finally {
            requestsInFlight = 0;
        }
    }

    static HeartbeatMonitor budget() {
        // tag::action-budget[]
        HeartbeatMonitor monitor = HeartbeatMonitor.builder()
                .actionBudget(5_000)      // at most 5,000 pings, closes, idle events and goodbyes a second
                .build().startWorker();
        // end::action-budget[]
        return monitor;
    }

    @Test
    void aMonitorWithABudgetStarts() {
        HeartbeatMonitor monitor = budget();
        assertEquals(0, monitor.deferredActions());
        monitor.close();
    }

    static void overload(HeartbeatMonitor monitor) {
        // tag::overload[]
        monitor.reduceIdleTimeouts(0.5);   // overloaded: closeWhenIdle channels closed once idle half their timeout
        // ... and when the load has passed:
        monitor.reduceIdleTimeouts(1);
        // end::overload[]
    }

    @Test
    void overloadScalesIdleClosesUntilEnded() {
        try (World w = new World()) {
            EmbeddedChannel ch = new EmbeddedChannel(w.monitor.newHandler(
                    HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10)).build()));
            overload(w.monitor);
            assertEquals(1.0, w.monitor.idleTimeoutFactor());
            w.monitor.reduceIdleTimeouts(0.5);
            w.advance(Duration.ofMillis(5_100), ch);
            assertFalse(ch.isOpen(), "closed at half its timeout");
            assertEquals(1, w.monitor.overloadCloses());
            ch.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // protocols-and-probes.md

    static Optional<Rtt> http2(HeartbeatMonitor monitor, ChannelPipeline p) {
        Channel channel = p.channel();
        // tag::http2-probe[]
        HeartbeatConfig h2 = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(30))
                .timeout(Duration.ofSeconds(10)).maxMissedPings(1).ackMode(AckMode.MATCHED_ONLY).build();
        p.addLast(Http2FrameCodecBuilder.forServer().build());
        p.addLast("heartbeat", monitor.newHandler(h2));       // after the codec: sees PING ACK frames
        // ... later, from any thread:
        Optional<Rtt> rtt = monitor.rttOf(channel);           // smoothed RTT and variation, RFC 6298
        // end::http2-probe[]
        return rtt;
    }

    static void webSocket(HeartbeatMonitor monitor, ChannelPipeline p, HeartbeatConfig connectDeadline) {
        // tag::websocket-pipeline[]
        p.addLast(new HttpServerCodec(), new HttpObjectAggregator(65536));
        p.addLast("heartbeat", monitor.newHandler(connectDeadline));   // sees Pongs, not yet dropped
        p.addLast(new WebSocketServerProtocolHandler("/ws"));
        p.addLast(new MyFrameHandler());
        // end::websocket-pipeline[]
    }

    static void mqtt(HeartbeatMonitor monitor, ChannelPipeline p, HeartbeatConfig connectDeadline) {
        // tag::mqtt-keep-alive[]
        MqttKeepAlive keepAlive = MqttKeepAlive.of(monitor);            // or .builder(monitor).multiplier(2).build()
        p.addLast("heartbeat", monitor.newHandler(connectDeadline));    // e.g. close after 10 s without CONNECT
        p.addLast(new MqttDecoder(), MqttEncoder.INSTANCE);
        p.addLast(keepAlive);                                           // right after MqttDecoder; sharable
        p.addLast(new MyBroker());                                      // still gets CONNECT, and answers PINGREQ
        // end::mqtt-keep-alive[]
    }

    @Test
    void theProtocolPipelinesAreBuiltAsShown() {
        try (World w = new World()) {
            HeartbeatConfig connectDeadline = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10))
                    .build();
            EmbeddedChannel h2 = new EmbeddedChannel();
            assertEquals(Optional.empty(), http2(w.monitor, h2.pipeline()), "no answer yet: no RTT");
            EmbeddedChannel ws = new EmbeddedChannel();
            webSocket(w.monitor, ws.pipeline(), connectDeadline);
            EmbeddedChannel mqtt = new EmbeddedChannel();
            mqtt(w.monitor, mqtt.pipeline(), connectDeadline);
            for (EmbeddedChannel ch : List.of(h2, ws, mqtt)) {
                ch.runPendingTasks(); // the placement check
                assertTrue(ch.isOpen(), ch.pipeline().names().toString());
                assertNotNull(ch.pipeline().get("heartbeat"));
            }
            w.advance(Duration.ofMillis(10_010), mqtt);
            assertFalse(mqtt.isOpen(), "no CONNECT within the deadline");
            h2.finishAndReleaseAll();
            ws.finishAndReleaseAll();
            mqtt.finishAndReleaseAll();
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // metrics.md

    static void metrics(HeartbeatMonitor monitor, MeterRegistry registry) {
        // tag::metrics[]
        new HeartbeatMetrics(monitor).bindTo(registry);   // or (monitor, Tags.of("server", "gateway"))
        // end::metrics[]
    }

    @Test
    void theMetricsBind() {
        try (World w = new World()) {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            metrics(w.monitor, registry);
            assertEquals(0.0, registry.get("heartbeat.connections.tracked").gauge().value());
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // tuning.md

    @SuppressWarnings("deprecation") // NioEventLoopGroup is deprecated in Netty 4.2 (CI's step 7), not in 4.1
    static HeartbeatMonitor hosted(List<EventLoopGroup> made) {
        // tag::hosted[]
        EventLoopGroup workers = new NioEventLoopGroup();
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().hostedBy(workers.next()).build().startWorker();
        // end::hosted[]
        made.add(workers);
        return monitor;
    }

    static HeartbeatMonitor tuned() {
        // tag::tuning[]
        HeartbeatMonitor monitor = HeartbeatMonitor.builder()
                .tick(Duration.ofMillis(1))               // the wheel's resolution (2^20 ns by default)
                .maxCoalescing(Duration.ofMillis(16))     // the checks' shared grid, at most (2^24 ns)
                .lazyHandOffs(false)                      // the default: a batch of actions wakes its event loop
                .build().startWorker();
        // end::tuning[]
        return monitor;
    }

    static HeartbeatMonitor coarse() {
        // tag::coarse-write-clock[]
        HeartbeatMonitor monitor = HeartbeatMonitor.builder()
                .coarseWriteClock(Duration.ofMillis(16))  // writes stamped with a time the worker publishes
                .build().startWorker();
        // end::coarse-write-clock[]
        return monitor;
    }

    @Test
    void theTunedAndHostedMonitorsStartAndClose() throws InterruptedException {
        List<EventLoopGroup> made = new ArrayList<>();
        HeartbeatMonitor hosted = hosted(made);
        hosted.close();
        assertTrue(hosted.isClosed());
        made.get(0).shutdownGracefully(0, 0, TimeUnit.MILLISECONDS).sync();
        HeartbeatMonitor tuned = tuned();
        tuned.close();
        assertTrue(tuned.isClosed());
        HeartbeatMonitor coarse = coarse();
        coarse.close();
        assertTrue(coarse.isClosed());
    }
}
