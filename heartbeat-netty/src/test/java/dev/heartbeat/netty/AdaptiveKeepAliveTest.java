/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * {@link AdaptiveKeepAlive} against a simulated NAT that drops a connection idle longer than its
 * timeout, in virtual time: each round the client idles for the tuner's interval and then pings; the
 * ping is answered if the NAT kept the mapping, and the connection is lost (and made again) if not.
 */
class AdaptiveKeepAliveTest {

    private static final Duration STEP = Duration.ofSeconds(30);

    /** A NAT with a mutable idle timeout, and the client's bookkeeping of what the tuning cost. */
    private static final class Nat {
        Duration timeout;
        long virtualSeconds;
        int losses;

        Nat(Duration timeout) {
            this.timeout = timeout;
        }

        /** One keep-alive round at the tuner's interval; returns the interval used. */
        Duration round(AdaptiveKeepAlive<String> tuner) {
            Duration interval = tuner.interval("peer");
            virtualSeconds += interval.toSeconds();
            if (interval.compareTo(timeout) <= 0) {
                tuner.succeeded("peer", interval);
            } else {
                losses++;
                tuner.failed("peer", interval);
            }
            return interval;
        }
    }

    private static AdaptiveKeepAlive<String> tuner() {
        return AdaptiveKeepAlive.builder().minInterval(Duration.ofSeconds(30)).maxInterval(Duration.ofMinutes(30))
                .step(STEP).successesToGrow(3).failuresToSettle(2).reprobeAfter(100).build();
    }

    @Test
    void shouldSettleOneStepBelowTheNatsTimeoutAndStayThere() {
        AdaptiveKeepAlive<String> tuner = tuner();
        Nat nat = new Nat(Duration.ofSeconds(280)); // between the grid points 270 s and 300 s
        for (int i = 0; i < 50; i++) {
            nat.round(tuner);
        }
        AdaptiveKeepAlive.State s = tuner.state("peer").orElseThrow();
        assertEquals(AdaptiveKeepAlive.Phase.SETTLED, s.phase());
        assertEquals(Duration.ofSeconds(270), s.interval(), "the longest grid interval the NAT carries");
        assertEquals(Duration.ofMinutes(5), s.ceiling());
        assertEquals(2, nat.losses, "two losses at 300 s to learn the ceiling, none below it");
        int before = nat.losses;
        for (int i = 0; i < 99 - 50 + 24; i++) { // settled rounds up to just before the re-probe
            assertEquals(Duration.ofSeconds(270), nat.round(tuner));
        }
        assertEquals(before, nat.losses, "nothing lost while settled");
        System.out.println("AdaptiveKeepAliveTest: settled at 270 s after " + nat.virtualSeconds
                + " s of virtual time, 2 connections lost");
    }

    @Test
    void shouldReprobeRarelyAndFollowTheNatBothWays() {
        AdaptiveKeepAlive<String> tuner = tuner();
        Nat nat = new Nat(Duration.ofSeconds(280));
        for (int i = 0; i < 60; i++) {
            nat.round(tuner);
        }
        nat.timeout = Duration.ofSeconds(100); // the path changed: a stricter NAT
        int lossesBefore = nat.losses;
        for (int i = 0; i < 20; i++) {
            nat.round(tuner);
        }
        AdaptiveKeepAlive.State s = tuner.state("peer").orElseThrow();
        assertEquals(Duration.ofSeconds(90), s.interval(), "found again below the new timeout");
        assertEquals(AdaptiveKeepAlive.Phase.SETTLED, s.phase());
        assertEquals(4, nat.losses - lossesBefore, "two at the stale 270 s (back to the floor), two at 120 s");
        nat.timeout = Duration.ofSeconds(400); // and a laxer one: found again at the next re-probe
        int rounds = 0;
        while (tuner.interval("peer").compareTo(Duration.ofSeconds(390)) < 0 && rounds < 1_000) {
            nat.round(tuner);
            rounds++;
        }
        assertEquals(Duration.ofSeconds(390), tuner.interval("peer"));
        assertTrue(rounds > 100, "re-probed only after reprobeAfter successes: " + rounds + " rounds");
    }

    @Test
    void shouldNeverGoBelowTheMinimumNorAboveTheMaximum() {
        AdaptiveKeepAlive<String> tuner = tuner();
        Nat tight = new Nat(Duration.ofSeconds(10)); // below the minimum: every round is lost
        for (int i = 0; i < 20; i++) {
            assertEquals(Duration.ofSeconds(30), tight.round(tuner));
        }
        AdaptiveKeepAlive<String> open = tuner();
        Nat none = new Nat(Duration.ofDays(1));
        for (int i = 0; i < 500; i++) {
            assertTrue(none.round(open).compareTo(Duration.ofMinutes(30)) <= 0);
        }
        assertEquals(Duration.ofMinutes(30), open.interval("peer"));
        assertEquals(0, none.losses);
    }

    @Test
    void shouldDoubleAndKeepTheFloorWhenThePeerSaysTooManyPings() {
        AdaptiveKeepAlive<String> tuner = tuner();
        tuner.tooManyPings("peer");
        assertEquals(Duration.ofSeconds(60), tuner.interval("peer"));
        tuner.failed("peer", Duration.ofSeconds(60));
        tuner.failed("peer", Duration.ofSeconds(60));
        assertEquals(Duration.ofSeconds(60), tuner.interval("peer"), "never below what the server asked for");
    }

    @Test
    void shouldRestoreWhatItLearned() {
        AdaptiveKeepAlive<String> tuner = tuner();
        Nat nat = new Nat(Duration.ofSeconds(200));
        for (int i = 0; i < 40; i++) {
            nat.round(tuner);
        }
        Map<String, AdaptiveKeepAlive.State> saved = tuner.states();
        AdaptiveKeepAlive<String> restarted = tuner();
        saved.forEach(restarted::restore);
        assertEquals(saved, restarted.states());
        assertEquals(Duration.ofMinutes(3), restarted.interval("peer"));
    }

    @Test
    void shouldForgetTheLeastRecentlyUsedPeerBeyondItsCapacity() {
        AdaptiveKeepAlive<String> tuner = AdaptiveKeepAlive.builder().capacity(2).build();
        tuner.interval("a");
        tuner.interval("b");
        tuner.interval("a");
        tuner.interval("c");
        assertEquals(java.util.Set.of("a", "c"), tuner.states().keySet());
    }

    @Test
    void shouldRefuseBadSettingsNamingThem() {
        assertEquals("step must be between PT0.001S and " + HeartbeatConfig.MAX_TIMEOUT + ": PT0S",
                assertThrows(IllegalArgumentException.class,
                        () -> AdaptiveKeepAlive.builder().step(Duration.ZERO)).getMessage());
        assertEquals("successesToGrow must be positive: 0", assertThrows(IllegalArgumentException.class,
                () -> AdaptiveKeepAlive.builder().successesToGrow(0)).getMessage());
    }

    @Test
    void shouldRefuseAMinimumAboveTheMaximumInTheSetterThatDocumentsIt() {
        assertEquals("minInterval PT1H is longer than maxInterval PT30M: raise maxInterval first",
                assertThrows(IllegalArgumentException.class,
                        () -> AdaptiveKeepAlive.builder().minInterval(Duration.ofHours(1))).getMessage());
        assertEquals("maxInterval PT10S is shorter than minInterval PT30S: lower minInterval first",
                assertThrows(IllegalArgumentException.class,
                        () -> AdaptiveKeepAlive.builder().maxInterval(Duration.ofSeconds(10))).getMessage());
        AdaptiveKeepAlive<String> wide = AdaptiveKeepAlive.builder().maxInterval(Duration.ofHours(2))
                .minInterval(Duration.ofHours(1)).build();
        assertEquals(Duration.ofHours(1), wide.interval("peer"), "in that order, both are taken");
    }

    @Test
    void shouldRefuseResultsForIntervalsNoPingCanHave() {
        AdaptiveKeepAlive<String> tuner = tuner();
        assertEquals("succeeded: interval must be between PT0.001S and " + HeartbeatConfig.MAX_TIMEOUT + ": PT0S",
                assertThrows(IllegalArgumentException.class, () -> tuner.succeeded("peer", Duration.ZERO))
                        .getMessage());
        assertEquals("failed: interval must be between PT0.001S and " + HeartbeatConfig.MAX_TIMEOUT + ": PT-30S",
                assertThrows(IllegalArgumentException.class, () -> tuner.failed("peer", Duration.ofSeconds(-30)))
                        .getMessage());
        assertThrows(NullPointerException.class, () -> tuner.succeeded("peer", null));
        assertEquals(java.util.Optional.empty(), tuner.state("peer"), "nothing recorded for a refused result");
    }
}
