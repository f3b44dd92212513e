/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class ClientConnectionTest {

    private static void feed(ClientConnection c, byte[] bytes) {
        for (byte b : bytes) {
            c.process(b);
        }
    }

    private static void feed(ClientConnection c, String ascii) {
        feed(c, ascii.getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void recognisesTheServersLinesAndNothingElse() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            ClientLoop loop = new ClientLoop(ch.eventLoop(), Scenario.builder().build(), new RunWindow(),
                    new ClientProgress());
            ClientConnection c = new ClientConnection(0, Role.PINGFLOOD, false);
            c.loop = loop;
            feed(c, "PONG\nPONG\r\nPON\nPONGS\nPING\nPINGPONG\nERR line too\n");
            assertFalse(c.refusedLine(), "only the whole ERR line counts");
            feed(c, new byte[] {ClientConnection.JUNK_START, 'P', 'O', 'N', 'G', (byte) 0x80, '\n', '7', 'x', '\n'});
            feed(c, "ERR line too long\n");
            assertTrue(c.refusedLine());
            ClientConnection dying = new ClientConnection(1, Role.DYING, true);
            dying.loop = loop;
            feed(dying, "PONG\n");
            ClientResult r = loop.finish();
            assertEquals(2, r.floodPongs, "PONG and PONG\\r, not the dying one's echoed keep-alive");
            assertEquals(1, r.pingsByRole[Role.PINGFLOOD.ordinal()], "PING, not PINGPONG");
            assertEquals(1, r.junkEchoes);
            assertEquals(0, r.echoesReceived, "7x is not a number");
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
