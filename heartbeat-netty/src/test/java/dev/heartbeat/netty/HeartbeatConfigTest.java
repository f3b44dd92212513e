/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.Plan;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** Bad configuration fails when it is set, with a message that names the setting and the value. */
class HeartbeatConfigTest {

    private static final PingFactory PING = ch -> "PING";

    private static void fails(Class<? extends Throwable> type, String message, Executable setting) {
        Throwable t = assertThrows(type, setting);
        assertEquals(message, t.getMessage());
    }

    @Test
    void refusesNegativeTimeouts() {
        fails(IllegalArgumentException.class, "readerIdle cannot be negative: PT-1S",
                () -> HeartbeatConfig.events().readerIdle(Duration.ofSeconds(-1)));
        fails(IllegalArgumentException.class, "writerIdle cannot be negative: PT-0.001S",
                () -> HeartbeatConfig.closeWhenIdle().writerIdle(Duration.ofMillis(-1)));
    }

    @Test
    void refusesTimeoutsBelowOneMillisecondOrBeyondTheClock() {
        fails(IllegalArgumentException.class, "readerIdle must be 0 (disabled) or at least 1ms: PT0.0005S",
                () -> HeartbeatConfig.events().readerIdle(Duration.ofNanos(500_000)));
        fails(IllegalArgumentException.class,
                "allIdle must be at most 2^61 ns (about 73 years): PT2562047H47M16.854775807S",
                () -> HeartbeatConfig.events().allIdle(Duration.ofNanos(Long.MAX_VALUE)));
    }

    @Test
    void refusesBadPingSettings() {
        fails(NullPointerException.class, "ping factory", () -> HeartbeatConfig.ping((PingFactory) null));
        fails(NullPointerException.class, "probe", () -> HeartbeatConfig.ping((Probe) null));
        fails(IllegalStateException.class, "ackMode MATCHED_ONLY needs a probe that recognises its answers, but "
                + "PingFactoryProbe[NONE, answers passed on] does not (Matching.NONE): use ANY_INBOUND, or "
                + "ping(Probe) with a probe such as Probes.http2()",
                () -> HeartbeatConfig.ping(PING).interval(Duration.ofSeconds(1)).ackMode(AckMode.MATCHED_ONLY).build());
        fails(IllegalStateException.class, "ackMode applies only to the ping policy, not to CLOSE",
                () -> HeartbeatConfig.closeWhenIdle().ackMode(AckMode.MATCHED_ONLY));
        fails(IllegalArgumentException.class, "interval must be positive: PT0S",
                () -> HeartbeatConfig.ping(PING).interval(Duration.ZERO));
        fails(IllegalArgumentException.class, "timeout must be at least 1ms: PT0.0001S",
                () -> HeartbeatConfig.ping(PING).timeout(Duration.ofNanos(100_000)));
        fails(IllegalArgumentException.class, "maxMissedPings must be in [1, 10000]: 0",
                () -> HeartbeatConfig.ping(PING).maxMissedPings(0));
        fails(IllegalArgumentException.class, "maxMissedPings must be in [1, 10000]: 10001",
                () -> HeartbeatConfig.ping(PING).maxMissedPings(10_001));
        fails(IllegalArgumentException.class, "jitter must be in [0, 1): 1.0",
                () -> HeartbeatConfig.ping(PING).jitter(1.0));
        fails(IllegalArgumentException.class, "jitter must be in [0, 1): -0.1",
                () -> HeartbeatConfig.ping(PING).jitter(-0.1));
        fails(IllegalArgumentException.class, "jitter must be in [0, 1): NaN",
                () -> HeartbeatConfig.ping(PING).jitter(Double.NaN));
        fails(IllegalStateException.class, "the ping policy needs an interval: call interval(Duration)",
                () -> HeartbeatConfig.ping(PING).build());
    }

    @Test
    void refusesAnAdaptiveTimeoutWithoutMatchedAnswersNamingTheSettings() {
        Duration min = Duration.ofMillis(100);
        Duration max = Duration.ofSeconds(2);
        fails(IllegalStateException.class, "adaptiveTimeout needs a probe that recognises its answers and a matched "
                + "ackMode (MATCHED_ONLY or MATCHED_EXTENDS), to time the answers it adapts to; this has probe "
                + Probes.http2() + " and ackMode ANY_INBOUND",
                () -> HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(10)).adaptiveTimeout(min, max)
                        .build());
        assertThrows(IllegalStateException.class, () -> HeartbeatConfig.ping(PING).interval(Duration.ofSeconds(10))
                .adaptiveTimeout(min, max).build(), "a factory's answers are not recognised");
        fails(IllegalArgumentException.class, "adaptiveTimeout min must not exceed max: min PT2S, max PT0.1S",
                () -> HeartbeatConfig.ping(Probes.http2()).adaptiveTimeout(max, min));
        fails(IllegalArgumentException.class, "adaptiveTimeout min must be at least 1ms: PT0.0005S",
                () -> HeartbeatConfig.ping(Probes.http2()).adaptiveTimeout(Duration.ofNanos(500_000), max));
        fails(IllegalStateException.class, "adaptiveTimeout applies only to the ping policy, not to EVENT",
                () -> HeartbeatConfig.events().adaptiveTimeout(min, max));
        HeartbeatConfig cfg = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(10))
                .ackMode(AckMode.MATCHED_EXTENDS).adaptiveTimeout(min, max).build();
        assertEquals(min, cfg.adaptiveTimeoutMin());
        assertEquals(max, cfg.adaptiveTimeoutMax());
        assertTrue(cfg.toString().contains("adaptiveTimeout=[PT0.1S, PT2S]"), cfg.toString());
        assertTrue(cfg.plan.coalescingNanos <= min.toNanos() >> Plan.COALESCING_SHIFT,
                "the window follows the shortest answer timeout");
    }

    @Test
    void refusesSettingsThatDoNotApplyToThePolicy() {
        fails(IllegalStateException.class, "interval applies only to the ping policy, not to EVENT",
                () -> HeartbeatConfig.events().interval(Duration.ofSeconds(1)));
        fails(IllegalStateException.class,
                "readerIdle does not apply to the ping policy; use interval() and whenWriterIdle()",
                () -> HeartbeatConfig.ping(PING).readerIdle(Duration.ofSeconds(1)));
        fails(IllegalStateException.class, "withTimeoutExceptions applies only to closeWhenIdle(), not to policy EVENT",
                () -> HeartbeatConfig.events().withTimeoutExceptions());
    }

    @Test
    void buildsWhatWasAskedAndNothingElse() {
        HeartbeatConfig ping = HeartbeatConfig.ping(PING).interval(Duration.ofSeconds(30)).maxMissedPings(2)
                .jitter(0.25).whenWriterIdle().build();
        assertEquals(HeartbeatConfig.Policy.PING, ping.policy());
        assertEquals(Duration.ofSeconds(30), ping.pingInterval());
        assertEquals(Duration.ofSeconds(30), ping.pingTimeout(), "the timeout defaults to the interval");
        assertEquals(2, ping.maxMissedPings());
        assertEquals(0.25, ping.jitter());
        assertTrue(ping.pingWhenWriterIdle());

        HeartbeatConfig close = HeartbeatConfig.closeWhenIdle().allIdle(Duration.ofMinutes(5)).observeOutput(true)
                .withTimeoutExceptions().build();
        assertEquals(HeartbeatConfig.Policy.CLOSE_WITH_EXCEPTION, close.policy());
        assertEquals(Duration.ofMinutes(5), close.allIdle());
        assertTrue(close.observeOutput());
        assertEquals(Duration.ZERO, close.readerIdle());

        HeartbeatConfig dropIn = HeartbeatConfig.events(false, 60, 30, 0, TimeUnit.SECONDS);
        assertEquals(Duration.ofSeconds(60), dropIn.readerIdle());
        assertEquals(Duration.ofSeconds(30), dropIn.writerIdle());
        assertFalse(dropIn.observeOutput());
        assertTrue(dropIn.toString().contains("readerIdle=PT1M"), dropIn.toString());
    }

    @Test
    void refusesAReaderIdleCloseThatTheLongestJitteredIntervalReaches() {
        fails(IllegalStateException.class, "closeWhenReaderIdle (PT11S) needs to be longer than the latest first "
                + "ping of a silent channel (PT19.13631488S: the interval PT10S with jitter 0.9 (up to PT19S), then "
                + "up to a coalescing window (PT0.134217728S) and two ticks late) when pings are driven by read "
                + "silence, or a channel closes before its first ping: use whenWriterIdle(), a smaller jitter or a "
                + "longer closeWhenReaderIdle",
                () -> HeartbeatConfig.ping(PING).interval(Duration.ofSeconds(10)).jitter(0.9)
                        .closeWhenReaderIdle(Duration.ofSeconds(11)).build());
        HeartbeatConfig ok = HeartbeatConfig.ping(PING).interval(Duration.ofSeconds(10)).jitter(0.9)
                .closeWhenReaderIdle(Duration.ofMillis(19_200)).build();
        assertEquals(Duration.ofMillis(19_200), ok.closeWhenReaderIdle());
    }

    @Test
    void refusesAMaxCloseHoldWithoutAVeto() {
        fails(IllegalStateException.class, "maxCloseHold (PT3S) needs a close veto to bound: call "
                + "beforeClose(CloseVeto) or holdWhile(Predicate) too",
                () -> HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10))
                        .maxCloseHold(Duration.ofSeconds(3)).build());
        HeartbeatConfig ok = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10))
                .maxCloseHold(Duration.ofSeconds(3)).beforeClose((ch, reason) -> CloseDecision.PROCEED).build();
        assertTrue(ok.toString().contains("hold at most PT3S"), ok.toString());
    }

    @Test
    void refusesAVetoThatWouldNeverBeAsked() {
        fails(IllegalStateException.class, "beforeClose needs a close to be asked about: policy EVENT closes nothing "
                + "by itself (and drains are not asked); add maxAge, writeStall or maxUnwritable, or use "
                + "closeWhenIdle()",
                () -> HeartbeatConfig.events().readerIdle(Duration.ofSeconds(10))
                        .beforeClose((ch, reason) -> CloseDecision.PROCEED).build());
        HeartbeatConfig.events().readerIdle(Duration.ofSeconds(10)).maxAge(Duration.ofMinutes(1))
                .beforeClose((ch, reason) -> CloseDecision.PROCEED).build(); // asked at the maximum age
    }

    @Test
    void refusesAHoldWhileWithoutAnIdleCloseToHold() {
        fails(IllegalStateException.class, "holdWhile needs an idle close (READER_IDLE, WRITER_IDLE or ALL_IDLE) to "
                + "hold, and policy PING makes none here: set closeWhenReaderIdle, or use beforeClose(CloseVeto)",
                () -> HeartbeatConfig.ping(PING).interval(Duration.ofSeconds(1)).holdWhile(ch -> true).build());
        fails(IllegalStateException.class, "holdWhile needs an idle close (READER_IDLE, WRITER_IDLE or ALL_IDLE) to "
                + "hold, and policy EVENT makes none here: use closeWhenIdle() with a timeout, or use "
                + "beforeClose(CloseVeto)",
                () -> HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).maxAge(Duration.ofMinutes(1))
                        .holdWhile(ch -> true).build());
        fails(IllegalStateException.class, "holdWhile needs an idle close (READER_IDLE, WRITER_IDLE or ALL_IDLE) to "
                + "hold, and policy CLOSE makes none here: set readerIdle, writerIdle or allIdle, or use "
                + "beforeClose(CloseVeto)",
                () -> HeartbeatConfig.closeWhenIdle().maxAge(Duration.ofMinutes(1)).holdWhile(ch -> true).build());
        HeartbeatConfig.ping(PING).interval(Duration.ofSeconds(1)).closeWhenReaderIdle(Duration.ofSeconds(5))
                .holdWhile(ch -> true).build();
        HeartbeatConfig.closeWhenIdle().maxAge(Duration.ofMinutes(1)).holdWhile(ch -> true)
                .beforeClose((ch, reason) -> CloseDecision.PROCEED).build(); // the later veto replaces it
    }

    @Test
    void refusesTimeoutExceptionsWithoutAnIdleTimeout() {
        fails(IllegalStateException.class, "withTimeoutExceptions needs an idle timeout to fire on: set readerIdle, "
                + "writerIdle or allIdle",
                () -> HeartbeatConfig.closeWhenIdle().withTimeoutExceptions().maxAge(Duration.ofMinutes(1)).build());
    }

    @Test
    void refusesObserveOutputWithoutWriterOrAllIdleness() {
        fails(IllegalStateException.class, "observeOutput needs writerIdle or allIdle: it changes how writes count, "
                + "and reader idleness does not look at writes",
                () -> HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).observeOutput(true).build());
        HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).observeOutput(false).build();
        assertTrue(HeartbeatConfig.events(true, 1, 0, 0, TimeUnit.SECONDS).observeOutput(),
                "the drop-in overload takes what IdleStateHandler takes");
    }
}
