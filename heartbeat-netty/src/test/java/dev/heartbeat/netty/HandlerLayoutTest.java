/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.openjdk.jol.info.ClassLayout;

/**
 * The per-channel handler, which is also the channel's wheel entry, is the one object Heartbeat adds
 * per channel besides Netty's pipeline context: its size is a promise, pinned here from the JVM's
 * real field layout (JOL), so a change that grows it fails until the limit is raised on purpose.
 * The tracker's goal is 64 bytes; the limit below is today's size, not the goal.
 */
class HandlerLayoutTest {

    /** Today's size with compressed class pointers and oops (the default below 32 GiB of heap). */
    private static final long LIMIT_BYTES = 136;

    @Test
    void theHandlerDoesNotGrow() {
        ClassLayout layout = ClassLayout.parseClass(HeartbeatHandler.class);
        long size = layout.instanceSize();
        System.out.println("HandlerLayoutTest: HeartbeatHandler is " + size + " bytes\n" + layout.toPrintable());
        assertTrue(size <= LIMIT_BYTES, "HeartbeatHandler grew to " + size + " bytes (limit " + LIMIT_BYTES
                + "):\n" + layout.toPrintable());
    }
}
