/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import dev.heartbeat.netty.JitterMode;
import dev.heartbeat.netty.probe.Probes;
import io.grpc.Attributes;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.netty.GrpcHttp2ConnectionHandler;
import io.grpc.netty.InternalProtocolNegotiator;
import io.grpc.netty.InternalProtocolNegotiators;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.AsciiString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Heartbeat under a real grpc-java server ({@code grpc-netty}, unshaded), on 127.0.0.1, with a real grpc-java
 * client and a raw socket for a dead peer. The route in is gRPC's {@code @Internal} protocol negotiator; the
 * probe is {@link Probes#http2ConnectionHandler()}. The tagged regions are the examples of
 * {@code docs/integrations/grpc.md} (checked by {@code DocExamplesTest}).
 */
class GrpcHeartbeatTest {

    // tag::grpc-negotiator[]
    /**
     * gRPC's plaintext negotiation, plus a Heartbeat handler right after it: once the negotiation has put
     * gRPC's NettyServerHandler in its place, Heartbeat's handler is the next one, where the probe needs it.
     */
    static final class HeartbeatNegotiator implements InternalProtocolNegotiator.ProtocolNegotiator {
        private final InternalProtocolNegotiator.ProtocolNegotiator plaintext =
                InternalProtocolNegotiators.serverPlaintext();
        private final HeartbeatMonitor monitor;
        private final HeartbeatConfig config;

        HeartbeatNegotiator(HeartbeatMonitor monitor, HeartbeatConfig config) {
            this.monitor = monitor;
            this.config = config;
        }

        @Override
        public AsciiString scheme() {
            return plaintext.scheme();
        }

        @Override
        public ChannelHandler newHandler(GrpcHttp2ConnectionHandler grpcHandler) {
            ChannelHandler negotiation = plaintext.newHandler(grpcHandler);
            return new ChannelHandlerAdapter() {
                @Override
                public void handlerAdded(ChannelHandlerContext ctx) {
                    ctx.pipeline().addAfter(ctx.name(), "heartbeat", monitor.newHandler(config));
                    ctx.pipeline().replace(this, null, negotiation); // becomes gRPC's NettyServerHandler
                }
            };
        }

        @Override
        public void close() {
            plaintext.close();
        }
    }
    // end::grpc-negotiator[]

    /** Counts the server's connections and when they end (ms since the test began). */
    static final class Transports extends ServerTransportFilter {
        final AtomicInteger ready = new AtomicInteger();
        final List<Long> terminated = new ArrayList<>();
        final CountDownLatch firstTerminated = new CountDownLatch(1);
        final long start = System.nanoTime();

        @Override
        public Attributes transportReady(Attributes attributes) {
            ready.incrementAndGet();
            return attributes;
        }

        @Override
        public void transportTerminated(Attributes attributes) {
            synchronized (terminated) {
                terminated.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            }
            firstTerminated.countDown();
        }
    }

    private static final MethodDescriptor.Marshaller<String> UTF8 = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    };
    /** Answers after the number of milliseconds its request names. */
    private static final MethodDescriptor<String, String> SLEEP = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY).setFullMethodName("heartbeat.Test/Sleep")
            .setRequestMarshaller(UTF8).setResponseMarshaller(UTF8).build();

    private final Transports transports = new Transports();
    private HeartbeatMonitor monitor;
    private Server server;
    private ManagedChannel client;

    @AfterEach
    void tearDown() throws InterruptedException {
        if (client != null) {
            client.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (server != null) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (monitor != null) {
            monitor.close();
        }
    }

    private static ServerServiceDefinition service() {
        return ServerServiceDefinition.builder("heartbeat.Test")
                .addMethod(SLEEP, ServerCalls.asyncUnaryCall((request, response) -> {
                    try {
                        Thread.sleep(Long.parseLong(request)); // the server's work: a real RPC in flight
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    response.onNext(request);
                    response.onCompleted();
                })).build();
    }

    private int start(HeartbeatConfig config) throws IOException {
        return start(config, b -> { });
    }

    private int start(HeartbeatConfig config, java.util.function.Consumer<NettyServerBuilder> options)
            throws IOException {
        int port = 0; // any free one
        monitor = HeartbeatMonitor.builder().build().startWorker();
        // tag::grpc-server[]
        NettyServerBuilder builder = NettyServerBuilder.forPort(port)
                .protocolNegotiator(new HeartbeatNegotiator(monitor, config)); // @Internal in grpc-netty
        // end::grpc-server[]
        options.accept(builder);
        Server server = builder.addService(service()).addTransportFilter(transports).build().start();
        this.server = server;
        return server.getPort();
    }

    private String call(int port, String millis) {
        if (client == null) {
            client = NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
                    .usePlaintext().build();
        }
        return ClientCalls.blockingUnaryCall(client, SLEEP, io.grpc.CallOptions.DEFAULT.withDeadlineAfter(10,
                TimeUnit.SECONDS), millis);
    }

    private static HeartbeatConfig.Builder pings() {
        return HeartbeatConfig.ping(Probes.http2ConnectionHandler()).interval(Duration.ofMillis(200))
                .timeout(Duration.ofMillis(500)).maxMissedPings(1).ackMode(AckMode.MATCHED_ONLY);
    }

    @Test
    void grpcsKeepAliveAndMaxAgeInHeartbeatsTerms() {
        // tag::grpc-preset[]
        // NettyServerBuilder.keepAliveTime(2, HOURS).keepAliveTimeout(20, SECONDS)
        //         .maxConnectionAge(30, MINUTES).maxConnectionAgeGrace(30, SECONDS), in Heartbeat's terms:
        HeartbeatConfig config = HeartbeatConfig.ping(Probes.http2ConnectionHandler())
                .interval(Duration.ofHours(2))                   // keepAliveTime
                .timeout(Duration.ofSeconds(20))                 // keepAliveTimeout
                .maxMissedPings(1)                               // gRPC closes after one unanswered ping
                .ackMode(AckMode.MATCHED_ONLY)                   // only the ACKs reach Heartbeat
                .maxAge(Duration.ofMinutes(30))                  // maxConnectionAge,
                .maxAgeJitter(0.1, JitterMode.SYMMETRIC)         // which gRPC jitters by +-10%
                .maxAgeGrace(Duration.ofSeconds(30))             // maxConnectionAgeGrace
                .build();
        // end::grpc-preset[]
        assertEquals(Duration.ofHours(2), config.pingInterval());
        assertEquals(Duration.ofSeconds(30), config.maxAgeGrace());
        assertEquals(0.1, config.maxAgeJitter());
    }

    @Test
    void keepAlivePingsAreAckedByTheGrpcClientAndTheConnectionStays() throws Exception {
        int port = start(pings().build());
        assertEquals("0", call(port, "0"));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (monitor.stats().pingsSent() < 7 && System.nanoTime() - until < 0) {
            Thread.sleep(10); // real I/O: 7 pings at 200 ms, each acked or not by the client
        }
        assertEquals("0", call(port, "0"));

        assertTrue(monitor.stats().pingsSent() >= 4, "pinged: " + monitor.stats().pingsSent());
        assertEquals(0, monitor.stats().closedPingTimeout(), "every ping acked by the client's NettyClientHandler");
        assertEquals(1, transports.ready.get(), "one connection for both calls");
        assertEquals(List.of(), transports.terminated);
    }

    @Test
    void aDeadPeerIsClosedWithGoAway() throws Exception {
        int port = start(pings().build());
        try (Socket peer = new Socket(InetAddress.getLoopbackAddress(), port)) {
            peer.setSoTimeout(10_000);
            OutputStream out = peer.getOutputStream();
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[] {0, 0, 0, 4, 0, 0, 0, 0, 0}); // an empty SETTINGS frame; then silence
            out.flush();
            long start = System.nanoTime();
            List<String> frames = readFramesUntilClosed(new DataInputStream(peer.getInputStream()));
            long closedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertTrue(frames.contains("PING"), "Heartbeat pinged: " + frames);
            assertTrue(frames.contains("GOAWAY NO_ERROR PING_TIMEOUT"), "said why: " + frames);
            // interval 200 ms + answer timeout 500 ms, then the GOAWAY and the close (no wait for streams).
            assertTrue(closedMs >= 600 && closedMs < 3000, "closed after the missed ping: " + closedMs + " ms");
        }
        assertEquals(1, monitor.stats().closedPingTimeout());
    }

    @Test
    void maxAgeSaysGoAwayAndTheCallInFlightFinishesInTheGrace() throws Exception {
        int port = start(pings().maxAge(Duration.ofMillis(500)).maxAgeGrace(Duration.ofSeconds(3)).build());
        // A call of 1.2 s, begun before the maximum age and ending in the grace.
        assertEquals("1200", call(port, "1200"));
        assertTrue(transports.firstTerminated.await(5, TimeUnit.SECONDS), "the old connection closed");
        long closedAt = transports.terminated.get(0);
        assertTrue(closedAt >= 1200 && closedAt < 3500, "closed when its call ended, in the grace: " + closedAt);
        System.out.println("max age with a grpc-java client: closed at " + closedAt + " ms");

        assertEquals("0", call(port, "0"), "the client reconnects for the next call");
        assertEquals(2, transports.ready.get());
    }

    @Test
    void aCallStartedBetweenTheTwoGoAwaysOfMaxAgeSucceeds() throws Exception {
        int port = start(pings().maxAge(Duration.ofMillis(500)).maxAgeGrace(Duration.ofSeconds(3)).build());
        // A raw HTTP/2 client, which answers SETTINGS and PINGs as a client's Netty does, and starts a gRPC call
        // (Sleep 300 ms, stream 1) as it reads the first GOAWAY, before it acks the PING after it: the call a client
        // begins while the first GOAWAY travels. One GOAWAY (last stream 0) would refuse it.
        try (Socket peer = new Socket(InetAddress.getLoopbackAddress(), port)) {
            peer.setSoTimeout(10_000);
            OutputStream out = peer.getOutputStream();
            DataInputStream in = new DataInputStream(peer.getInputStream());
            out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            frame(out, 4, 0, 0, new byte[0]); // SETTINGS
            out.flush();
            long start = System.nanoTime();
            List<String> frames = new ArrayList<>();
            List<Long> goAwayMs = new ArrayList<>();
            String response = null;
            try {
                while (true) {
                    int length = (in.readUnsignedShort() << 8) | in.readUnsignedByte();
                    int type = in.readUnsignedByte();
                    int flags = in.readUnsignedByte();
                    int stream = in.readInt();
                    byte[] payload = in.readNBytes(length);
                    switch (type) {
                        case 0 -> {
                            frames.add("DATA " + stream);
                            response = new String(payload, 5, payload.length - 5, StandardCharsets.UTF_8);
                        }
                        case 1 -> frames.add("HEADERS " + stream);
                        case 3 -> frames.add("RST_STREAM " + stream);
                        case 4 -> {
                            if ((flags & 1) == 0) {
                                frame(out, 4, 1, 0, new byte[0]); // SETTINGS ACK
                            }
                        }
                        case 6 -> {
                            if ((flags & 1) == 0) {
                                frames.add("PING");
                                frame(out, 6, 1, 0, payload); // PING ACK
                            }
                        }
                        case 7 -> {
                            int last = java.nio.ByteBuffer.wrap(payload).getInt() & Integer.MAX_VALUE;
                            long code = java.nio.ByteBuffer.wrap(payload, 4, 4).getInt() & 0xFFFFFFFFL;
                            frames.add("GOAWAY " + io.netty.handler.codec.http2.Http2Error.valueOf(code) + " "
                                    + new String(payload, 8, payload.length - 8, StandardCharsets.US_ASCII)
                                    + " last " + last);
                            goAwayMs.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
                            if (last == Integer.MAX_VALUE) {
                                frames.add("(call on stream 1)");
                                startCall(out, 1, "300");
                            }
                        }
                        default -> { } // WINDOW_UPDATE
                    }
                    out.flush();
                }
            } catch (EOFException | java.net.SocketException closed) {
                // the server closed
            }
            long closedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            int first = frames.indexOf("GOAWAY NO_ERROR MAX_AGE last 2147483647");
            int second = frames.indexOf("GOAWAY NO_ERROR MAX_AGE last 1");
            assertTrue(first >= 0 && second > first, "two GOAWAYs, the second naming stream 1: " + frames);
            assertEquals("PING", frames.get(first + 2), "a PING after the first GOAWAY (and our call): " + frames);
            assertEquals("300", response, "the call started between them was served: " + frames);
            assertTrue(frames.indexOf("DATA 1") > second, "its answer came after the second GOAWAY: " + frames);
            assertEquals(-1, frames.indexOf("RST_STREAM 1"), "not refused: " + frames);
            assertTrue(goAwayMs.get(0) >= 450 && goAwayMs.get(0) < 1500, "first GOAWAY at max age: " + goAwayMs);
            assertTrue(closedMs - goAwayMs.get(0) >= 300 && closedMs < 3000,
                    "closed when the call ended, in the grace: " + closedMs + " ms, GOAWAYs at " + goAwayMs);
            System.out.println("two-phase max age: frames " + frames + ", GOAWAYs at " + goAwayMs + " ms, closed at "
                    + closedMs + " ms");
        }
    }

    @Test
    void aGrpcClientPingingTooOftenGetsTooManyPingsFromGrpcsEnforcerAndDoublesItsKeepAlive() throws Exception {
        // Heartbeat's handler and probe in place, pinging once a minute (a grpc-java client pings only after
        // keepAliveTime without reading anything, so a server that pings it more often than that never sees its
        // pings); the client's pings are policed by gRPC's own KeepAliveEnforcer, which reads them in
        // NettyServerHandler's frame listener, where Heartbeat's PingPolicing cannot see them
        // (docs/integrations/grpc.md). The client pings every 10 s (grpc-java's least), the server permits one a
        // minute and forgives two strikes: GOAWAY too_many_pings at the client's second keep-alive ping, 20 s (the
        // enforcer counted a third too-early ping we did not identify, perhaps a flow-control ping of the first call).
        List<java.util.logging.LogRecord> backoffs = new java.util.concurrent.CopyOnWriteArrayList<>();
        CountDownLatch backedOff = new CountDownLatch(1);
        java.util.logging.Logger log = java.util.logging.Logger.getLogger("io.grpc.internal.AtomicBackoff");
        java.util.logging.Handler sink = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                backoffs.add(record);
                backedOff.countDown();
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(sink);
        try {
            int port = start(pings().interval(Duration.ofMinutes(1)).build(),
                    b -> b.permitKeepAliveTime(1, TimeUnit.MINUTES).permitKeepAliveWithoutCalls(true));
            client = NettyChannelBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))
                    .usePlaintext().keepAliveTime(10, TimeUnit.SECONDS).keepAliveWithoutCalls(true).build();
            assertEquals("0", call(port, "0"));

            assertTrue(transports.firstTerminated.await(45, TimeUnit.SECONDS), "closed for too many pings");
            long closedAt = transports.terminated.get(0);
            assertTrue(closedAt >= 19_000 && closedAt < 35_000,
                    "at the client's second keep-alive ping: " + closedAt + " ms");
            assertTrue(backedOff.await(5, TimeUnit.SECONDS), "the client backed off");
            assertEquals(1, backoffs.size(), "once: " + backoffs);
            assertEquals(20_000_000_000L, backoffs.get(0).getParameters()[1],
                    "its keep-alive time doubled, 10 s to 20 s: " + backoffs.get(0).getParameters()[0]);
            assertEquals(0, monitor.stats().closedPingTimeout());
            assertEquals("0", call(port, "0"), "the client reconnects");
            assertEquals(2, transports.ready.get());
            System.out.println("too_many_pings: closed at " + closedAt + " ms, client backoff "
                    + java.util.Arrays.toString(backoffs.get(0).getParameters()));
        } finally {
            log.removeHandler(sink);
        }
    }

    /** Writes one HTTP/2 frame. */
    private static void frame(OutputStream out, int type, int flags, int stream, byte[] payload) throws IOException {
        out.write(new byte[] {(byte) (payload.length >>> 16), (byte) (payload.length >>> 8), (byte) payload.length,
                (byte) type, (byte) flags, (byte) (stream >>> 24), (byte) (stream >>> 16), (byte) (stream >>> 8),
                (byte) stream});
        out.write(payload);
    }

    /** A unary call of {@code Sleep} on {@code stream}: HEADERS (HPACK literals, no indexing), then one DATA. */
    private static void startCall(OutputStream out, int stream, String request) throws IOException {
        java.io.ByteArrayOutputStream headers = new java.io.ByteArrayOutputStream();
        String[][] fields = {{":method", "POST"}, {":scheme", "http"}, {":path", "/heartbeat.Test/Sleep"},
            {":authority", "localhost"}, {"content-type", "application/grpc"}, {"te", "trailers"}};
        for (String[] field : fields) {
            headers.write(0); // literal without indexing, new name
            for (String part : field) {
                byte[] bytes = part.getBytes(StandardCharsets.US_ASCII);
                headers.write(bytes.length); // < 127: one byte, not Huffman-coded
                headers.write(bytes);
            }
        }
        frame(out, 1, 0x4, stream, headers.toByteArray()); // END_HEADERS
        byte[] message = request.getBytes(StandardCharsets.UTF_8);
        byte[] data = new byte[5 + message.length]; // not compressed, then the length
        data[4] = (byte) message.length;
        System.arraycopy(message, 0, data, 5, message.length);
        frame(out, 0, 0x1, stream, data); // END_STREAM
    }

    /** Reads HTTP/2 frames (9-byte headers) until the server closes: each as its type, GOAWAYs with code and data. */
    private static List<String> readFramesUntilClosed(DataInputStream in) throws IOException {
        List<String> frames = new ArrayList<>();
        try {
            while (true) {
                int length = (in.readUnsignedShort() << 8) | in.readUnsignedByte();
                int type = in.readUnsignedByte();
                in.readUnsignedByte(); // flags
                in.readInt(); // stream id
                byte[] payload = in.readNBytes(length);
                switch (type) {
                    case 6 -> frames.add("PING");
                    case 7 -> {
                        long code = ((payload[4] & 0xFFL) << 24) | ((payload[5] & 0xFF) << 16)
                                | ((payload[6] & 0xFF) << 8) | (payload[7] & 0xFF);
                        frames.add("GOAWAY " + io.netty.handler.codec.http2.Http2Error.valueOf(code) + " "
                                + new String(payload, 8, payload.length - 8, StandardCharsets.US_ASCII));
                    }
                    default -> frames.add("type " + type);
                }
            }
        } catch (EOFException | java.net.SocketException closed) {
            return frames;
        }
    }
}
