/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.reactor;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.probe.Probes;
import io.netty.channel.Channel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.tcp.TcpServer;

/**
 * Real Reactor Netty servers on 127.0.0.1 with {@link ReactorHeartbeat} installed, driven by Reactor's
 * {@link HttpClient} and by raw sockets: Reactor's {@code idleTimeout} semantics (an idle keep-alive
 * connection closed on time, a request slower than the timeout kept, a connection that never sends a
 * request closed), one handler per connection, HTTP/1.1 and h2c (prior knowledge and upgrade), the
 * HTTP/2 probe's pings and GOAWAY through Reactor's frame codec, and a {@link TcpServer}.
 *
 * <p>Real time: every wait polls what can be observed (end of stream, counters) against a bound, and
 * close times are checked in a window: not before the timeout (less what the client cannot see of the
 * server's last write), and within {@link #LATE} after it, for a shared 2-core machine.
 * {@code ./mvnw -B -o test -pl heartbeat-netty -Dtest=ReactorHeartbeatTest}.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReactorHeartbeatTest {

    /** The idle timeout of these servers. */
    private static final Duration IDLE = Duration.ofMillis(300);
    /** The slow route's answer time: over three idle timeouts. */
    private static final Duration SLOW = Duration.ofSeconds(1);
    /** How late a close may be on this machine. */
    private static final long LATE = 700;
    /** How much earlier than the timeout a client may see a close (the server's clock started first). */
    private static final long EARLY = 30;

    private HeartbeatMonitor monitor;
    private DisposableServer server;
    private final Queue<AutoCloseable> toClose = new ConcurrentLinkedQueue<>();

    @BeforeEach
    void startMonitor() {
        monitor = HeartbeatMonitor.start();
    }

    @AfterEach
    void stop() throws Exception {
        for (AutoCloseable c : toClose) {
            c.close();
        }
        if (server != null) {
            server.disposeNow(Duration.ofSeconds(5));
        }
        monitor.close();
    }

    // ---- HTTP/1.1

    @Test
    void anIdleKeepAliveConnectionIsClosedOnTime() throws Exception {
        startHttp(s -> s, ReactorHeartbeat.idleTimeout(IDLE).build());
        ConnectionProvider one = ConnectionProvider.create("idle", 1);
        toClose.add(() -> one.disposeLater().block(Duration.ofSeconds(5)));
        CompletableFuture<Long> closedAt = new CompletableFuture<>();
        HttpClient client = HttpClient.create(one).host("127.0.0.1").port(server.port())
                .doOnConnected(c -> c.onDispose(() -> closedAt.complete(System.nanoTime())));

        String body = client.get().uri("/").responseContent().aggregate().asString().block(Duration.ofSeconds(5));
        long answeredAt = System.nanoTime();
        assertEquals("ok", body);

        long closedAfter = millisBetween(answeredAt, closedAt.get(5, TimeUnit.SECONDS));
        assertOnTime(closedAfter, IDLE);
        assertEquals(1, monitor.stats().closed(CloseReason.ALL_IDLE));
    }

    @Test
    void aRequestSlowerThanTheTimeoutIsKeptAndTheConnectionClosedOnTimeAfterIt() throws Exception {
        startHttp(s -> s, ReactorHeartbeat.idleTimeout(IDLE).build());
        try (Socket socket = connect()) {
            long sent = System.nanoTime();
            get(socket, "/slow");
            assertEquals("slow", readResponse(socket.getInputStream()));
            long answeredAt = System.nanoTime();
            assertTrue(millisBetween(sent, answeredAt) >= SLOW.toMillis(), "answered before the slow route could");

            assertOnTime(millisBetween(answeredAt, awaitEndOfStream(socket)), IDLE);
        }
        assertTrue(monitor.closesHeld() >= 1, "the idle close was held while the request was in flight");
        assertEquals(1, monitor.stats().closed(CloseReason.ALL_IDLE));
    }

    @Test
    void aConnectionThatNeverSendsARequestIsClosed() throws Exception {
        startHttp(s -> s, ReactorHeartbeat.idleTimeout(IDLE).build());
        long connecting = System.nanoTime();
        try (Socket socket = connect()) {
            assertOnTime(millisBetween(connecting, awaitEndOfStream(socket)), IDLE);
        }
        assertEquals(1, monitor.stats().closed(CloseReason.ALL_IDLE));
        assertEquals(0, monitor.closesHeld());
    }

    @Test
    void eachConnectionHasOneHandlerWhateverItsRequests() throws Exception {
        Queue<Channel> connections = new ConcurrentLinkedQueue<>();
        AtomicInteger requests = new AtomicInteger();
        // Reactor runs doOnConnection for every request of an HttpServer: the channel is the connection's.
        startHttp(s -> s.doOnConnection(c -> {
            requests.incrementAndGet();
            if (!connections.contains(c.channel())) {
                connections.add(c.channel());
            }
        }), ReactorHeartbeat.idleTimeout(Duration.ofSeconds(10)).build());
        Socket[] sockets = {connect(), connect(), connect()};
        for (Socket s : sockets) {
            toClose.add(s);
        }
        for (int round = 0; round < 4; round++) {
            for (Socket s : sockets) {
                get(s, "/");
                assertEquals("ok", readResponse(s.getInputStream()));
            }
        }
        assertEquals(12, requests.get());
        assertEquals(3, connections.size());
        assertEquals(3, monitor.stats().channels(), "one Heartbeat handler per connection");
        for (Channel ch : connections) {
            // configOf throws unless the pipeline holds exactly one handler of this monitor.
            assertEquals(Duration.ofSeconds(10), monitor.configOf(ch).allIdle());
            List<String> names = ch.pipeline().names();
            assertTrue(names.indexOf(ReactorHeartbeat.HANDLER_NAME) < names.indexOf("reactor.left.httpCodec"),
                    "Heartbeat sees the bytes, before Reactor's codec: " + names);
        }
    }

    // ---- h2c

    @Test
    void anH2cConnectionIsHeldWhileAStreamIsOpenAndThenSaysGoawayWhenIdle() throws Exception {
        AtomicInteger connections = new AtomicInteger();
        HeartbeatConfig idle = ReactorHeartbeat.idleTimeout(IDLE).goodbye(Probes.http2()).build();
        startHttp(s -> s.protocol(HttpProtocol.H2C).doOnChannelInit((o, ch, a) -> connections.incrementAndGet()),
                idle);
        CompletableFuture<Long> closedAt = new CompletableFuture<>();
        ConnectionProvider one = ConnectionProvider.create("h2c", 1);
        toClose.add(() -> one.disposeLater().block(Duration.ofSeconds(5)));
        HttpClient client = HttpClient.create(one).protocol(HttpProtocol.H2C).host("127.0.0.1").port(server.port())
                .doOnConnected(c -> c.onDispose(() -> closedAt.complete(System.nanoTime())));

        // One request opens the connection; then two streams on it: the fast one ends at once, the slow one
        // after three idle timeouts.
        assertEquals("ok", client.get().uri("/").responseContent().aggregate().asString()
                .block(Duration.ofSeconds(5)));
        List<String> bodies = Flux.just("/", "/slow")
                .flatMap(uri -> client.get().uri(uri).responseContent().aggregate().asString())
                .collectList().block(Duration.ofSeconds(10));
        long answeredAt = System.nanoTime();
        assertTrue(bodies.contains("slow") && bodies.contains("ok"), "both answered: " + bodies);
        assertEquals(1, connections.get());

        assertOnTime(millisBetween(answeredAt, closedAt.get(5, TimeUnit.SECONDS)), IDLE);
        assertEquals(1, monitor.stats().closed(CloseReason.ALL_IDLE));
        assertTrue(monitor.closesHeld() >= 1, "held while the slow stream was open");
    }

    @Test
    void afterAnH2cUpgradeHeartbeatPingsThroughReactorsFrameCodec() throws Exception {
        Queue<Channel> connections = new ConcurrentLinkedQueue<>();
        HeartbeatConfig pings = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofMillis(100))
                .ackMode(AckMode.MATCHED_ONLY).build();
        startHttp(s -> s.protocol(HttpProtocol.HTTP11, HttpProtocol.H2C)
                        .doOnChannelInit((o, ch, a) -> connections.add(ch)),
                ReactorHeartbeat.idleTimeout(Duration.ofSeconds(10)).build(), pings);
        // HTTP/1.1 and h2c on the client: the first request upgrades the connection.
        HttpClient client = HttpClient.create().protocol(HttpProtocol.HTTP11, HttpProtocol.H2C)
                .host("127.0.0.1").port(server.port());
        toClose.add(() -> client.configuration().connectionProvider().disposeLater().block(Duration.ofSeconds(5)));
        assertEquals("ok", client.get().uri("/").responseContent().aggregate().asString()
                .block(Duration.ofSeconds(5)));

        // MATCHED_ONLY: only PING ACKs that reach the handler settle its pings, so the handler must have moved
        // after the Http2FrameCodec (before it, the placement check would have closed the connection).
        await(() -> monitor.stats().pings("http2").acked() >= 3, Duration.ofSeconds(5), "three pings acked");
        assertEquals(1, connections.size());
        Channel ch = connections.peek();
        assertTrue(ch.isOpen());
        assertEquals(1, monitor.stats().channels(), "the HTTP/1.1 handler was replaced, not added to");
        assertEquals(HeartbeatConfig.Policy.PING, monitor.configOf(ch).policy());
        assertTrue(monitor.rttOf(ch).isPresent(), "the ACKs were matched and timed");
        assertEquals(0, monitor.stats().pings("http2").missed());
    }

    @Test
    void atMaxAgeAnH2cConnectionIsToldGoawayAndClosed() throws Exception {
        HeartbeatConfig aged = ReactorHeartbeat.idleTimeout(Duration.ofSeconds(10)).maxAge(Duration.ofMillis(400))
                .goodbye(Probes.http2()).build();
        startHttp(s -> s.protocol(HttpProtocol.H2C), aged);
        long connecting = System.nanoTime();
        try (Socket socket = connect()) {
            OutputStream out = socket.getOutputStream();
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(US_ASCII));
            out.write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // an empty SETTINGS frame
            out.flush();
            boolean goaway = false;
            InputStream in = socket.getInputStream();
            byte[] header = new byte[9];
            while (readFully(in, header)) {
                int length = (header[0] & 0xff) << 16 | (header[1] & 0xff) << 8 | (header[2] & 0xff);
                goaway |= header[3] == 7;
                in.readNBytes(length);
            }
            long closedAfter = millisBetween(connecting, System.nanoTime());
            assertTrue(goaway, "a GOAWAY frame before the end of the stream");
            assertOnTime(closedAfter, Duration.ofMillis(400));
        }
        assertEquals(1, monitor.stats().closed(CloseReason.MAX_AGE));
    }

    // ---- TCP

    @Test
    void aTcpServerClosesItsSilentConnectionsAndKeepsTalkingOnes() throws Exception {
        HeartbeatConfig idle = HeartbeatConfig.closeWhenIdle().readerIdle(IDLE).build();
        server = ReactorHeartbeat.install(TcpServer.create().host("127.0.0.1").port(0), monitor, idle)
                .handle((in, out) -> out.send(in.receive().retain()))
                .bindNow(Duration.ofSeconds(10));
        long connecting = System.nanoTime();
        try (Socket silent = connect(); Socket talking = connect()) {
            CompletableFuture<Long> silentClosedAt = CompletableFuture.supplyAsync(() -> {
                try {
                    return awaitEndOfStream(silent);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            long until = System.nanoTime() + 3 * IDLE.toNanos();
            while (System.nanoTime() - until < 0) { // a byte every third of the timeout, echoed
                talking.getOutputStream().write('x');
                assertEquals('x', talking.getInputStream().read());
                Thread.sleep(IDLE.toMillis() / 3); // the client's pace, not a wait for a timer
            }
            assertOnTime(millisBetween(connecting, silentClosedAt.get(5, TimeUnit.SECONDS)), IDLE);
            talking.getOutputStream().write('y');
            assertEquals('y', talking.getInputStream().read(), "the talking connection is still open");
        }
        assertEquals(1, monitor.stats().closed(CloseReason.READER_IDLE));
    }

    @Test
    void aSecureServerOfferingHttp2IsRefused() throws Exception {
        // A context with no key: never used for a handshake, only to make the server secure.
        javax.net.ssl.KeyManagerFactory keys = javax.net.ssl.KeyManagerFactory.getInstance(
                javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
        keys.init(null, null);
        io.netty.handler.ssl.SslContext tls = io.netty.handler.ssl.SslContextBuilder.forServer(keys).build();
        HttpServer h2 = HttpServer.create().protocol(HttpProtocol.H2).secure(spec -> spec.sslContext(tls));
        assertThrows(IllegalArgumentException.class,
                () -> ReactorHeartbeat.install(h2, monitor, ReactorHeartbeat.idleTimeout(IDLE).build()));
    }

    // ---- helpers

    private void startHttp(UnaryOperator<HttpServer> setup, HeartbeatConfig config) {
        startHttp(setup, config, config);
    }

    private void startHttp(UnaryOperator<HttpServer> setup, HeartbeatConfig http1, HeartbeatConfig http2) {
        HttpServer base = setup.apply(HttpServer.create().host("127.0.0.1").port(0))
                .route(r -> r.get("/", (req, res) -> res.sendString(Mono.just("ok")))
                        .get("/slow", (req, res) -> res.sendString(Mono.delay(SLOW).map(x -> "slow"))));
        server = ReactorHeartbeat.install(base, monitor, http1, http2).bindNow(Duration.ofSeconds(10));
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket(java.net.InetAddress.getLoopbackAddress(), server.port());
        socket.setSoTimeout(5_000);
        return socket;
    }

    private static void get(Socket socket, String path) throws IOException {
        socket.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(US_ASCII));
        socket.getOutputStream().flush();
    }

    /** Reads one HTTP/1.1 response (Content-Length or chunked) and returns its body. */
    private static String readResponse(InputStream in) throws IOException {
        String head = readUntil(in, "\r\n\r\n").toLowerCase(java.util.Locale.ROOT);
        assertTrue(head.startsWith("http/1.1 200"), head);
        if (head.contains("transfer-encoding: chunked")) {
            StringBuilder body = new StringBuilder();
            for (int size; (size = Integer.parseInt(readUntil(in, "\r\n").trim(), 16)) > 0; ) {
                body.append(new String(in.readNBytes(size), US_ASCII));
                readUntil(in, "\r\n");
            }
            readUntil(in, "\r\n");
            return body.toString();
        }
        int at = head.indexOf("content-length:");
        assertTrue(at >= 0, head);
        int length = Integer.parseInt(head.substring(at + 15, head.indexOf("\r\n", at)).trim());
        return new String(in.readNBytes(length), US_ASCII);
    }

    private static String readUntil(InputStream in, String end) throws IOException {
        StringBuilder s = new StringBuilder();
        while (!s.toString().endsWith(end)) {
            int b = in.read();
            if (b < 0) {
                fail("end of stream inside a response: " + s);
            }
            s.append((char) b);
        }
        return s.toString();
    }

    private static boolean readFully(InputStream in, byte[] into) throws IOException {
        try {
            return in.readNBytes(into, 0, into.length) == into.length;
        } catch (java.net.SocketException e) {
            return false; // reset by the server's close
        }
    }

    /** Reads until the server closes: returns when (nanoTime), or fails after the socket's timeout. */
    private static long awaitEndOfStream(Socket socket) throws IOException {
        try {
            while (socket.getInputStream().read() >= 0) {
                // discard: nothing more is expected
            }
        } catch (SocketTimeoutException e) {
            fail("still open after " + socket.getSoTimeout() + " ms");
        } catch (java.net.SocketException e) {
            // reset: closed all the same
        }
        return System.nanoTime();
    }

    private static void assertOnTime(long closedAfterMillis, Duration timeout) {
        assertTrue(closedAfterMillis >= timeout.toMillis() - EARLY, "closed early: after " + closedAfterMillis
                + " ms, timeout " + timeout.toMillis() + " ms");
        assertTrue(closedAfterMillis <= timeout.toMillis() + LATE, "closed late: after " + closedAfterMillis
                + " ms, timeout " + timeout.toMillis() + " ms");
    }

    private static long millisBetween(long fromNanos, long toNanos) {
        return TimeUnit.NANOSECONDS.toMillis(toNanos - fromNanos);
    }

    private static void await(BooleanSupplier condition, Duration bound, String what) throws InterruptedException {
        long until = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - until > 0) {
                fail("not within " + bound + ": " + what);
            }
            Thread.sleep(10);
        }
    }
}
