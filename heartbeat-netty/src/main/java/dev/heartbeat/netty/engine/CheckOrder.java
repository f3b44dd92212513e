/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

/**
 * The order in which {@code IdleStateHandler} would run its reader, writer and all-idle tasks, kept
 * as the index of a permutation of the three kinds so that a handler spends three bits on it.
 *
 * <p>{@code IdleStateHandler} runs its scheduled tasks by deadline, ties in the order they were
 * scheduled, and each task schedules itself again when it runs. The order matters twice: a user who
 * closes the channel on the first event receives no other (the later tasks find it closed), and with
 * {@code observeOutput} the first of the writer and all checks to look at the outbound buffer takes
 * its change. The worker replays it: of the checks due, the one with the earliest check time runs
 * first, ties by their place in the scheduling order, and moves to the back of it; and the kinds
 * found idle are handed to the event loop in an order of their own, in the order they were found.
 *
 * <p>Stateless; the worker and the event loop each read the index they were handed.
 */
public final class CheckOrder {

    static final int READER = 0;
    static final int WRITER = 1;
    static final int ALL = 2;

    /** Every order of the three kinds; an index into this table is an order. */
    private static final byte[][] PERMUTATIONS = {
        {READER, WRITER, ALL}, {READER, ALL, WRITER}, {WRITER, READER, ALL},
        {WRITER, ALL, READER}, {ALL, READER, WRITER}, {ALL, WRITER, READER},
    };

    /** How many orders there are: an order is an index below this. */
    static final int ORDERS = 6;

    /** The order IdleStateHandler schedules its tasks in when it starts. */
    static final int INITIAL = 0;

    private CheckOrder() {
    }

    /** The timeout of idle {@code kind} under {@code cfg}, 0 when off. */
    static long timeout(Plan cfg, int kind) {
        return kind == READER ? cfg.readerIdleNanos : kind == WRITER ? cfg.writerIdleNanos : cfg.allIdleNanos;
    }

    /** Any thread: the ticker time of the latest activity of idle {@code kind} (opaque reads of the stamps). */
    static long lastActivity(HeartbeatHandler h, int kind) {
        return kind == READER ? h.lastReadOpaque()
                : kind == WRITER ? h.lastWriteOpaque() : Rule.latest(h.lastReadOpaque(), h.lastWriteOpaque());
    }

    /** The kind at {@code position} (0, 1 or 2) of {@code order}. */
    static int kindAt(int order, int position) {
        return PERMUTATIONS[order][position];
    }

    /** {@code order} with {@code kind} moved to its back: the order once that kind's task ran again. */
    static int moveToBack(int order, int kind) {
        byte[] p = PERMUTATIONS[order];
        int first = -1;
        int second = -1;
        for (int i = 0; i < 3; i++) {
            if (p[i] != kind) {
                if (first < 0) {
                    first = p[i];
                } else {
                    second = p[i];
                }
            }
        }
        return indexOf(first, second, kind);
    }

    private static int indexOf(int a, int b, int c) {
        for (int i = 0; i < PERMUTATIONS.length; i++) {
            byte[] p = PERMUTATIONS[i];
            if (p[0] == a && p[1] == b && p[2] == c) {
                return i;
            }
        }
        throw new AssertionError(a + "," + b + "," + c);
    }
}
