/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.testing;

import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test in which a {@code ByteBuf} leaked: runs each test of the class with Netty's leak
 * detector at {@code PARANOID} (as {@code -Dio.netty.leakDetection.level=paranoid}: every buffer
 * tracked, with the stack of each touch), and afterwards collects the garbage, makes the detector
 * look at what was collected and fails on any leak report, quoting it. Netty itself only logs leaks.
 *
 * <pre>{@code @ExtendWith(LeakDetection.class) class PingTest { ... }}</pre>
 *
 * <p>A leak is reported when its buffer is collected, which may be after the test that made it:
 * reports left over from before a test are attributed to no one and dropped ({@link #collect()} is
 * also run before each test), so a leak shows up in its own test or, when a thread still held the
 * buffer at the end, in the next test of a checked class. Tests run one at a time (no parallel
 * execution): the level is global. The detector's reports reach this class through its
 * {@code LeakListener}, installed once on the buffers' detector ({@code AbstractByteBuf.leakDetector},
 * found by reflection: Netty 4.1.x and 4.2.x keep it there). Demo-server's tests compile this file
 * too (see their pom).
 */
public final class LeakDetection implements BeforeEachCallback, AfterEachCallback {

    private static final Queue<String> REPORTS = new ConcurrentLinkedQueue<>();
    private static final int GC_ROUNDS = 3;

    static {
        detector().setLeakListener((type, records) -> REPORTS.add(type + " leaked:" + records));
    }

    private ResourceLeakDetector.Level previous;

    @Override
    public void beforeEach(ExtensionContext context) {
        previous = begin();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        end(previous, context.getDisplayName());
    }

    /**
     * Sets the level to {@code PARANOID} and drops the reports of earlier, unchecked code.
     *
     * @return the level to restore
     */
    static ResourceLeakDetector.Level begin() {
        ResourceLeakDetector.Level before = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        collect();
        return before;
    }

    /**
     * Restores the level, after collecting the reports.
     *
     * @throws AssertionError quoting every leak report, if there is one
     */
    static void end(ResourceLeakDetector.Level restore, String testName) {
        List<String> leaks;
        try {
            leaks = collect();
        } finally {
            ResourceLeakDetector.setLevel(restore);
        }
        if (!leaks.isEmpty()) {
            throw new AssertionError(leaks.size() + " ByteBuf leak(s) reported by Netty's PARANOID leak detector "
                    + "during or just before " + testName + ":\n" + String.join("\n", leaks));
        }
    }

    /**
     * The leak reports of every buffer that is garbage now and was never released: collects the
     * garbage (waiting for the collector to hand over its weak references), then allocates a buffer,
     * which makes the detector go through what was collected. Must run at {@code PARANOID} (or
     * {@code ADVANCED}), which is when each allocation looks.
     */
    public static List<String> collect() {
        for (int i = 0; i < GC_ROUNDS; i++) {
            collectGarbage();
            ByteBuf probe = ByteBufAllocator.DEFAULT.buffer(1);
            probe.release();
        }
        List<String> out = new ArrayList<>();
        for (String r; (r = REPORTS.poll()) != null; ) {
            out.add(r);
        }
        return out;
    }

    /**
     * A full collection, and the reference handler's hand-off of the cleared weak references: waits
     * (at most 2 s) for a sentinel's, cleared in the same collection as the leaked buffers'.
     */
    private static void collectGarbage() {
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
        System.gc();
        try {
            if (queue.remove(2_000) == null) {
                System.gc();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sentinel.clear();
    }

    @SuppressWarnings("unchecked")
    private static ResourceLeakDetector<ByteBuf> detector() {
        try {
            Field f = Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
            f.setAccessible(true);
            return (ResourceLeakDetector<ByteBuf>) f.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Netty's ByteBuf leak detector is not where this Netty version was "
                    + "expected to keep it (AbstractByteBuf.leakDetector)", e);
        }
    }
}
