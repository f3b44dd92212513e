/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

class SlotScheduleTest {

    private static final long MS = 1_000_000;

    @Test
    void firesEachMemberOncePerPeriodAtItsIntendedMoments() {
        SlotSchedule s = new SlotSchedule(1000 * MS, 0);
        assertEquals(1000, s.slots());
        List<ClientConnection> members = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            LineConnection c = new LineConnection(i, Role.ACTIVE, false);
            members.add(c);
            s.add(c);
        }
        Map<Integer, List<Long>> fired = new HashMap<>();
        for (long now = 0; now < 3000 * MS; now += MS) {
            s.fire(now, (c, intended) -> fired.computeIfAbsent(c.index, k -> new ArrayList<>()).add(intended));
        }
        for (ClientConnection c : members) {
            List<Long> times = fired.get(c.index);
            assertEquals(3, times.size(), "three periods, three firings of " + c.index);
            assertEquals(1000 * MS, times.get(1) - times.get(0));
            assertEquals(1000 * MS, times.get(2) - times.get(1));
        }
    }

    @Test
    void aLateLoopFiresTheMissedSlotsWithTheirOwnIntendedMomentsAtMostOnePeriodPerTurn() {
        SlotSchedule s = new SlotSchedule(10 * MS, 0); // 10 slots of 1 ms
        LineConnection c = new LineConnection(3, Role.ACTIVE, false);
        s.add(c);
        List<Long> intended = new ArrayList<>();
        int fired = s.fire(39 * MS, (x, t) -> intended.add(t)); // stalled for 39 ms: one period per turn
        assertEquals(1, fired);
        fired += s.fire(39 * MS, (x, t) -> intended.add(t));
        fired += s.fire(39 * MS, (x, t) -> intended.add(t));
        fired += s.fire(39 * MS, (x, t) -> intended.add(t));
        assertEquals(4, fired, "slots due at 0-39 ms: four periods' worth for this member");
        for (int i = 1; i < intended.size(); i++) {
            assertEquals(10 * MS, intended.get(i) - intended.get(i - 1));
        }
        assertTrue(intended.get(intended.size() - 1) <= 39 * MS);
        assertEquals(0, s.fire(39 * MS, (x, t) -> intended.add(t)), "caught up");
    }
}
