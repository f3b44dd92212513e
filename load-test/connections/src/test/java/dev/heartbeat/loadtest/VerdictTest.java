/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.JitterMode;

import org.junit.jupiter.api.Test;

class VerdictTest {

    private static final long S = TimeUnit.SECONDS.toNanos(1);

    @Test
    void aCloseBeforeTheDueMomentIsPrematureWhateverTheRole() {
        assertEquals(Verdict.PREMATURE, Verdict.ofClose(true, 1000, 999));
        assertEquals(Verdict.PREMATURE, Verdict.ofClose(false, 1000, 999));
    }

    @Test
    void aCloseAtOrAfterTheDueMomentIsOnTimeIfExpectedElseUnexpected() {
        assertEquals(Verdict.ON_TIME, Verdict.ofClose(true, 1000, 1000));
        assertEquals(Verdict.ON_TIME, Verdict.ofClose(true, 1000, 5000));
        assertEquals(Verdict.UNEXPECTED, Verdict.ofClose(false, 1000, 5000));
    }

    @Test
    void anOnTimeCloseForAnotherReasonThanTheRolesIsAFailure() {
        assertEquals(Verdict.WRONG_REASON, Verdict.ofClose(true, 1000, 5000, false));
        assertEquals(Verdict.ON_TIME, Verdict.ofClose(true, 1000, 5000, true));
        assertEquals(Verdict.PREMATURE, Verdict.ofClose(true, 1000, 999, false), "early first");
        assertEquals(Verdict.UNEXPECTED, Verdict.ofClose(false, 1000, 5000, false), "it should not have closed at all");
        assertTrue(Verdict.WRONG_REASON.isFailure());
    }

    @Test
    void comparesAcrossNanoTimeWrapAround() {
        long due = Long.MAX_VALUE - 10;
        assertEquals(Verdict.ON_TIME, Verdict.ofClose(true, due, due + 100)); // wrapped past MAX_VALUE
        assertEquals(Verdict.PREMATURE, Verdict.ofClose(true, Long.MIN_VALUE + 5, Long.MAX_VALUE));
    }

    @Test
    void openAtTheEnd() {
        assertEquals(Verdict.LEFT_OPEN, Verdict.ofOpenAtEnd(true));
        assertEquals(Verdict.STAYED_OPEN, Verdict.ofOpenAtEnd(false));
        assertTrue(Verdict.LEFT_OPEN.isFailure());
        assertTrue(Verdict.PREMATURE.isFailure());
        assertTrue(Verdict.UNEXPECTED.isFailure());
        assertFalse(Verdict.ON_TIME.isFailure());
        assertFalse(Verdict.STAYED_OPEN.isFailure());
    }

    @Test
    void whoMustBeClosed() {
        Scenario ping = Scenario.builder().build();
        Scenario close = Scenario.builder().policy(Scenario.Policy.CLOSE).build();
        for (String impl : new String[] {Scenario.HEARTBEAT, Scenario.NETTY}) {
            assertTrue(ping.expectsClose(impl, Role.SILENT));
            assertTrue(ping.expectsClose(impl, Role.DYING));
            assertFalse(ping.expectsClose(impl, Role.PONG));
            assertFalse(ping.expectsClose(impl, Role.ACTIVE));
            assertTrue(close.expectsClose(impl, Role.PONG), "no pings to answer with the close policy");
            assertFalse(close.expectsClose(impl, Role.ACTIVE));
        }
        for (Role r : Role.values()) {
            assertEquals(r == Role.FLOODER, ping.expectsClose(Scenario.NONE, r), "no idle handling, but the "
                    + "ping policing, which needs no timer: " + r);
        }
    }

    @Test
    void closeWindowAndGrace() {
        Scenario ping = Scenario.builder().pingIntervalNanos(30 * S).pingTimeoutNanos(5 * S).maxMissedPings(2).build();
        assertEquals(40 * S, ping.closeWindowNanos());
        assertEquals(10 * S, ping.graceNanos());
        assertEquals(50 * S, ping.deathSpanNanos()); // 100 s - 40 s - 10 s
        Scenario close = Scenario.builder().policy(Scenario.Policy.CLOSE).idleTimeoutNanos(4 * S)
                .activePeriodNanos(S / 2).durationNanos(10 * S).build();
        assertEquals(4 * S, close.closeWindowNanos());
        assertEquals(2 * S, close.graceNanos(), "at least 2 s");
        assertEquals(4 * S / 3, close.keepAlivePeriodNanos());
    }

    @Test
    void deathFractionsAreSpreadOverTheSpan() {
        Scenario s = Scenario.builder().seed(7).build();
        double sum = 0;
        for (int i = 0; i < 10_000; i++) {
            double f = s.deathFraction(i);
            assertTrue(f >= 0 && f < 1, "fraction " + f);
            sum += f;
        }
        assertEquals(0.5, sum / 10_000, 0.02);
        assertEquals(s.deathFraction(5), Scenario.builder().seed(7).build().deathFraction(5));
    }

    @Test
    void settingsThatCannotWorkFailNamingTheValue() {
        assertMessage("--duration 30s is too short", Scenario.builder().durationNanos(30 * S));
        assertMessage("give --duration 63.5s or more, or a close window of at most 23.2s for this duration, e.g. "
                + "--ping-interval 9s --ping-timeout 6s", Scenario.builder().durationNanos(30 * S));
        assertMessage("--connections must be at least 1: 0", Scenario.builder().connections(0));
        assertMessage("--max-missed-pings: maxMissedPings must be in [1, 10000]: 0",
                Scenario.builder().maxMissedPings(0));
        assertMessage("--ping-interval: interval must be at least 1ms", Scenario.builder().pingIntervalNanos(999_999));
        assertMessage("--active-rate 0.02/s sends a line every 50s, not within --ping-interval 40s",
                Scenario.builder().activePeriodNanos(50 * S));
    }

    private static void assertMessage(String expected, Scenario.Builder b) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void formatsDurationsAsTheFlagsTakeThem() {
        assertEquals("40s", Scenario.format(40 * S));
        assertEquals("2m", Scenario.format(120 * S));
        assertEquals("63.5s", Scenario.format(63_500_000_000L));
        assertEquals("250ms", Scenario.format(250_000_000L));
        assertEquals("1.25ms", Scenario.format(1_250_000L));
        assertEquals("1.049ms", Scenario.format(1L << 20));
    }

    @Test
    void roundTripsThroughJson() {
        Scenario s = Scenario.builder().connections(1234).policy(Scenario.Policy.CLOSE).idleTimeoutNanos(7 * S)
                .activePeriodNanos(S / 4).durationNanos(20 * S).seed(-5).tickNanos(1 << 22).lazyHandOffs(true).build();
        String json = JsonCodec.write(s.settings());
        assertTrue(json.contains("\"idle_timeout_ns\":7000000000"), json);
        assertTrue(json.contains("\"lazy_hand_offs\":true"), json);
        Scenario t = JsonCodec.read(json, Scenario.Settings.class).scenario();
        assertEquals(s.settings(), t.settings());
        assertEquals(String.join(" ", s.serverFlags()), String.join(" ", t.serverFlags()));
        assertTrue(String.join(" ", s.serverFlags()).contains("--tick 4194304ns"));
        assertTrue(String.join(" ", s.serverFlags()).contains("--hand-offs lazy"));
        assertTrue(String.join(" ", Scenario.builder().build().serverFlags()).contains("--hand-offs eager"));
    }

    @Test
    void aLineLimitedRoleMayOnlyBeClosedByTheDecoderAfterItsOverLongLine() {
        long due = 1000;
        // the decoder's close comes right after the line, long before any idle close could be due
        assertEquals(Verdict.LINE_CLOSED, Verdict.ofLineLimitedClose(true, true, due, 10));
        assertEquals(Verdict.LINE_CLOSED, Verdict.ofLineLimitedClose(true, true, due, 5000));
        assertFalse(Verdict.LINE_CLOSED.isFailure());
        // any other close: premature before the idle due moment, unexpected after it
        assertEquals(Verdict.PREMATURE, Verdict.ofLineLimitedClose(false, false, due, 999));
        assertEquals(Verdict.PREMATURE, Verdict.ofLineLimitedClose(true, false, due, 999));
        assertEquals(Verdict.UNEXPECTED, Verdict.ofLineLimitedClose(true, false, due, 5000), "closed, but no ERR");
        assertEquals(Verdict.UNEXPECTED, Verdict.ofLineLimitedClose(false, true, due, 5000), "ERR, line not long");
        assertEquals(Verdict.LEFT_OPEN, Verdict.ofLineLimitedOpenAtEnd(true));
        assertEquals(Verdict.STAYED_OPEN, Verdict.ofLineLimitedOpenAtEnd(false));
    }

    @Test
    void whatTheEdgeRolesExpect() {
        Scenario ping = Scenario.builder().build();
        Scenario close = Scenario.builder().policy(Scenario.Policy.CLOSE).idleTimeoutNanos(20 * S).build();
        for (Scenario s : new Scenario[] {ping, close}) {
            for (String impl : new String[] {Scenario.HEARTBEAT, Scenario.NETTY}) {
                assertTrue(s.expectsClose(impl, Role.HALFOPEN), "closed for idleness, as silent");
                for (Role r : new Role[] {Role.TRICKLE, Role.PINGFLOOD, Role.LONGLINE, Role.JUNK}) {
                    assertFalse(s.expectsClose(impl, r), r + " is never idle");
                }
            }
            assertFalse(s.expectsClose(Scenario.NONE, Role.HALFOPEN));
            assertEquals(s.quietLimitNanos() / 4 * 3, s.tricklePeriodNanos());
            for (int i = 0; i < 1000; i++) {
                long delay = s.longLineDelayNanos(i);
                assertTrue(delay >= 0 && delay <= s.closeWindowNanos() / 2, "sent before any idle close is due");
            }
        }
        assertEquals(30 * S, ping.tricklePeriodNanos(), "3/4 of the 40 s ping interval");
        assertEquals(15 * S, close.tricklePeriodNanos(), "3/4 of the 20 s idle timeout");
        for (Role r : Role.values()) {
            assertEquals(r == Role.TRICKLE || r == Role.LONGLINE, r.isLineLimited(), r.toString());
        }
    }

    @Test
    void theEdgeSettingsAreCheckedNamingTheValue() {
        assertEquals(20, Scenario.builder().maxLine(20).build().maxLine);
        String message = assertThrows(IllegalArgumentException.class,
                () -> Scenario.builder().maxLine(19).build()).getMessage();
        assertTrue(message.startsWith("--max-line must be at least 20 bytes") && message.endsWith(": 19"), message);
        for (int lines : new int[] {0, 1001}) {
            message = assertThrows(IllegalArgumentException.class,
                    () -> Scenario.builder().floodLines(lines).build()).getMessage();
            assertTrue(message.startsWith("--flood-lines must be between 1 and 1000") && message.endsWith(": " + lines),
                    message);
        }
        message = assertThrows(IllegalArgumentException.class, () -> Scenario.builder().mix(Mix.parse("junk=100"))
                .activePeriodNanos(50 * S).build()).getMessage();
        assertTrue(message.contains("active and junk connections would look idle"), message);
        Scenario s = Scenario.builder().maxLine(64).floodLines(3).build();
        Scenario again = s.settings().scenario();
        assertEquals(64, again.maxLine);
        assertEquals(3, again.floodLines);
        assertTrue(String.join(" ", s.serverFlags()).contains("--max-line 64"));
    }

    @Test
    void aFloodersCloseIsPrematureUntilItPingedPastTheStrikesAndMustNamePingAbuse() {
        assertEquals(Verdict.PREMATURE, Verdict.ofAbuseClose(false, true), "the server cannot have had cause yet");
        assertEquals(Verdict.ON_TIME, Verdict.ofAbuseClose(true, true));
        assertEquals(Verdict.WRONG_REASON, Verdict.ofAbuseClose(true, false));
    }

    /**
     * Flooders make the servers police pings, at a sixth of the quiet limit (half the HTTP/2 keep-alive
     * period with the close policy), permitted without traffic; they ping ten times as often; every idle
     * impl closes them, for PING_ABUSE.
     */
    @Test
    void whatTheFlooderExpects() {
        Scenario s = Scenario.builder().mix(Mix.parse("silent=20,active=20,pong=40,dying=10,flooder=10"))
                .pingIntervalNanos(3 * S).pingTimeoutNanos(2 * S).activePeriodNanos(S / 2).durationNanos(10 * S)
                .build();
        assertTrue(s.policesPings());
        assertEquals(S / 2, s.peerPingMinIntervalNanos(), "a sixth of the 3 s ping interval");
        assertEquals(3 * S / 2, s.floodPeriodNanos(), "should a burst not close it: well within the ping interval");
        assertEquals(4, Scenario.FLOOD_BURST, "2 strikes, the ping they close on, and one in case the first passed");
        assertEquals(new ServerConfig.PeerPingRules(Duration.ofMillis(500), true, 2), s.peerPingRules());
        assertTrue(String.join(" ", s.serverFlags()).endsWith(" --police-pings --peer-ping-min-interval 500000000ns "
                + "--peer-ping-max-strikes 2 --permit-pings-without-traffic"), String.join(" ", s.serverFlags()));
        assertEquals(s.peerPingRules(), LocalWorker.serverConfig(s, Scenario.NETTY, 2).peerPingRules());
        assertTrue(s.describePolicy().endsWith("; peer pings policed: at least 500ms apart, 2 strikes forgiven "
                + "(flooders send 4 pings at once)"), s.describePolicy());
        for (String impl : new String[] {Scenario.HEARTBEAT, Scenario.NETTY, Scenario.NONE}) {
            assertTrue(s.expectsClose(impl, Role.FLOODER), impl + ": the policing needs no timer");
        }
        assertEquals(CloseReason.PING_ABUSE, s.expectedGoodbye(Role.FLOODER));
        assertEquals(CloseReason.PING_TIMEOUT, s.expectedGoodbye(Role.SILENT));
        Scenario mqtt = Scenario.builder().protocol(ServerConfig.Protocol.MQTT)
                .mix(Mix.parse("pong=50,flooder=50")).build();
        assertNull(mqtt.expectedGoodbye(Role.FLOODER), "MQTT 3.1.1 has no goodbye");
        assertEquals(CloseReason.PING_ABUSE, mqtt.closeReason(Role.FLOODER));
        Scenario close = Scenario.builder().policy(Scenario.Policy.CLOSE).idleTimeoutNanos(30 * S)
                .mix(Mix.parse("dying=50,flooder=50")).build();
        assertEquals(close.keepAlivePeriodNanos() / 2, close.peerPingMinIntervalNanos(),
                "half the period of the dying ones' keep-alive PINGs (HTTP/2)");

        Scenario none = Scenario.builder().build();
        assertFalse(none.policesPings());
        assertNull(none.peerPingRules());
        assertFalse(String.join(" ", none.serverFlags()).contains("--police-pings"));
    }

    /** The CI's timing: PING after 3 s, two missed of 2 s (a 7 s close window), a 14 s window. */
    private static Scenario.Builder ciTiming() {
        return Scenario.builder().pingIntervalNanos(3 * S).pingTimeoutNanos(2 * S).activePeriodNanos(S / 2)
                .durationNanos(14 * S);
    }

    @Test
    void stalledConnectionsGiveHeartbeatServersAWriteStallWellInsideTheCloseWindow() {
        Scenario s = ciTiming().mix(Mix.parse("silent=20,active=20,pong=40,dying=10,stalled=10")).build();
        assertTrue(s.hasStalled());
        assertEquals(3 * S / 4, s.writeStallNanos(), "a quarter of the ping interval");
        assertEquals(7 * S, s.stallDeadlineNanos(), "the close window: an idle close could not come sooner");
        assertTrue(String.join(" ", s.serverFlags(Scenario.HEARTBEAT, 1)).endsWith(" --write-stall 750000000ns"));
        assertFalse(String.join(" ", s.serverFlags(Scenario.NETTY, 1)).contains("--write-stall"),
                "IdleStateHandler has no write-stall deadline: the demo refuses the flag");
        assertTrue(s.expectsClose(Scenario.HEARTBEAT, Role.STALLED));
        assertTrue(s.expectsClose(Scenario.NETTY, Role.STALLED), "silent from its last write: closed for idleness");
        assertFalse(s.expectsClose(Scenario.NONE, Role.STALLED));
        assertTrue(s.describePolicy().endsWith("; heartbeat servers close write stalls of 750ms"), s.describePolicy());
        Scenario given = ciTiming().mix(s.mix).writeStallNanos(S).build();
        assertEquals(S, given.writeStallNanos());
        assertEquals(given.writeStallNanos(), given.settings().scenario().writeStallNanos(), "carried to the children");

        String message = assertThrows(IllegalArgumentException.class, () -> ciTiming().mix(s.mix)
                .writeStallNanos(4 * S).build()).getMessage();
        assertTrue(message.endsWith("give a --write-stall of at most a third of it, 2.333s"), message);
        message = assertThrows(IllegalArgumentException.class, () -> Scenario.builder().writeStallNanos(S).build())
                .getMessage();
        assertTrue(message.startsWith("--write-stall 1s is for the stalled and slowreader roles"), message);
    }

    @Test
    void slowReadersGiveHeartbeatServersTheSameWriteStallAndMustStayOpenEverywhere() {
        Scenario s = ciTiming().mix(Mix.parse("silent=20,active=20,pong=40,dying=10,slowreader=10")).build();
        assertFalse(s.hasStalled());
        assertTrue(s.guardsWriteStalls());
        assertEquals(Role.SLOWREADER, s.echoBackupRole());
        assertEquals(3 * S / 4, s.writeStallNanos(), "a quarter of the ping interval, as with stalled ones");
        assertEquals(s.writeStallNanos() / Scenario.SLOW_READS_PER_STALL, s.slowReadPeriodNanos());
        assertTrue(String.join(" ", s.serverFlags(Scenario.HEARTBEAT, 1)).endsWith(" --write-stall 750000000ns"));
        assertFalse(String.join(" ", s.serverFlags(Scenario.NETTY, 1)).contains("--write-stall"));
        for (String impl : new String[] {Scenario.HEARTBEAT, Scenario.NETTY, Scenario.NONE}) {
            assertFalse(s.expectsClose(impl, Role.SLOWREADER), impl);
        }
        assertTrue(s.describePolicy().endsWith("; heartbeat servers close write stalls of 750ms"), s.describePolicy());
        Scenario both = ciTiming().mix(Mix.parse("silent=80,stalled=10,slowreader=10")).writeStallNanos(S).build();
        assertEquals(Role.STALLED, both.echoBackupRole(), "the stalled first");
        assertEquals(S, both.settings().scenario().writeStallNanos(), "carried to the children");
    }

    @Test
    void aSlowReadersCloseIsAWriteStallOnlyWhenItReadTooLittleInAWriteStallToMoveTheServersBuffer() {
        long enough = Scenario.SERVER_NOTSENT_LOWAT_BYTES;
        assertEquals(Verdict.READS_STALLED, Verdict.ofSlowReaderClose(0, true), "nothing read in a write stall");
        assertEquals(Verdict.READS_STALLED, Verdict.ofSlowReaderClose(enough - 1, true));
        assertEquals(Verdict.UNEXPECTED, Verdict.ofSlowReaderClose(enough, true), "it drained: never stalled");
        assertEquals(Verdict.UNEXPECTED, Verdict.ofSlowReaderClose(0, false), "servers without a write stall: never");
        assertFalse(Verdict.READS_STALLED.isFailure());
        assertTrue(Verdict.UNEXPECTED.isFailure());
    }

    @Test
    void theDrainStartsAsLateAsItsWindowAndAGraceAllowAndClosesAreDrainedOnlyAfterIt() {
        Scenario s = ciTiming().drainNanos(4 * S).build();
        assertTrue(s.drains());
        assertEquals(14 * S - 2 * S - 4 * S, s.drainDelayNanos(), "the window, then a 2 s grace before the end");
        assertEquals(s.drainNanos, s.settings().scenario().drainNanos, "carried to the children");
        assertEquals(Verdict.DRAINED, Verdict.ofDrainClose(true));
        assertEquals(Verdict.PREMATURE, Verdict.ofDrainClose(false), "no correct server drains before it is asked");
        assertFalse(Verdict.DRAINED.isFailure());
        assertFalse(Scenario.builder().build().drains());

        String message = assertThrows(IllegalArgumentException.class, () -> ciTiming().drainNanos(12 * S).build())
                .getMessage();
        assertTrue(message.startsWith("--drain 12s does not fit in --duration 14s") && message.contains(
                "give --drain 11s or less, or --duration 15s or more"), message);
        message = assertThrows(IllegalArgumentException.class, () -> Scenario.builder().drainNanos(S / 2).build())
                .getMessage();
        assertTrue(message.startsWith("--drain must be at least 1s"), message);
        message = assertThrows(IllegalArgumentException.class, () -> Scenario.builder().drainNanos(10 * S)
                .churnPerSecond(5).build()).getMessage();
        assertTrue(message.startsWith("--drain with --churn-rate 5.0"), message);
    }

    @Test
    void floodersAreRefusedNextToAPingFloodOrWithoutRoomForTheirPings() {
        String message = assertThrows(IllegalArgumentException.class, () -> Scenario.builder()
                .mix(Mix.parse("silent=50,pingflood=25,flooder=25")).build()).getMessage();
        assertTrue(message.startsWith("--mix pingflood=25 with flooder=25: with flooders the servers police peer "
                + "pings"), message);
        message = assertThrows(IllegalArgumentException.class, () -> Scenario.builder()
                .mix(Mix.parse("silent=50,flooder=50")).pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(5))
                .build()).getMessage();
        assertTrue(message.endsWith("give a --ping-interval of at least 6ms"), message);
        assertEquals(TimeUnit.MILLISECONDS.toNanos(1), Scenario.builder().mix(Mix.parse("silent=50,flooder=50"))
                .pingIntervalNanos(TimeUnit.MILLISECONDS.toNanos(6)).build().peerPingMinIntervalNanos());
    }

    private static Scenario aged(double jitter, JitterMode mode, long graceMillis) {
        return Scenario.builder().connections(100).mix(Mix.parse("pong=80,aged=20"))
                .durationNanos(TimeUnit.SECONDS.toNanos(100)).maxAgeNanos(TimeUnit.SECONDS.toNanos(10))
                .maxAgeJitter(jitter).maxAgeJitterMode(mode)
                .maxAgeGraceNanos(TimeUnit.MILLISECONDS.toNanos(graceMillis)).build();
    }

    /**
     * A max-age close: its goodbye no sooner than the shortest age the jitter mode allows after the
     * connect started, its close no sooner than that plus the grace, and no later than the longest age
     * plus the grace plus the lateness bound after the connect completed.
     */
    @Test
    void aMaxAgeCloseIsJudgedByTheAgesTheJitterModeAllows() {
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        long start = -5 * ms; // the connect started 5 ms before it completed, at 0
        for (JitterMode mode : JitterMode.values()) {
            Scenario s = aged(0.2, mode, 500);
            long min = mode == JitterMode.UP_ONLY ? 10_000 * ms : 8_000 * ms;
            long max = mode == JitterMode.DOWN_ONLY ? 10_000 * ms : 12_000 * ms;
            assertEquals(min, s.minAgeNanos(), mode.toString());
            assertEquals(max, s.maxDrawnAgeNanos(), mode.toString());
            long grace = 500 * ms;
            long bound = Scenario.AGE_LATENESS_NANOS;
            assertEquals(Verdict.ON_TIME, Verdict.ofAgeClose(s, start, 0, start + min, start + min + grace, true));
            assertEquals(Verdict.PREMATURE, Verdict.ofAgeClose(s, start, 0, start + min - 1, start + min + grace,
                    true), "a goodbye before the shortest age");
            assertEquals(Verdict.PREMATURE, Verdict.ofAgeClose(s, start, 0, start + min, start + min + grace - 1,
                    true), "a close before its grace ended");
            assertEquals(Verdict.ON_TIME, Verdict.ofAgeClose(s, start, 0, max, max + grace + bound, true));
            assertEquals(Verdict.LATE, Verdict.ofAgeClose(s, start, 0, max, max + grace + bound + 1, true));
            assertEquals(Verdict.WRONG_REASON, Verdict.ofAgeClose(s, start, 0, max, max + grace, false));
        }
        assertTrue(Verdict.LATE.isFailure());
    }

    @Test
    void agedConnectionsGiveTheServersTheirMaxAgeFlagsAndDefaultsFollowTheWindow() {
        Scenario s = aged(0.1, JitterMode.DOWN_ONLY, 250);
        assertTrue(String.join(" ", s.serverFlags()).contains("--max-age 10000000000ns --max-age-jitter 0.1 "
                + "--max-age-jitter-mode down_only --max-age-grace 250000000ns"), String.join(" ", s.serverFlags()));
        assertEquals(s.serverFlags().length, s.settings().scenario().serverFlags().length, "through JSON");
        assertEquals(CloseReason.MAX_AGE, s.expectedGoodbye(Role.AGED));
        assertFalse(s.expectsClose(Scenario.HEARTBEAT, Role.AGED), "judged apart, and reconnected");
        Scenario d = Scenario.builder().connections(100).mix(Mix.parse("pong=80,aged=20"))
                .pingIntervalNanos(TimeUnit.SECONDS.toNanos(3)).pingTimeoutNanos(TimeUnit.SECONDS.toNanos(2))
                .durationNanos(TimeUnit.SECONDS.toNanos(40)).build();
        assertEquals(TimeUnit.SECONDS.toNanos(10), d.maxAgeNanos, "a quarter of the window");
        assertEquals(Scenario.DEFAULT_AGE_JITTER, d.maxAgeJitter);
        assertEquals(TimeUnit.SECONDS.toNanos(1), d.maxAgeGraceNanos, "a tenth of the age");
        Scenario none = Scenario.builder().connections(100).build();
        assertFalse(none.agesConnections());
        assertFalse(String.join(" ", none.serverFlags()).contains("--max-age"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Scenario.builder()
                .connections(100).mix(Mix.parse("pong=80,aged=20")).durationNanos(TimeUnit.SECONDS.toNanos(20))
                .pingIntervalNanos(TimeUnit.SECONDS.toNanos(3)).pingTimeoutNanos(TimeUnit.SECONDS.toNanos(2))
                .maxAgeNanos(TimeUnit.SECONDS.toNanos(9)).build());
        assertTrue(e.getMessage().contains("does not let an aged connection age out twice in --duration 20s: give "
                + "--duration 23.4s or more"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Scenario.builder().connections(100)
                .mix(Mix.parse("halfopen=80,aged=20")).build());
        assertTrue(e.getMessage().contains("a half-open one reads nothing"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Scenario.builder().connections(100)
                .protocol(ServerConfig.Protocol.MQTT).pingIntervalNanos(TimeUnit.SECONDS.toNanos(2))
                .durationNanos(TimeUnit.SECONDS.toNanos(20)).mix(Mix.parse("silent=80,aged=20")).build());
        assertTrue(e.getMessage().contains("MQTT 3.1.1 has no goodbye"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Scenario.builder().connections(100)
                .maxAgeNanos(TimeUnit.SECONDS.toNanos(1)).build());
        assertTrue(e.getMessage().contains("are for a mix with aged connections"), e.getMessage());
    }

    /**
     * Storm: the budget is divided among the servers; a whole second may see each one's rate plus its
     * bucket (a hundredth of the rate, at least 1); the last close may be the connections' actions over
     * the budget late, plus the slack.
     */
    @Test
    void theStormsBoundsFollowFromTheTokenBucket() {
        Scenario close = Scenario.builder().connections(100_000).mix(Mix.parse("silent=100")).storm(true)
                .policy(Scenario.Policy.CLOSE).idleTimeoutNanos(TimeUnit.SECONDS.toNanos(10)).actionBudget(20_000)
                .build();
        assertEquals(20_000, close.actionBudgetPerServer(1));
        assertEquals(20_200, close.actionsPerSecondBound(1));
        assertEquals(6 * 3_333 + 6 * 33, close.actionsPerSecondBound(6), "each of 6 servers: 3,333 + 33");
        assertEquals(3_333 + 33, close.actionsPerSecondBoundPerServer(6), "what one server may count");
        assertEquals(20_200 + 400, close.clientSeenActionsPerSecondBound(1), "and 20 ms of the rate, for delivery");
        assertEquals(1, close.actionsPerSilentConnection());
        assertEquals(TimeUnit.SECONDS.toNanos(6), close.stormLatenessBoundNanos(1), "100,000 / 20,000 s + 1 s");
        assertTrue(String.join(" ", close.serverFlags(Scenario.HEARTBEAT, 4)).endsWith("--action-budget 5000"));
        Scenario ping = Scenario.builder().connections(100_000).mix(Mix.parse("silent=100")).storm(true)
                .actionBudget(20_000).build();
        assertEquals(3, ping.actionsPerSilentConnection(), "two pings and the close");
        assertEquals(TimeUnit.SECONDS.toNanos(16), ping.stormLatenessBoundNanos(1));
        assertEquals(51, Scenario.builder().connections(10).mix(Mix.parse("silent=100")).actionBudget(50).build()
                .actionsPerSecondBound(1), "50 a second hold a bucket of 1");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Scenario.builder()
                .connections(100).storm(true).build());
        assertTrue(e.getMessage().contains("--storm: every connection is silent"), e.getMessage());
    }
}
