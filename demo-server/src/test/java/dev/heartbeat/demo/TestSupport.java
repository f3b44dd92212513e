/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

import dev.heartbeat.netty.CloseReason;

/** Clients and polling for the server tests. */
final class TestSupport {

    /** The longest any single wait in these tests may take. */
    static final Duration PATIENCE = Duration.ofSeconds(5);

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(PATIENCE).build();

    private TestSupport() {
    }

    /** A server on OS-chosen ports, for tests. */
    static ServerConfig.Builder testConfig() {
        return ServerConfig.builder().host("127.0.0.1").port(0).metricsPort(0).workerThreads(2);
    }

    /** Polls (every 5 ms) until the condition holds, failing after {@link #PATIENCE}. */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out waiting for: " + what);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted waiting for: " + what);
            }
        }
    }

    static HttpResponse<String> get(DemoServer server, String path) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(uri(server, path)).GET());
    }

    static HttpResponse<String> post(DemoServer server, String path) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(uri(server, path)).POST(HttpRequest.BodyPublishers.noBody()));
    }

    private static URI uri(DemoServer server, String path) {
        return URI.create("http://127.0.0.1:" + server.metricsPort() + path);
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
        return HTTP.send(request.timeout(PATIENCE).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** GET /metrics, as sample ("name" or "name{labels}") to value. */
    static Map<String, Double> metrics(DemoServer server) {
        try {
            HttpResponse<String> res = get(server, "/metrics");
            assertEquals(200, res.statusCode(), res.body());
            return parse(res.body());
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static Map<String, Double> parse(String exposition) {
        Map<String, Double> samples = new HashMap<>();
        for (String line : (Iterable<String>) exposition.lines()::iterator) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int space = line.lastIndexOf(' ');
            samples.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
        return samples;
    }

    /** A metric sample, or NaN if absent. */
    static double sample(DemoServer server, String key) {
        return metrics(server).getOrDefault(key, Double.NaN);
    }

    /** A blocking line client with a read timeout of {@link #PATIENCE}. */
    static final class LineClient implements AutoCloseable {
        private final Socket socket;
        private final BufferedReader in;
        private final OutputStream out;

        LineClient(DemoServer server) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), server.port());
            socket.setSoTimeout((int) PATIENCE.toMillis());
            socket.setTcpNoDelay(true);
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            out = socket.getOutputStream();
        }

        void send(String line) throws IOException {
            sendBytes((line + "\n").getBytes(StandardCharsets.UTF_8));
        }

        void sendBytes(byte[] bytes) throws IOException {
            out.write(bytes);
            out.flush();
        }

        /** The next line, or null at end of stream (the server closed). */
        String readLine() throws IOException {
            try {
                return in.readLine();
            } catch (SocketTimeoutException e) {
                throw new AssertionError("no line from the server within " + PATIENCE, e);
            }
        }

        /** Reads the server's goodbye line naming {@code reason}, then its close. */
        void expectGoodbye(CloseReason reason) throws IOException {
            assertEquals(LineHandler.goodbye(reason), readLine(), "the goodbye before the close");
            expectClosed();
        }

        /** Reads until the server closes the connection, failing if it sends anything. */
        void expectClosed() throws IOException {
            String line;
            try {
                line = in.readLine();
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the server did not close the connection within " + PATIENCE, e);
            } catch (IOException reset) {
                return; // closed with RST: closed all the same
            }
            if (line != null) {
                fail("expected the server to close the connection, got a line: " + line);
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
