/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.HeartbeatHandler;
import dev.heartbeat.netty.engine.ProbeState;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The probe state keeps the unanswered count and the ever-answered flag in one word (so that it is
 * 48 bytes): every change of the count must keep the flag, which decides whether a channel whose
 * answers stop is reported as a misplaced probe. Driven directly on an active channel's state.
 */
class ProbeStateTest {

    private final ManualTicker ticker = new ManualTicker(-1_000);
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
    private EmbeddedChannel channel;

    /** Plain-text pings answered in order; counts the misplacement reports the state asks for. */
    static final class CountingProbe extends Probe {
        int reports;

        CountingProbe() {
            super(Matching.IN_ORDER, true);
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) {
            return "PING";
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return "PONG".equals(msg);
        }

        @Override
        boolean reportMissingAnswers(Channel ch, int pingsWithoutAnswer) {
            reports++;
            return super.reportMissingAnswers(ch, pingsWithoutAnswer);
        }
    }

    @AfterEach
    void tearDown() {
        if (channel != null) {
            channel.finishAndReleaseAll();
        }
        monitor.close();
    }

    private HeartbeatHandler handlerOf(CountingProbe probe) {
        HeartbeatConfig cfg = HeartbeatConfig.ping(probe).interval(Duration.ofSeconds(30))
                .timeout(Duration.ofSeconds(10)).ackMode(AckMode.MATCHED_ONLY).build();
        channel = new EmbeddedChannel(monitor.newHandler(cfg));
        return (HeartbeatHandler) channel.pipeline().first();
    }

    private boolean inbound(HeartbeatHandler h, ProbeState state, Object msg) {
        return state.onInbound(h, h.bound(), channel.pipeline().firstContext(), msg, ticker.nanoTime());
    }

    @Test
    void aChannelOnceAnsweredIsNotReportedWhenItsAnswersStop() {
        CountingProbe probe = new CountingProbe();
        HeartbeatHandler h = handlerOf(probe);
        ProbeState state = h.probeState();
        assertNotNull(state);
        state.wrote();
        h.pingWrote(ticker.nanoTime());
        ticker.advance(Duration.ofMillis(5));
        assertTrue(inbound(h, state, "PONG"), "the answer, consumed");
        assertTrue(state.answeredSince(ticker.nanoTime()), "answered just now");
        assertFalse(inbound(h, state, "PONG"), "no ping waits any more: an unsolicited answer is passed on");
        for (int i = 0; i < Probe.MISPLACEMENT_PINGS; i++) {
            state.wrote(); // the peer stops answering
        }
        state.writeFailed();
        state.wrote();
        assertFalse(inbound(h, state, "DATA"), "not an answer: passed on");
        assertEquals(0, probe.reports, "the channel was answered once: its probe is where the answers are");
        assertTrue(state.answeredSince(ticker.nanoTime()), "the flag survived every change of the count");
    }

    @Test
    void aChannelNeverAnsweredIsReportedOnceEnoughPingsWentUnanswered() {
        CountingProbe probe = new CountingProbe();
        HeartbeatHandler h = handlerOf(probe);
        ProbeState state = h.probeState();
        for (int i = 0; i < Probe.MISPLACEMENT_PINGS - 1; i++) {
            state.wrote();
        }
        inbound(h, state, "DATA");
        assertEquals(0, probe.reports, "too few pings to tell");
        state.wrote();
        inbound(h, state, "DATA");
        assertEquals(1, probe.reports);
        assertFalse(state.answeredSince(Long.MIN_VALUE), "never answered");
    }
}
