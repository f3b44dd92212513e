/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

class TcpLayoutTest {

    @Test
    void hundredThousandConnectionsUnderTwentyThousandFilesTakeSixProcessesOfEachKind() {
        TcpLayout l = TcpLayout.plan(100_000, 20_000 - TcpLayout.RESERVED_FDS);
        assertEquals(6, l.servers);
        assertEquals(6, l.clients);
        int covered = 0;
        for (int c = 0; c < l.clients; c++) {
            assertEquals(covered, l.clientFrom(c), "ranges are contiguous");
            int n = l.clientTo(c) - l.clientFrom(c);
            assertTrue(n <= l.perProcess, "client " + c + " holds " + n);
            covered = l.clientTo(c);
        }
        assertEquals(100_000, covered);
    }

    @Test
    void tooManyServerProcessesAreRefusedNamingTheFlags() {
        String message = assertThrows(IllegalArgumentException.class, () -> TcpLayout.plan(2000, 1)).getMessage();
        assertEquals("--connections 2000 at --max-connections-per-process 1 need 2000 server processes; at most 100 "
                + "are supported: give a --max-connections-per-process of at least 20", message);
        assertEquals(100, TcpLayout.plan(2000, 20).servers);
    }

    @Test
    void eachClientHasItsOwnSourceAddressesWithAFewThousandConnectionsEach() {
        TcpLayout l = TcpLayout.plan(100_000, 18_000);
        Set<String> all = new HashSet<>();
        for (int c = 0; c < l.clients; c++) {
            List<String> sources = l.sources(0, c);
            int n = l.clientTo(c) - l.clientFrom(c);
            assertTrue(n / sources.size() <= TcpLayout.PER_SOURCE_ADDRESS);
            for (String s : sources) {
                assertTrue(s.startsWith("127."), s);
                assertTrue(all.add(s), "shared source address " + s);
            }
        }
        assertTrue(!l.sources(0, 0).get(0).equals(l.sources(1, 0).get(0)), "another run, other addresses");
    }

    @Test
    void portsStayBelowTheEphemeralRangeAndDifferPerRun() {
        assertEquals(20_000, TcpLayout.echoPort(20_000, 0, 0));
        assertEquals(20_205, TcpLayout.echoPort(20_000, 1, 5));
        assertEquals(20_305, TcpLayout.metricsPort(20_000, 1, 5));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TcpLayout.echoPort(32_700, 0, 0));
        assertTrue(e.getMessage().contains("--base-port 32700"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TcpLayout.plan(100, 0));
    }

    @Test
    void parsesHostPort() {
        InetSocketAddress a = TcpLayout.parseHostPort("127.0.0.1:7000");
        assertEquals("127.0.0.1", a.getHostString());
        assertEquals(7000, a.getPort());
        assertEquals("::1", TcpLayout.parseHostPort("[::1]:7000").getHostString());
        assertEquals("[::1]:7000", TcpLayout.hostPort(TcpLayout.parseHostPort("[::1]:7000")));
        for (String bad : new String[] {"localhost", "host:", "host:x", "host:70000", ":7000"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> TcpLayout.parseHostPort(bad));
            assertTrue(e.getMessage().contains(bad), e.getMessage());
        }
    }
}
