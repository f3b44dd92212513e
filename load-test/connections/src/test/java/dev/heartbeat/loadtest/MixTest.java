/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Map;

import org.junit.jupiter.api.Test;

class MixTest {

    @Test
    void parsesTheDefault() {
        Mix mix = Mix.parse(Mix.DEFAULT);
        assertEquals(20, mix.percent(Role.SILENT));
        assertEquals(20, mix.percent(Role.ACTIVE));
        assertEquals(50, mix.percent(Role.PONG));
        assertEquals(10, mix.percent(Role.DYING));
        assertEquals("active=20,silent=20,pong=50,dying=10", mix.toString());
    }

    @Test
    void rolesNotNamedGetNothingAndCaseSpacesAndPercentSignsAreAccepted() {
        Mix mix = Mix.parse(" Silent = 40% , PONG=60 ");
        assertEquals(40, mix.percent(Role.SILENT));
        assertEquals(60, mix.percent(Role.PONG));
        assertEquals(0, mix.percent(Role.ACTIVE));
        assertEquals(0, mix.percent(Role.DYING));
    }

    @Test
    void badMixesFailNamingTheBadPart() {
        assertMessage("unknown connection role 'idle'", "silent=50,idle=50");
        assertMessage("names silent twice", "silent=50,silent=50");
        assertMessage("must add up to 100, not 90", "silent=50,active=40");
        assertMessage("share of pong is not a whole percentage: 'lots'", "silent=50,pong=lots");
        assertMessage("share of pong must be in 0-100: 150", "silent=50,pong=150");
        assertMessage("share of silent must be in 0-100: -50", "silent=-50,pong=150");
        assertMessage("part 'silent' is not role=percent", "silent");
        assertMessage("--mix is empty", " ");
    }

    private static void assertMessage(String expected, String mix) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Mix.parse(mix));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void countsAddUpToNWithTheLeftoversToTheLargestRemainders() {
        Mix mix = Mix.parse("silent=33,active=33,pong=34");
        Map<Role, Integer> c = mix.counts(10);
        // exact: 3.3, 3.3, 3.4 -> floors 3, 3, 3 and the one left goes to pong (remainder 40 > 30)
        assertEquals(3, c.get(Role.SILENT));
        assertEquals(3, c.get(Role.ACTIVE));
        assertEquals(4, c.get(Role.PONG));
        assertEquals(0, c.get(Role.DYING));
        for (int n : new int[] {0, 1, 7, 99, 100_001}) {
            assertEquals(n, Mix.parse(Mix.DEFAULT).counts(n).values().stream().mapToInt(Integer::intValue).sum(),
                    "n=" + n);
        }
    }

    @Test
    void assignmentHasExactCountsAndDependsOnlyOnTheSeed() {
        Mix mix = Mix.parse(Mix.DEFAULT);
        byte[] a = mix.assign(100_000, 42);
        byte[] b = mix.assign(100_000, 42);
        byte[] c = mix.assign(100_000, 43);
        assertArrayEquals(a, b);
        assertFalse(Arrays.equals(a, c));
        int[] count = new int[Role.values().length];
        for (byte r : a) {
            count[r]++;
        }
        assertEquals(20_000, count[Role.SILENT.ordinal()]);
        assertEquals(20_000, count[Role.ACTIVE.ordinal()]);
        assertEquals(50_000, count[Role.PONG.ordinal()]);
        assertEquals(10_000, count[Role.DYING.ordinal()]);
        // shuffled: the first thousand are a mix, not one role
        int[] head = new int[Role.values().length];
        for (int i = 0; i < 1000; i++) {
            head[a[i]]++;
        }
        for (Role r : Role.values()) {
            if (mix.percent(r) > 0) {
                assertTrue(head[r.ordinal()] > 50, r + ": " + head[r.ordinal()]);
            } else {
                assertEquals(0, head[r.ordinal()], r.toString());
            }
        }
    }

    @Test
    void parsesTheEdgeRolesAndListsThemOnlyWhenTheyHaveAShare() {
        Mix mix = Mix.parse("silent=10,active=10,pong=10,Trickle=10,pingflood=20,halfopen=10,longline=10,junk=20");
        assertEquals(10, mix.percent(Role.TRICKLE));
        assertEquals(20, mix.percent(Role.PINGFLOOD));
        assertEquals(10, mix.percent(Role.HALFOPEN));
        assertEquals(10, mix.percent(Role.LONGLINE));
        assertEquals(20, mix.percent(Role.JUNK));
        assertEquals("active=10,silent=10,pong=10,dying=0,trickle=10,pingflood=20,halfopen=10,longline=10,junk=20",
                mix.toString());
        assertEquals("active=0,silent=0,pong=0,dying=0,halfopen=100", Mix.parse("halfopen=100").toString());
        assertEquals(mix.toString(), Mix.parse(mix.toString()).toString(), "the canonical text parses to itself");
        int[] count = new int[Role.values().length];
        for (byte r : mix.assign(1000, 7)) {
            count[r]++;
        }
        assertEquals(200, count[Role.JUNK.ordinal()]);
        assertEquals(100, count[Role.LONGLINE.ordinal()]);
        assertEquals(0, count[Role.DYING.ordinal()]);
    }

    @Test
    void anUnknownRoleIsRefusedAndTheErrorListsEveryRole() {
        assertMessage("unknown connection role 'sleepy': expected one of active, silent, pong, dying, trickle, "
                + "pingflood, halfopen, longline, junk, flooder, aged, stalled, slowreader", "sleepy=100");
    }

    @Test
    void theStalledIsALineOnlyEdgeRole() {
        assertEquals("active=0,silent=90,pong=0,dying=0,stalled=10", Mix.parse("silent=90,Stalled=10").toString(),
                "listed when present");
        assertTrue(Role.STALLED.isEdge() && Role.STALLED.speaksLinesOnly(), "its backlog is lines; HTTP/2 would "
                + "hold it in its flow control, out of the outbound buffer the write-stall guard watches");
    }

    @Test
    void theSlowReaderIsALineOnlyEdgeRoleThatBacksEchoesUpAsTheStalledDoes() {
        Mix mix = Mix.parse("silent=80,stalled=10,SlowReader=10");
        assertEquals(10, mix.percent(Role.SLOWREADER));
        assertEquals("active=0,silent=80,pong=0,dying=0,stalled=10,slowreader=10", mix.toString(),
                "listed when present");
        assertEquals("active=0,silent=90,pong=0,dying=0,slowreader=10",
                Mix.parse("silent=90,slowreader=10").toString());
        assertTrue(Role.SLOWREADER.isEdge() && Role.SLOWREADER.speaksLinesOnly());
        assertTrue(Role.SLOWREADER.backsUpEchoes() && Role.STALLED.backsUpEchoes());
        assertFalse(Role.ACTIVE.backsUpEchoes() || Role.HALFOPEN.backsUpEchoes());
    }

    @Test
    void theFlooderIsAnEdgeRoleOfEveryProtocol() {
        Mix mix = Mix.parse("silent=50,Flooder=50");
        assertEquals(50, mix.percent(Role.FLOODER));
        assertEquals("active=0,silent=50,pong=0,dying=0,flooder=50", mix.toString(), "listed when present");
        assertTrue(Role.FLOODER.isEdge());
        assertFalse(Role.FLOODER.speaksLinesOnly());
        for (Role r : Role.values()) {
            assertEquals(r.isEdge() && r != Role.FLOODER && r != Role.AGED, r.speaksLinesOnly(), r.toString());
        }
    }

    @Test
    void theAgedRoleIsListedWhenPresentAndSpeaksEveryProtocol() {
        Mix mix = Mix.parse("silent=50,aged=50");
        assertEquals(50, mix.percent(Role.AGED));
        assertEquals("active=0,silent=50,pong=0,dying=0,aged=50", mix.toString());
        assertFalse(Role.AGED.speaksLinesOnly());
        assertFalse(Role.AGED.isLineLimited());
    }
}
