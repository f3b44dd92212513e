/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** {@link NettyVersions}: one warning naming each version and its jars when the Netty jars differ. */
class NettyVersionsTest {

    private final List<String> warnings = new ArrayList<>();

    @Test
    void mixedVersionsAreNamedWithTheirJars() {
        NettyVersions.check(() -> Map.of("netty-transport", "4.1.137.Final", "netty-handler", "4.1.137.Final",
                "netty-codec-http2", "4.2.17.Final"), warnings::add);

        assertEquals(1, warnings.size());
        assertEquals("Netty jars of 2 versions on the class path: 4.1.137.Final [netty-handler, netty-transport]; "
                + "4.2.17.Final [netty-codec-http2]. Mixed Netty versions fail at run time (missing classes and "
                + "methods): import io.netty:netty-bom (4.1 or 4.2) in your build so that every Netty jar has one "
                + "version", warnings.get(0));
    }

    @Test
    void oneVersionSaysNothing() {
        assertNull(NettyVersions.check(() -> Map.of("netty-transport", "4.1.137.Final", "netty-handler",
                "4.1.137.Final"), warnings::add));
        assertNull(NettyVersions.check(Map::of, warnings::add), "no jar found");
        assertEquals(List.of(), warnings);
    }

    @Test
    void aClassPathThatCannotBeReadSaysNothing() {
        assertNull(NettyVersions.check(() -> {
            throw new NoClassDefFoundError("io/netty/util/Version");
        }, warnings::add));
        assertEquals(List.of(), warnings);
    }

    @Test
    void thisBuildsClassPathHasOneNettyVersion() {
        assertNull(NettyVersions.check(() -> {
            Map<String, String> versions = new java.util.TreeMap<>();
            io.netty.util.Version.identify().forEach((a, v) -> versions.put(a, v.artifactVersion()));
            return versions;
        }, warnings::add), "the netty-bom aligns this build's Netty jars, gRPC's and Reactor's included");
    }
}
