/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.micrometer.HeartbeatMetrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The ping policy with a {@link Probe} that recognises its answers, in the handler, in virtual time: a
 * "PING token" / "PONG token" line protocol (strings on an {@link EmbeddedChannel}). Answers are kept
 * from the application and timed; the ack modes decide what settles a ping.
 */
class ProbeHandlerTest {

    private static final Duration INTERVAL = Duration.ofSeconds(10);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** Pings "PING n", recognises "PONG n" by its token. */
    static class TokenLineProbe extends Probe {
        TokenLineProbe() {
            super(Matching.BY_TOKEN, true);
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) {
            return "PING " + token;
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return msg instanceof String s && s.startsWith("PONG ");
        }

        @Override
        protected long tokenOf(Object answer) {
            return Long.parseLong(((String) answer).substring(5));
        }
    }

    /** What the application behind Heartbeat gets. */
    static final class Application extends ChannelInboundHandlerAdapter {
        final List<Object> reads = new ArrayList<>();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            reads.add(msg);
        }
    }

    private final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(30)); // wraps
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
            .maxCoalescing(Duration.ZERO).build();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        monitor.close();
    }

    private EmbeddedChannel channel(AckMode mode, Application app) {
        return channel(HeartbeatConfig.ping(new TokenLineProbe()).interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(2).ackMode(mode).build(), app);
    }

    /** A channel of a handler for {@code cfg} and {@code app}, registered with the worker. */
    private EmbeddedChannel channel(HeartbeatConfig cfg, Application app) {
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(cfg), app);
        channels.add(ch);
        monitor.runOnce();
        return ch;
    }

    private void advance(long millis) {
        VirtualTime.advance(ticker, monitor, millis, channels);
    }

    /** A channel in {@code mode} closed at its first unanswered ping. */
    private EmbeddedChannel closedAtFirstMiss(AckMode mode) {
        return channel(HeartbeatConfig.ping(new TokenLineProbe()).interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(1).ackMode(mode).build(), new Application());
    }

    /** Runs the worker alone for {@code millis}, one cycle a millisecond: the event loops lag. */
    private void workerAloneFor(long millis) {
        for (long ms = 0; ms < millis; ms++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
    }

    /** Reads the ping the channel wrote and returns its answer line. */
    private static String answerTo(EmbeddedChannel ch) {
        String ping = ch.readOutbound();
        assertTrue(ping != null && ping.startsWith("PING "), "a ping was written: " + ping);
        return "PONG " + ping.substring(5);
    }

    @Test
    void anAnswerIsConsumedTimedAndSettlesThePing() {
        Application app = new Application();
        EmbeddedChannel ch = channel(AckMode.ANY_INBOUND, app);
        assertTrue(monitor.rttOf(ch).isEmpty(), "no sample before the first answer");
        advance(10_000 + 3);
        String pong = answerTo(ch);
        advance(40);
        ch.writeInbound(pong); // 40 ms after the ping was written
        assertEquals(List.of(), app.reads, "the answer is kept from the application");
        assertEquals(1, monitor.answersConsumed());
        Rtt rtt = monitor.rttOf(ch).orElseThrow();
        assertEquals(Duration.ofMillis(40), rtt.smoothed());
        assertEquals(Duration.ofMillis(20), rtt.variation());
        advance(20_000);
        assertTrue(ch.isOpen(), "the answered ping settled it; the next one is answered too");
        ch.writeInbound("hello");
        assertEquals(List.of("hello"), app.reads, "everything else goes on");
    }

    @Test
    void matchedOnlyIgnoresOtherTrafficWhileAPingWaits() {
        Application app = new Application();
        EmbeddedChannel ch = channel(AckMode.MATCHED_ONLY, app);
        advance(10_000 + 3);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        for (int i = 0; i < 12; i++) { // the peer talks, but never answers
            advance(1_000);
            if (ch.isOpen()) {
                ch.writeInbound("data " + i);
            }
        }
        assertFalse(ch.isOpen(), "two unanswered pings close it, traffic or not");
        assertEquals(1, monitor.stats().closedPingTimeout());
    }

    @Test
    void anyInboundCountsOtherTrafficAsTheAnswer() {
        Application app = new Application();
        EmbeddedChannel ch = channel(AckMode.ANY_INBOUND, app);
        advance(10_000 + 3);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        for (int i = 0; i < 10; i++) {
            advance(1_000);
            ch.writeInbound("data " + i);
        }
        assertTrue(ch.isOpen(), "any read answers the ping");
    }

    @Test
    void matchedOnlyIsSettledByTheAnswer() {
        EmbeddedChannel ch = channel(AckMode.MATCHED_ONLY, new Application());
        for (int round = 0; round < 4; round++) {
            advance(10_000 + 3);
            String pong = answerTo(ch);
            advance(100);
            ch.writeInbound(pong);
        }
        advance(1_000);
        assertTrue(ch.isOpen());
        assertEquals(0, monitor.stats().closedPingTimeout());
        assertTrue(monitor.rttOf(ch).isPresent());
    }

    @Test
    void matchedExtendsLetsTrafficPushTheDeadlineButOnlyTheAnswerSettles() {
        EmbeddedChannel ch = channel(AckMode.MATCHED_EXTENDS, new Application());
        advance(10_000 + 3);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        advance(3_000);
        ch.writeInbound("data"); // 3 s after the ping: its deadline moves to 8 s after it
        advance(2_500);
        assertTrue(ch.isOpen());
        assertNull(ch.readOutbound(), "no miss yet at 5.5 s: no second ping");
        advance(3_000);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "), "missed at 8 s after traffic stopped: re-ping");
        advance(5_100);
        assertFalse(ch.isOpen(), "the second ping unanswered too: closed");
    }

    /**
     * MATCHED_EXTENDS: data read after the worker decided the close, before the event loop ran it,
     * moves the deadline a timeout past that read; the event loop's re-check applies the same rule
     * (issue 26, item 6).
     */
    @Test
    void matchedExtendsIsNotClosedEarlyByAVerdictThatTrafficOvertook() {
        EmbeddedChannel ch = closedAtFirstMiss(AckMode.MATCHED_EXTENDS);
        advance(10_000 + 3);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        workerAloneFor(5_003); // it decides the close, the event loop lags
        ch.writeInbound("data"); // before the event loop runs the close: the deadline is now 5 s from here
        ch.runPendingTasks();
        assertTrue(ch.isOpen(), "not closed at the read that moved the deadline");
        advance(TIMEOUT.toMillis() - 10);
        assertTrue(ch.isOpen(), "never before a timeout after the read");
        advance(20);
        assertFalse(ch.isOpen(), "closed a timeout after the peer fell silent");
        assertEquals(1, monitor.stats().closedPingTimeout());
    }

    /**
     * The re-ping twin of the test above (the model's family 6, seed 315): the worker decides a re-ping
     * for a missed ping, the event loop lags, and data read before it runs moves the answer deadline
     * (MATCHED_EXTENDS): no ping goes out until the peer is silent for the interval, or the moved
     * deadline passes. Before, the event loop re-checked only for the matched answer and pinged 1 ms
     * after the read.
     */
    @Test
    void matchedExtendsIsNotRepingedEarlyByAVerdictThatTrafficOvertook() {
        EmbeddedChannel ch = channel(HeartbeatConfig.ping(new TokenLineProbe()).interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(3).ackMode(AckMode.MATCHED_EXTENDS).build(), new Application());
        advance(10_000 + 3);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        workerAloneFor(5_003); // it decides the re-ping, the event loop lags
        ch.writeInbound("data"); // before the event loop runs the re-ping: the deadline is now 5 s from here
        ch.runPendingTasks();
        assertNull(ch.readOutbound(), "no ping 1 ms after the read that moved the deadline");
        advance(TIMEOUT.toMillis() - 10);
        assertNull(ch.readOutbound(), "none before the moved deadline either");
        assertTrue(ch.isOpen());
    }

    /**
     * A late answer that arrives after the worker decided a re-ping, but before the event loop writes it,
     * stops the re-ping, in every matched mode (the model's family 6, seed 382): the worker's decision
     * takes the ping off the wire, and the answer's time was recorded only for a ping on the wire, so the
     * event loop found it unanswered and pinged a peer that had just answered.
     */
    @Test
    void anAnswerReadBeforeTheEventLoopRunsTheRepingStopsIt() {
        for (AckMode mode : List.of(AckMode.MATCHED_ONLY, AckMode.MATCHED_EXTENDS)) {
            HeartbeatMonitor m = HeartbeatMonitor.builder().ticker(ticker).maxCoalescing(Duration.ZERO).build();
            try {
                EmbeddedChannel ch = new EmbeddedChannel(m.newHandler(HeartbeatConfig.ping(new TokenLineProbe())
                        .interval(INTERVAL).timeout(TIMEOUT).maxMissedPings(3).ackMode(mode).build()),
                        new Application());
                m.runOnce();
                VirtualTime.advance(ticker, m, 10_000 + 3, List.of(ch));
                String pong = answerTo(ch);
                for (int ms = 0; ms < TIMEOUT.toMillis() + 3; ms++) { // the worker decides the re-ping alone
                    ticker.advance(1, TimeUnit.MILLISECONDS);
                    m.runOnce();
                }
                ch.writeInbound(pong); // late, before the event loop runs the re-ping
                ch.runPendingTasks();
                assertNull(ch.readOutbound(), mode + ": no re-ping to a peer that just answered");
                ch.finishAndReleaseAll();
            } finally {
                m.close();
            }
        }
    }

    /**
     * Each answered ping counts as acked when its answer is read, not at the worker's next look: a
     * channel closed right after the answer keeps the count (issue 26, item 19).
     */
    @Test
    void anAnsweredPingIsCountedAckedEvenIfTheChannelClosesRightAfter() {
        for (AckMode mode : AckMode.values()) {
            HeartbeatMonitor m = HeartbeatMonitor.builder().ticker(ticker).maxCoalescing(Duration.ZERO).build();
            try {
                HeartbeatConfig cfg = HeartbeatConfig.ping(new TokenLineProbe()).interval(INTERVAL).timeout(TIMEOUT)
                        .ackMode(mode).build();
                EmbeddedChannel ch = new EmbeddedChannel(m.newHandler(cfg), new Application());
                m.runOnce();
                for (int i = 0; i < 5; i++) {
                    VirtualTime.advance(ticker, m, 10_000 + 3, List.of(ch));
                    String pong = answerTo(ch);
                    VirtualTime.advance(ticker, m, 40, List.of(ch));
                    ch.writeInbound(pong);
                }
                ch.close(); // before the worker looks again
                m.runOnce();
                assertEquals(new ProbeStats("custom", 5, 5, 0, 0), m.stats().pings("custom"), mode.toString());
                ch.finishAndReleaseAll();
            } finally {
                m.close();
            }
        }
    }

    @Test
    void anAnswerToAnOlderPingIsConsumedButGivesNoSample() {
        Application app = new Application();
        EmbeddedChannel ch = channel(AckMode.MATCHED_ONLY, app);
        advance(10_000 + 3);
        String first = answerTo(ch);
        advance(5_010); // missed: a second ping
        String second = answerTo(ch);
        ch.writeInbound(first); // the late answer to the first: ours, consumed, no RTT (its ping is not the latest)
        assertEquals(List.of(), app.reads);
        assertTrue(monitor.rttOf(ch).isEmpty());
        ch.writeInbound(second);
        assertTrue(monitor.rttOf(ch).isPresent());
        advance(4_000);
        assertTrue(ch.isOpen(), "the second ping was answered");
        ch.writeInbound("PONG 42");
        assertEquals(List.of("PONG 42"), app.reads, "an answer to none of our pings goes on");
    }

    /**
     * Expected: a probe that throws while recognising a message is counted (actionFailures) and
     * logged at most once a second; the message goes on to the application as if it were no answer
     * (nothing lost, nothing leaked), and the channel stays watched: its unanswered pings still close it.
     */
    @Test
    void aThrowingProbeLosesNoMessageAndStopsNoMonitoring() {
        Application app = new Application();
        Probe throwing = new TokenLineProbe() {
            @Override
            protected boolean isAnswer(Object msg) {
                throw new IllegalStateException("probe bug");
            }
        };
        HeartbeatConfig cfg = HeartbeatConfig.ping(throwing).interval(INTERVAL).timeout(TIMEOUT).maxMissedPings(1)
                .ackMode(AckMode.MATCHED_ONLY).build();
        EmbeddedChannel ch = channel(cfg, app);
        advance(10_000 + 3);
        String pong = answerTo(ch);
        ch.writeInbound(pong);
        assertEquals(List.of(pong), app.reads, "passed on, not lost");
        assertEquals(1, monitor.stats().actionFailures());
        advance(5_100);
        assertFalse(ch.isOpen(), "still watched: the unrecognised answer did not settle the ping");
        assertEquals(1, monitor.stats().closedPingTimeout());
    }

    @Test
    void eachPingCountsOnceAsAckedWithItsRttOrAsMissed() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HeartbeatMetrics(monitor).bindTo(registry);
        EmbeddedChannel ch = channel(AckMode.MATCHED_ONLY, new Application());
        advance(10_000 + 3);
        String pong = answerTo(ch);
        advance(40);
        ch.writeInbound(pong);
        advance(5_000); // the worker looks again and finds it answered
        assertEquals(new ProbeStats("custom", 1, 1, 0, 0), monitor.stats().pings("custom"));
        Timer rtt = registry.get("heartbeat.ping.rtt").tag("probe", "custom").timer();
        assertEquals(1, rtt.count());
        assertEquals(40.0, rtt.totalTime(TimeUnit.MILLISECONDS), 1e-9, "from the write to the answer");
        advance(10_000); // the next ping, unanswered: missed at its timeout, then a second one, missed: closed
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        advance(5_000 + 3);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        advance(5_000 + 3);
        assertFalse(ch.isOpen());
        assertEquals(new ProbeStats("custom", 3, 1, 2, 0), monitor.stats().pings("custom"));
    }

    /**
     * A ping counted missed (its close decided) and then answered before the event loop closed: the
     * close is called off, and the ping is not counted again as acked when the worker finds it answered.
     */
    @Test
    void aPingCountedMissedIsNotAckedByALateAnswer() {
        EmbeddedChannel ch = closedAtFirstMiss(AckMode.MATCHED_ONLY);
        advance(10_000 + 3);
        String pong = answerTo(ch);
        workerAloneFor(5_003); // it decides the close, the event loop lags
        assertEquals(1, monitor.stats().pings("custom").missed());
        ch.writeInbound(pong); // the answer comes before the event loop runs the close: called off
        ch.runPendingTasks();
        assertTrue(ch.isOpen());
        advance(5_100);
        assertEquals(new ProbeStats("custom", 1, 0, 1, 0), monitor.stats().pings("custom"));
    }

    /** A MATCHED_ONLY channel closed at its first unanswered ping, with an adaptive answer timeout in [100 ms, 2 s]. */
    private EmbeddedChannel adaptive() {
        HeartbeatConfig cfg = HeartbeatConfig.ping(new TokenLineProbe()).interval(INTERVAL).timeout(TIMEOUT)
                .maxMissedPings(1).ackMode(AckMode.MATCHED_ONLY)
                .adaptiveTimeout(Duration.ofMillis(100), Duration.ofSeconds(2)).build();
        EmbeddedChannel ch = channel(cfg, new Application());
        return ch;
    }

    /** Answers the first ping after {@code rttMillis}; then the next ping is written, and waits {@code openMillis}. */
    private void answerThenSilence(EmbeddedChannel ch, long rttMillis, long openMillis) {
        advance(10_000 + 3);
        String pong = answerTo(ch);
        advance(rttMillis);
        ch.writeInbound(pong);
        advance(10_000 + 3); // read silence: the next ping is written at the end of this
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        advance(openMillis);
        assertTrue(ch.isOpen(), "never before the adaptive deadline");
    }

    @Test
    void anAdaptiveTimeoutWaitsTheConfiguredTimeoutBeforeTheFirstSample() {
        EmbeddedChannel ch = adaptive();
        advance(10_000 + 3);
        assertTrue(((String) ch.readOutbound()).startsWith("PING "));
        advance(4_999);
        assertTrue(ch.isOpen(), "no round trip known yet: the 5 s timeout");
        advance(4);
        assertFalse(ch.isOpen());
    }

    @Test
    void anAdaptiveTimeoutIsSrttPlusFourRttvar() {
        EmbeddedChannel ch = adaptive();
        answerThenSilence(ch, 40, 119); // one 40 ms sample: SRTT 40 ms, RTTVAR 20 ms, so 120 ms
        advance(4);
        assertFalse(ch.isOpen(), "closed 120 ms after the unanswered ping, not 5 s");
        assertEquals(1, monitor.stats().closedPingTimeout());
    }

    @Test
    void anAdaptiveTimeoutIsClampedToItsBounds() {
        EmbeddedChannel fast = adaptive();
        answerThenSilence(fast, 1, 99); // 1 ms + 4 x 0.5 ms = 3 ms, raised to the 100 ms floor
        advance(4);
        assertFalse(fast.isOpen());
        EmbeddedChannel slow = adaptive();
        answerThenSilence(slow, 1_000, 1_999); // 1 s + 4 x 0.5 s = 3 s, lowered to the 2 s ceiling
        advance(4);
        assertFalse(slow.isOpen(), "the ceiling, not the 5 s timeout");
    }
}
