/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import static dev.heartbeat.demo.TestSupport.PATIENCE;
import static dev.heartbeat.demo.TestSupport.await;
import static dev.heartbeat.demo.TestSupport.sample;
import static dev.heartbeat.demo.TestSupport.testConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.testing.LeakDetection;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code --probe websocket} over real TCP, for Heartbeat and the Netty A/B impl alike: the JDK's own
 * WebSocket client (which answers Pings by itself) gets its text echoed and stays open while pinged,
 * giving the server round trips for {@code /metrics}; a client that did the upgrade and then says
 * nothing gets two Pings, then a Close frame 1001 naming {@code PING_TIMEOUT}, then the close.
 * Short timeouts and blocking reads with a bounded wait; nothing sleeps for a timer.
 */
@ExtendWith(LeakDetection.class)
class WebSocketServerTest {

    private static final int OPCODE_CLOSE = 0x8;
    private static final int OPCODE_PING = 0x9;

    @ParameterizedTest
    @EnumSource(names = {"HEARTBEAT", "NETTY"})
    void pingsPongsEchoesAndTheGoodbye(ServerConfig.IdleImpl impl) throws Exception {
        try (DemoServer server = DemoServer.start(testConfig().idleImpl(impl).protocol(ServerConfig.Protocol.WEBSOCKET)
                .policy(ServerConfig.Policy.PING).pingInterval(Duration.ofMillis(150))
                .pingTimeout(Duration.ofMillis(250)).maxMissedPings(2).build())) {
            BlockingQueue<String> echoes = new LinkedBlockingQueue<>();
            WebSocket answering = HttpClient.newHttpClient().newWebSocketBuilder()
                    .buildAsync(URI.create("ws://127.0.0.1:" + server.port() + ServerConfig.WEBSOCKET_PATH),
                            new WebSocket.Listener() {
                                @Override
                                public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                                    echoes.add(data.toString());
                                    ws.request(1);
                                    return null;
                                }
                            })
                    .get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
            answering.sendText("hello", true);
            assertEquals("hello", echoes.poll(PATIENCE.toMillis(), TimeUnit.MILLISECONDS));

            try (SilentWebSocket silent = new SilentWebSocket(server)) {
                assertEquals(OPCODE_PING, silent.readFrame()[0]);
                assertEquals(OPCODE_PING, silent.readFrame()[0], "the first one missed");
                byte[] close = silent.readFrame();
                assertEquals(OPCODE_CLOSE, close[0], "the goodbye");
                assertEquals(1001, ((close[1] & 0xFF) << 8) | (close[2] & 0xFF), "going away");
                assertEquals(CloseReason.PING_TIMEOUT.name(),
                        new String(close, 3, close.length - 3, StandardCharsets.UTF_8));
                silent.expectEnd();
            }
            await("the ping-timeout close counted",
                    () -> sample(server, "demo_connections_closed_total{reason=\"ping_timeout\"}") == 1);
            await("round trips of the answering client's Pongs",
                    () -> sample(server, PingRtt.NAME + "_count") >= 2);
            assertTrue(sample(server, PingRtt.NAME + "_max") > 0);
            answering.sendText("still here", true); // pinged all along, answered: open
            assertEquals("still here", echoes.poll(PATIENCE.toMillis(), TimeUnit.MILLISECONDS));
            answering.abort();
        }
    }

    /** A client that does the upgrade, then only reads: the server's frames, unmasked, one at a time. */
    private static final class SilentWebSocket implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;

        SilentWebSocket(DemoServer server) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), server.port());
            socket.setSoTimeout((int) PATIENCE.toMillis());
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + ServerConfig.WEBSOCKET_PATH + " HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            in = new DataInputStream(socket.getInputStream());
            StringBuilder head = new StringBuilder();
            while (!head.toString().endsWith("\r\n\r\n")) {
                head.append((char) in.readUnsignedByte());
            }
            assertTrue(head.toString().startsWith("HTTP/1.1 101"), head.toString());
        }

        /** The next frame: its opcode, then its payload (at most 125 bytes: control frames). */
        byte[] readFrame() throws IOException {
            int opcode = in.readUnsignedByte() & 0x0F;
            int length = in.readUnsignedByte() & 0x7F;
            assertTrue(length < 126, "a short frame");
            byte[] frame = new byte[length + 1];
            frame[0] = (byte) opcode;
            in.readFully(frame, 1, length);
            return frame;
        }

        void expectEnd() throws IOException {
            try {
                int b = in.read();
                assertEquals(-1, b, "nothing after the goodbye but the close");
            } catch (EOFException | SocketException closed) {
                // closed with a reset: closed all the same
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
