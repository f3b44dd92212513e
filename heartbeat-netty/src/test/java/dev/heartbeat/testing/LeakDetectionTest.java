/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.Test;

/**
 * The leak check can fail: a buffer dropped without a release is reported, by the extension's own
 * after-test step, with the place it was allocated; a released one is not.
 */
class LeakDetectionTest {

    @Test
    void aDroppedBufferFailsTheTestNamingWhereItWasAllocated() {
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.Level restore = LeakDetection.begin();
        assertEquals(ResourceLeakDetector.Level.PARANOID, ResourceLeakDetector.getLevel());
        allocateAndDrop();
        AssertionError failure = assertThrows(AssertionError.class, () -> LeakDetection.end(restore, "the test"));
        assertTrue(failure.getMessage().startsWith("1 ByteBuf leak(s) reported"), failure.getMessage());
        assertTrue(failure.getMessage().contains("allocateAndDrop"), failure.getMessage());
        assertEquals(before, ResourceLeakDetector.getLevel(), "level restored");
    }

    @Test
    void aReleasedBufferPasses() {
        ResourceLeakDetector.Level restore = LeakDetection.begin();
        ByteBufAllocator.DEFAULT.buffer(16).writeLong(1).release();
        LeakDetection.end(restore, "the test");
    }

    private static void allocateAndDrop() {
        ByteBuf leaked = ByteBufAllocator.DEFAULT.buffer(16);
        leaked.writeLong(42);
    }
}
