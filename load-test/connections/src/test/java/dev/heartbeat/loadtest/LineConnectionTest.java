/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;

import dev.heartbeat.netty.CloseReason;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

class LineConnectionTest {

    private static void feed(LineConnection c, byte[] bytes) {
        for (byte b : bytes) {
            c.process(b);
        }
    }

    private static void feed(LineConnection c, String ascii) {
        feed(c, ascii.getBytes(StandardCharsets.US_ASCII));
    }

    private static ClientLoop newLoop(EmbeddedChannel ch) {
        return new ClientLoop(ch.eventLoop(), Scenario.builder().build(), new RunWindow(), new ClientProgress());
    }

    @Test
    void recognisesTheServersLinesAndNothingElse() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            ClientLoop loop = newLoop(ch);
            LineConnection c = new LineConnection(0, Role.PINGFLOOD, false);
            c.loop = loop;
            feed(c, "PONG\nPONG\r\nPON\nPONGS\nPING\nPINGPONG\nERR line too\n");
            assertFalse(c.refusedLine(), "only the whole ERR line counts");
            feed(c, new byte[] {LineConnection.JUNK_START, 'P', 'O', 'N', 'G', (byte) 0x80, '\n', '7', 'x', '\n'});
            feed(c, "ERR line too long\n");
            assertTrue(c.refusedLine());
            LineConnection dying = new LineConnection(1, Role.DYING, true);
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

    @Test
    void keepsTheReasonOfTheServersGoodbye() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            LineConnection c = new LineConnection(0, Role.SILENT, true);
            c.loop = newLoop(ch);
            feed(c, "BYE\nBYE \nBYE PING\nBYE PING_TIMEOUTS\nbye PING_TIMEOUT\n");
            assertNull(c.goodbye(), "no reason named");
            feed(c, "BYE PING_TIMEOUT\n");
            assertEquals(CloseReason.PING_TIMEOUT, c.goodbye());
            feed(c, "BYE READER_IDLE\r\n");
            assertEquals(CloseReason.READER_IDLE, c.goodbye(), "the latest, CR tolerated");
            for (CloseReason r : CloseReason.values()) {
                feed(c, "BYE " + r.name() + "\n");
                assertEquals(r, c.goodbye());
            }
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
