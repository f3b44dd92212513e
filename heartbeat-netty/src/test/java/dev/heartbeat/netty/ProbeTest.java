/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static dev.heartbeat.netty.Probe.NOT_AN_ANSWER;
import static dev.heartbeat.netty.Probe.UNSOLICITED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.nio.charset.StandardCharsets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.handler.codec.string.StringEncoder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The matching rules every probe shares, and the custom and line probes on Netty's line codecs. */
class ProbeTest {

    /** A line protocol whose pings carry their token: "PING 42" is answered by "PONG 42". */
    static final class NumberedLineProbe extends Probe {
        NumberedLineProbe() {
            super(Matching.BY_TOKEN, true);
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) {
            return "PING " + Long.toUnsignedString(token) + "\n";
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return msg instanceof String s && s.startsWith("PONG ");
        }

        @Override
        protected long tokenOf(Object answer) {
            return Long.parseUnsignedLong(((String) answer).substring(5));
        }
    }

    /** Server side of a line protocol: decodes lines to Strings, encodes Strings. */
    private final EmbeddedChannel ch = new EmbeddedChannel(new LineBasedFrameDecoder(1024),
            new StringDecoder(StandardCharsets.UTF_8), new StringEncoder(StandardCharsets.UTF_8));

    @AfterEach
    void tearDown() {
        ch.finishAndReleaseAll();
    }

    /** Writes the probe's ping from the tail, as the handler does, and returns the bytes on the wire. */
    private String ping(Probe probe, long token) throws Exception {
        ch.writeAndFlush(probe.newPing(ch.pipeline().lastContext(), token));
        ByteBuf out = ch.readOutbound();
        try {
            return out.toString(StandardCharsets.UTF_8);
        } finally {
            out.release();
        }
    }

    /** Feeds a line from the peer and returns what reached the end of the pipeline. */
    private Object receive(String line) {
        ch.writeInbound(Unpooled.copiedBuffer(line, StandardCharsets.UTF_8));
        return ch.readInbound();
    }

    @Test
    void shouldMatchATokenEchoedByALineProtocol() throws Exception {
        Probe probe = new NumberedLineProbe();
        long token = -3; // 2^64 - 3 as text: tokens are any 64-bit value
        assertEquals("PING 18446744073709551613\n", ping(probe, token));

        assertEquals(0, probe.classify(receive("PONG 18446744073709551613\n"), token, 1), "the latest ping");
        assertTrue(probe.consumes(0));
        assertEquals(UNSOLICITED, probe.classify(receive("PONG 7\n"), token, 1), "someone else's ping");
        assertFalse(probe.consumes(UNSOLICITED));
        assertEquals(NOT_AN_ANSWER, probe.classify(receive("hello\n"), token, 1));
        assertFalse(probe.consumes(NOT_AN_ANSWER));
    }

    @Test
    void shouldTellTheAgeOfTheAnsweredPingAcrossTokenWrapAround() {
        Probe probe = new NumberedLineProbe();
        long latest = Long.MIN_VALUE + 1; // the two pings before it carried MIN_VALUE and MAX_VALUE
        String older = "PONG " + Long.toUnsignedString(Long.MAX_VALUE);
        assertEquals(2, probe.classify(older, latest, 3), "written two pings before the latest");
        assertEquals(1, probe.classify("PONG " + Long.toUnsignedString(Long.MIN_VALUE), latest, 3));
        assertEquals(UNSOLICITED, probe.classify(older, latest, 2), "settled already: not waiting any more");
        assertEquals(UNSOLICITED, probe.classify("PONG " + Long.toUnsignedString(latest + 1), latest, 3),
                "a token ahead of the latest is not ours");
        assertEquals(UNSOLICITED, probe.classify("PONG " + Long.toUnsignedString(latest), latest, 0),
                "nothing waits");
    }

    @Test
    void shouldMatchAnswersWithoutTokenOldestFirst() throws Exception {
        Probe probe = Probes.custom(c -> "PING\n", "PONG"::equals);
        assertEquals(Probe.Matching.IN_ORDER, probe.matching());
        assertEquals("PING\n", ping(probe, 123));

        Object pong = receive("PONG\n");
        assertEquals(0, probe.classify(pong, 123, 1), "one waiting: it is the latest");
        assertEquals(2, probe.classify(pong, 123, 3), "three waiting: it answers the oldest, two before the latest");
        assertEquals(UNSOLICITED, probe.classify(pong, 123, 0));
        assertTrue(probe.consumes(2));
        assertEquals(NOT_AN_ANSWER, probe.classify(receive("PING\n"), 123, 1), "the peer's own ping");
    }

    @Test
    void shouldPassCustomAnswersOnWhenAsked() {
        Probe probe = Probes.custom(c -> "STATUS\n", m -> m instanceof String s && s.startsWith("OK"), false);
        int c = probe.classify(receive("OK 12 clients\n"), 0, 1);
        assertEquals(0, c);
        assertFalse(probe.consumes(c), "the application wants the status too");
    }

    @Test
    void shouldAdaptAPingFactoryWithoutRecognisingAnswers() throws Exception {
        Probe probe = Probes.of(c -> "PING\n");
        assertEquals(Probe.Matching.NONE, probe.matching());
        assertEquals("PING\n", ping(probe, 1));
        assertEquals(NOT_AN_ANSWER, probe.classify(receive("PONG\n"), 1, 1));
        assertFalse(AckMode.ANY_INBOUND.needsMatching());
        assertTrue(AckMode.MATCHED_ONLY.needsMatching());
        assertTrue(AckMode.MATCHED_EXTENDS.needsMatching());
    }

    @Test
    void shouldReportMissingAnswersOncePerProbe() {
        Probe probe = Probes.custom(c -> "PING\n", "PONG"::equals);
        assertFalse(probe.reportMissingAnswers(ch, Probe.MISPLACEMENT_PINGS - 1), "too few pings to tell");
        assertTrue(probe.reportMissingAnswers(ch, Probe.MISPLACEMENT_PINGS));
        assertFalse(probe.reportMissingAnswers(ch, Probe.MISPLACEMENT_PINGS + 1), "logged once, not per channel");
        assertTrue(Probes.custom(c -> "PING\n", "PONG"::equals).reportMissingAnswers(ch, 10),
                "another probe reports its own");
    }

    @Test
    void shouldShareTheBuiltInProbes() {
        assertSame(Probes.http2(), Probes.http2());
        assertSame(Probes.webSocket(), Probes.webSocket());
        assertSame(Probes.mqttClient(), Probes.mqttClient());
        assertEquals(Probe.Matching.BY_TOKEN, Probes.http2().matching());
        assertEquals(Probe.Matching.BY_TOKEN, Probes.webSocket().matching());
        assertEquals(Probe.Matching.IN_ORDER, Probes.mqttClient().matching());
    }
}
