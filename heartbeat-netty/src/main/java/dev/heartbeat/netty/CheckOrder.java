/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

/**
 * The order in which {@code IdleStateHandler} would run its reader, writer and all-idle tasks, kept
 * as the index of a permutation of the three kinds so that a handler spends one byte on it.
 *
 * <p>{@code IdleStateHandler} runs its scheduled tasks by deadline, ties in the order they were
 * scheduled, and each task schedules itself again when it runs. The order matters twice: a user who
 * closes the channel on the first event receives no other (the later tasks find it closed), and with
 * {@code observeOutput} the first of the writer and all checks to look at the outbound buffer takes
 * its change. The worker replays it: the checks due in one expiry run sorted by check time, then by
 * their place in the scheduling order; afterwards they move to the back of it, in the order they ran.
 *
 * <p>Stateless; the worker and the event loop each read the index they were handed.
 */
final class CheckOrder {

    static final int READER = 0;
    static final int WRITER = 1;
    static final int ALL = 2;

    /** Every order of the three kinds; an index into this table is an order. */
    private static final byte[][] PERMUTATIONS = {
        {READER, WRITER, ALL}, {READER, ALL, WRITER}, {WRITER, READER, ALL},
        {WRITER, ALL, READER}, {ALL, READER, WRITER}, {ALL, WRITER, READER},
    };

    /** The order IdleStateHandler schedules its tasks in when it starts. */
    static final int INITIAL = 0;

    private CheckOrder() {
    }

    /** The kind at {@code position} (0, 1 or 2) of {@code order}. */
    static int kindAt(int order, int position) {
        return PERMUTATIONS[order][position];
    }

    /**
     * The order in which the due checks run: {@code due} has bit {@code 1 << kind} for each due kind,
     * {@code at} its check time; ties keep their place in {@code scheduled}. Kinds not due follow.
     */
    static int runOrder(int scheduled, int due, long readerAt, long writerAt, long allAt) {
        byte[] s = PERMUTATIONS[scheduled];
        int a = s[0];
        int b = s[1];
        int c = s[2];
        // Insertion sort of three, stable: a due kind goes before a later-scheduled one only if its
        // check time is strictly earlier, and before any kind that is not due.
        if (before(due, b, a, readerAt, writerAt, allAt)) {
            int t = a;
            a = b;
            b = t;
        }
        if (before(due, c, b, readerAt, writerAt, allAt)) {
            int t = b;
            b = c;
            c = t;
            if (before(due, b, a, readerAt, writerAt, allAt)) {
                t = a;
                a = b;
                b = t;
            }
        }
        return indexOf(a, b, c);
    }

    /** The scheduling order after the due kinds ran in {@code run} order: they move to the back. */
    static int afterRun(int scheduled, int run, int due) {
        int packed = 0; // two bits a kind, first in the lowest: no array on the worker's path
        int n = 0;
        byte[] s = PERMUTATIONS[scheduled];
        for (int i = 0; i < 3; i++) {
            if ((due & 1 << s[i]) == 0) {
                packed |= s[i] << (2 * n++);
            }
        }
        byte[] r = PERMUTATIONS[run];
        for (int i = 0; i < 3; i++) {
            if ((due & 1 << r[i]) != 0) {
                packed |= r[i] << (2 * n++);
            }
        }
        return indexOf(packed & 3, packed >>> 2 & 3, packed >>> 4 & 3);
    }

    private static boolean before(int due, int x, int y, long readerAt, long writerAt, long allAt) {
        if ((due & 1 << x) == 0) {
            return false;
        }
        if ((due & 1 << y) == 0) {
            return true;
        }
        return at(x, readerAt, writerAt, allAt) - at(y, readerAt, writerAt, allAt) < 0;
    }

    private static long at(int kind, long readerAt, long writerAt, long allAt) {
        return kind == READER ? readerAt : kind == WRITER ? writerAt : allAt;
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
