/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ClientResultTest {

    private static ClientResult part(long premature, long connectStart, long connectEnd, long lateMicros) {
        ClientResult r = new ClientResult();
        r.assigned = 100;
        r.connected = 99;
        r.connectFailures = 1;
        r.expectedCloses = 30;
        r.observedCloses = 29;
        r.onTime = 29 - premature;
        r.premature = premature;
        r.leftOpen = 1;
        r.earliestPrematureNanos = premature * 1000;
        r.connectStartNanos = connectStart;
        r.connectEndNanos = connectEnd;
        r.connectedByRole[Role.SILENT.ordinal()] = 20;
        r.pingsByRole[Role.PONG.ordinal()] = 7;
        r.failureSamples.add("connection 1 (silent): sample");
        r.connectFailureCauses.put("ConnectException: refused", 1L);
        r.lateness.recordValue(lateMicros);
        r.echoLatency.recordValue(lateMicros * 2);
        return r;
    }

    @Test
    void survivesTheTripThroughJson() {
        ClientResult r = part(2, 10, 20, 1234);
        String json = JsonCodec.write(new ChildMessage.Result(r, null));
        ClientResult back = ((ChildMessage.Result) JsonCodec.read(json, ChildMessage.class)).result();
        assertEquals(json, JsonCodec.write(new ChildMessage.Result(back, null)));
        assertEquals(r.lateness, back.lateness, "the histogram, through its compressed base64 form");
        assertEquals(20, back.connectedByRole[Role.SILENT.ordinal()]);
    }

    @Test
    void mergingAddsCountsKeepsExtremesAndAddsHistograms() {
        ClientResult total = new ClientResult().add(part(0, 50, 70, 100)).add(part(3, 10, 60, 5000));
        assertEquals(200, total.assigned);
        assertEquals(198, total.connected);
        assertEquals(3, total.premature);
        assertEquals(3000, total.earliestPrematureNanos, "the earliest of all");
        assertEquals(10, total.connectStartNanos, "the first start");
        assertEquals(70, total.connectEndNanos, "the last end");
        assertEquals(40, total.connectedByRole[Role.SILENT.ordinal()]);
        assertEquals(14, total.pingsByRole[Role.PONG.ordinal()]);
        assertEquals(2L, total.connectFailureCauses.get("ConnectException: refused"));
        assertEquals(2, total.lateness.getTotalCount());
        assertEquals(5000.0, (double) total.lateness.getMaxValue(), 5.0);
        assertEquals(2, total.failureSamples.size());
        assertTrue(total.failures() > 0);
    }
}
