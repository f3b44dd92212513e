/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

// Over 500 lines (listed in checkstyle.xml): one data structure whose link, cascade and bitmap code share invariants
// that read best in one place; half of it is the implementation notes.
/**
 * A hierarchical timing wheel: schedule, move and cancel an intrusive {@link TimerEntry} in O(1)
 * without allocating, and expire due entries in {@link #advance} at most one tick late and never
 * early.
 *
 * <p>The wheel never reads a clock: every time is an argument, in any nanosecond time base whose
 * values may wrap (such as {@link System#nanoTime()}); times are only ever compared by subtraction.
 *
 * <p><b>Not thread-safe.</b> One thread owns a wheel and all of its entries' wheel state. To share
 * one wheel between threads, use a {@link TimerWorker}.
 *
 * <p><b>Caveats.</b> Entries that expire in the same {@code advance} are handed out in no
 * particular order. A deadline more than 2<sup>61</sup> ns (about 73 years) ahead is treated as that
 * far ahead.
 */
public final class TimingWheel<E extends TimerEntry> {

    /*
     * Implementation notes.
     *
     * Time is counted in ticks of 2^tickShift ns since the wheel's origin (the start time given to
     * the constructor), so tick arithmetic is shifts on non-negative numbers and nanoTime's wrap is
     * absorbed once, in `time - origin`. An entry expires at tick x = ceil((deadline - origin) / tick):
     * the first tick boundary at or after its deadline. That rounding is what makes the wheel never
     * early, and it costs at most one tick of lateness.
     *
     * Levels are Varghese & Lauck's scheme 7 [1] with 64 slots per level, in the style of the Linux
     * kernel's timer wheel [2] and Caffeine's TimerWheel [3]. Read x and the current tick c as numbers
     * in base 64; digit i of x selects slot x_i = (x >>> 6i) & 63 of level i. An entry goes to the
     * level of the highest digit in which x and c differ, so at that level its digit is ahead of c's
     * and it is reached exactly when the clock's prefix at that level reaches x's. Reaching a slot
     * detaches its list and either expires each entry (deadline passed) or places it again against
     * the new current tick, which always lands it on a lower level ("cascading"). An entry moves
     * down at most once per level, so the amortised cost of an entry stays O(levels) and an
     * operation on it is O(1).
     *
     * Entries beyond the top level's reach (x and c differ above the top digit) wait in the top level
     * at x's slot if it is at most 63 slots ahead, else in the slot just before the current one, and
     * are placed again when it is reached.
     *
     * One occupancy word per level has a bit per non-empty slot: advancing visits only occupied
     * slots of the range passed over, and the next occupied slot gives the time to sleep until.
     *
     * An entry does not record where it is (as in Caffeine's TimerWheel [3]): it is scheduled iff it
     * has a next link, and only the list heads (sentinels) know their slot. Unlinking an entry whose
     * neighbours are the same node leaves that node alone in its list, and that node is the head, so
     * the slot's occupancy bit is cleared from the head's own location without a per-entry field.
     *
     * Reaching a slot only moves its list to a cascading list (O(1)); advance then places its entries
     * one by one, all of them or, with a place limit, as many as the caller allows per call, so that
     * a caller who must keep each call short (a cycle on a Netty event loop) spreads the cascade of a
     * large higher-level slot over several calls instead of relinking it all at once.
     *
     * Entries whose deadline has already passed when they are scheduled or reached wait in the due
     * list; advance hands out at most `limit` of them per call and leaves the rest for the next
     * call. Entries that a handler schedules into the past during an advance also wait for the next
     * call, so a handler that keeps re-arming itself cannot make one call run forever.
     *
     * [1] G. Varghese and A. Lauck, "Hashed and Hierarchical Timing Wheels: Efficient Data Structures
     *     for Implementing a Timer Facility", IEEE/ACM Transactions on Networking, 1997.
     * [2] T. Gleixner, "timers: Switch to a non-cascading wheel", Linux 4.8, kernel/time/timer.c.
     * [3] B. Manes, Caffeine, com.github.benmanes.caffeine.cache.TimerWheel.
     */

    static final int SLOT_BITS = 6;
    static final int SLOTS = 1 << SLOT_BITS;
    static final int SLOT_MASK = SLOTS - 1;

    /** The default tick: 2^20 ns. */
    public static final long DEFAULT_TICK_NANOS = Long.highestOneBit(TimeUnit.MILLISECONDS.toNanos(1)) << 1; // 1.05 ms
    /** The default number of levels: 5 levels of 64 slots reach 2^50 ns ahead with the default tick. */
    public static final int DEFAULT_LEVELS = 5; // 2^(20 + 5 * 6) ns = 13.0 days
    /** The largest tick accepted: 2^30 ns. */
    public static final long MAX_TICK_NANOS = 1L << 30; // 1.07 s

    /** {@link #locationOf} an entry that is in no list. */
    static final int UNLINKED = -1;
    /** {@link #locationOf} an entry in the due list (deadline already passed); also the due lists' head. */
    static final int DUE = -2;

    /** The farthest deadline the wheel tells apart: later ones are treated as this far ahead. */
    public static final long MAX_DELAY_NANOS = 1L << 61; // 73 years

    private final int tickShift;
    private final long tickMask;
    private final int levels;
    private final long origin;
    /** Sentinels of the circular slot lists, level * 64 + slot. */
    private final Head[] slots;
    /** One bit per non-empty slot, per level. */
    private final long[] occupied;
    /** Entries whose deadline has passed, waiting to be handed out. */
    private final Head due = new Head(DUE);
    /** During {@link #expire}: the due entries the call started with and has not handed out yet. */
    private final Head expiring = new Head(DUE);
    /** Entries of reached slots not placed again yet (see {@link #advance(long, int, int, ExpiryHandler)}). */
    private final Head cascading = new Head(DUE);

    /** The time of the latest advance (or the start time). */
    private long time;
    /** Whole ticks from origin to {@link #time}. */
    private long currentTick;
    private int size;

    /** A wheel with the default tick and levels, whose clock starts at {@code startTime}. */
    public TimingWheel(long startTime) {
        this(DEFAULT_TICK_NANOS, DEFAULT_LEVELS, startTime);
    }

    /**
     * A wheel whose clock starts at {@code startTime}.
     *
     * @param tickNanos the resolution, rounded up to a power of two (see {@link #tickNanos()}); an
     *     entry fires at most this much after its deadline, given timely {@link #advance} calls
     * @param levels how many levels of 64 slots; the wheel reaches {@code tick * 64^levels} ahead
     *     before entries have to wait at the top level
     * @param startTime the current time in the caller's time base, such as {@code System.nanoTime()}
     * @throws IllegalArgumentException if {@code tickNanos} is not in [1, {@link #MAX_TICK_NANOS}] or
     *     {@code levels} is not in [1, {@link #maxLevels(long)}]
     */
    public TimingWheel(long tickNanos, int levels, long startTime) {
        if (tickNanos < 1 || tickNanos > MAX_TICK_NANOS) {
            throw new IllegalArgumentException(
                    "tickNanos must be in [1, " + MAX_TICK_NANOS + "]: " + tickNanos);
        }
        checkLevels(tickNanos, levels);
        this.tickShift = 64 - Long.numberOfLeadingZeros(tickNanos - 1);
        this.tickMask = (1L << tickShift) - 1;
        this.levels = levels;
        this.origin = startTime;
        this.time = startTime;
        this.slots = new Head[levels * SLOTS];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Head(i);
        }
        this.occupied = new long[levels];
    }

    /**
     * Checks a level count against a tick: the one home of that rule (the wheel's constructor and
     * {@link TimerWorker.Builder} both use it).
     *
     * @throws IllegalArgumentException if {@code levels} is not in [1, {@link #maxLevels(long)}]
     */
    public static void checkLevels(long tickNanos, int levels) {
        int max = maxLevels(tickNanos);
        if (levels < 1 || levels > max) {
            throw new IllegalArgumentException("levels must be in [1, " + max + "] for a tick of " + tickNanos
                    + " ns: " + levels);
        }
    }

    /** The largest level count for a tick: the wheel's span in nanoseconds must stay below 2^62. */
    public static int maxLevels(long tickNanos) {
        int shift = 64 - Long.numberOfLeadingZeros(Math.max(1, tickNanos) - 1);
        return (62 - shift) / SLOT_BITS;
    }

    /** The head (sentinel) of a circular list: the only node that knows which list it is. */
    private static final class Head extends TimerEntry {
        /** level * 64 + slot of a slot list, or {@link #DUE}. */
        final int location;

        Head(int location) {
            this.location = location;
            this.prev = this;
            this.next = this;
        }
    }

    /** The tick in nanoseconds: a power of two. */
    public long tickNanos() {
        return 1L << tickShift;
    }

    /** The number of levels. */
    public int levels() {
        return levels;
    }

    /** The time of the latest {@link #advance}, or the start time. */
    public long time() {
        return time;
    }

    /** The number of scheduled entries, including those due but not yet handed out. */
    public int size() {
        return size;
    }

    /** Whether no entry is scheduled. */
    public boolean isEmpty() {
        return size == 0;
    }

    /**
     * Schedules {@code entry} to expire at {@code deadline}, moving it if it is already scheduled.
     * A deadline at or before the wheel's {@link #time()} makes the entry due on the next advance.
     * O(1), no allocation.
     */
    public void schedule(E entry, long deadline) {
        if (entry.next != null) {
            unlink(entry);
        } else {
            size++;
        }
        entry.deadline = deadline;
        place(entry);
    }

    /**
     * Removes {@code entry} if it is scheduled. O(1), no allocation.
     *
     * @return whether it was scheduled
     */
    public boolean cancel(E entry) {
        if (entry.next == null) {
            return false;
        }
        unlink(entry);
        size--;
        return true;
    }

    /**
     * Moves the wheel's time to {@code now} and hands at most {@code limit} due entries to
     * {@code handler}, each removed from the wheel before its call. The handler may schedule or cancel
     * any entry, including the one it was given. If it throws, the exception propagates and the wheel
     * stays consistent: entries not yet handed out stay due for the next call.
     *
     * <p>A {@code now} that is not after {@link #time()} moves nothing and only hands out due entries.
     *
     * @return the number of entries handed out
     * @throws IllegalArgumentException if {@code limit < 1}
     */
    public int advance(long now, int limit, ExpiryHandler<? super E> handler) {
        return advance(now, limit, Integer.MAX_VALUE, handler);
    }

    /**
     * As {@link #advance(long, int, ExpiryHandler)}, but places again at most {@code placeLimit}
     * entries of the slots the clock has reached (cascading) before it expires: the rest wait, counted
     * by {@link #hasDue()} as work to do now, and are placed by the next calls (a clock that moved on
     * meanwhile places them against the new time, as if they had been reached then). So one call's
     * work is bounded even when a higher-level slot of many entries is reached; until its entries are
     * placed, those of them that are due are not handed out, so they are late by the calls it takes.
     *
     * @return the number of entries handed out
     * @throws IllegalArgumentException if {@code limit < 1} or {@code placeLimit < 1}
     */
    public int advance(long now, int limit, int placeLimit, ExpiryHandler<? super E> handler) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive: " + limit);
        }
        if (placeLimit < 1) {
            throw new IllegalArgumentException("placeLimit must be positive: " + placeLimit);
        }
        Objects.requireNonNull(handler, "handler");
        if (now - time > 0) {
            long previousTick = currentTick;
            time = now;
            currentTick = (now - origin) >>> tickShift;
            if (currentTick != previousTick) {
                sweep(previousTick, currentTick);
            }
        }
        placeCascading(placeLimit);
        return expire(now, limit, handler);
    }

    /**
     * Whether some entry is due now, so that {@link #advance} at the current time hands it out, or
     * entries of reached slots wait to be placed again (so that it has work to do now).
     */
    public boolean hasDue() {
        return due.next != due || expiring.next != expiring || cascading.next != cascading;
    }

    /**
     * Nanoseconds from {@link #time()} until the wheel next has work: 0 if an entry is already due,
     * {@link Long#MAX_VALUE} if the wheel is empty. Never later than the earliest deadline plus one
     * tick, and never later than the next cascade, so a caller that sleeps this long and then calls
     * {@link #advance} misses nothing. O(levels).
     */
    public long nanosToNextWork() {
        if (hasDue()) {
            return 0;
        }
        if (size == 0) {
            return Long.MAX_VALUE;
        }
        long earliestTick = Long.MAX_VALUE;
        for (int level = 0; level < levels; level++) {
            long bits = occupied[level];
            if (bits == 0) {
                continue;
            }
            int shift = SLOT_BITS * level;
            long index = currentTick >>> shift;
            // Slots are visited in the order index+1, index+2, ...; rotate so that bit 0 is index+1.
            int first = (int) ((index + 1) & SLOT_MASK);
            long step = Long.numberOfTrailingZeros(Long.rotateRight(bits, first));
            long tick = (index + 1 + step) << shift;
            if (tick - earliestTick < 0) {
                earliestTick = tick;
            }
        }
        long elapsed = time - origin;
        return Math.max(0, (earliestTick << tickShift) - elapsed);
    }

    /**
     * Hands every scheduled entry to {@code action}, due ones included, in no particular order. The
     * action must not schedule or cancel entries (collect them, then move them). O(slots + entries).
     */
    @SuppressWarnings("unchecked")
    public void forEach(java.util.function.Consumer<? super E> action) {
        Objects.requireNonNull(action, "action");
        for (Head slot : slots) {
            visitList(slot, action);
        }
        visitList(due, action);
        visitList(expiring, action);
        visitList(cascading, action);
    }

    @SuppressWarnings("unchecked")
    private void visitList(TimerEntry sentinel, java.util.function.Consumer<? super E> action) {
        for (TimerEntry e = sentinel.next; e != sentinel; e = e.next) {
            action.accept((E) e);
        }
    }

    /** Removes every entry; a handler is not called. Afterwards every removed entry is unscheduled. */
    public void clear() {
        for (int i = 0; i < slots.length; i++) {
            clearList(slots[i]);
        }
        clearList(due);
        clearList(expiring);
        clearList(cascading);
        java.util.Arrays.fill(occupied, 0);
        size = 0;
    }

    private static void clearList(TimerEntry sentinel) {
        for (TimerEntry e = sentinel.next; e != sentinel; ) {
            TimerEntry next = e.next;
            e.prev = null;
            e.next = null;
            e = next;
        }
        sentinel.next = sentinel;
        sentinel.prev = sentinel;
    }

    /** Visits, level by level, every occupied slot whose time was passed over from tick {@code from} to {@code to}. */
    private void sweep(long from, long to) {
        for (int level = 0; level < levels; level++) {
            int shift = SLOT_BITS * level;
            long fromIndex = from >>> shift;
            long toIndex = to >>> shift;
            long passed = toIndex - fromIndex;
            if (passed == 0) {
                return; // the higher levels did not move either
            }
            long range = passed >= SLOTS
                    ? -1L
                    : Long.rotateLeft((1L << passed) - 1, (int) ((fromIndex + 1) & SLOT_MASK));
            long visit = occupied[level] & range;
            while (visit != 0) {
                int slot = Long.numberOfTrailingZeros(visit);
                visit &= visit - 1;
                reach(level * SLOTS + slot);
            }
        }
    }

    /** Moves the list of a slot the clock has reached to the end of {@link #cascading}: O(1). */
    private void reach(int location) {
        Head sentinel = slots[location];
        occupied[location >>> SLOT_BITS] &= ~(1L << (location & SLOT_MASK));
        TimerEntry first = sentinel.next;
        TimerEntry last = sentinel.prev;
        sentinel.next = sentinel;
        sentinel.prev = sentinel;
        TimerEntry tail = cascading.prev;
        tail.next = first;
        first.prev = tail;
        last.next = cascading;
        cascading.prev = last;
    }

    /** Places at most {@code limit} entries of {@link #cascading} again (or in the due list), oldest first. */
    private void placeCascading(int limit) {
        for (int n = 0; n < limit && cascading.next != cascading; n++) {
            TimerEntry e = cascading.next;
            TimerEntry next = e.next;
            cascading.next = next;
            next.prev = cascading;
            place(e);
        }
    }

    /** Links an unlinked entry where its deadline belongs, relative to the current time. */
    private void place(TimerEntry entry) {
        long delay = entry.deadline - time;
        if (delay <= 0) {
            linkLast(due, entry);
            return;
        }
        long ticksFromOrigin = (time - origin) + Math.min(delay, MAX_DELAY_NANOS);
        long expiryTick = (ticksFromOrigin >>> tickShift) + ((ticksFromOrigin & tickMask) == 0 ? 0 : 1);
        int level = (63 - Long.numberOfLeadingZeros(expiryTick ^ currentTick)) / SLOT_BITS;
        long index;
        if (level < levels) {
            index = expiryTick >>> (SLOT_BITS * level);
        } else {
            // Too far for the top level's 63 slots ahead, or across its carry: wait in the top level
            // at the expiry's slot or the furthest slot, whichever is reached first.
            level = levels - 1;
            int shift = SLOT_BITS * level;
            index = Math.min(expiryTick >>> shift, (currentTick >>> shift) + SLOT_MASK);
        }
        int slot = (int) (index & SLOT_MASK);
        int location = level * SLOTS + slot;
        linkLast(slots[location], entry);
        occupied[level] |= 1L << slot;
    }

    private static void linkLast(Head sentinel, TimerEntry entry) {
        TimerEntry tail = sentinel.prev;
        entry.prev = tail;
        entry.next = sentinel;
        tail.next = entry;
        sentinel.prev = entry;
    }

    private void unlink(TimerEntry entry) {
        TimerEntry prev = entry.prev;
        TimerEntry next = entry.next;
        prev.next = next;
        next.prev = prev;
        if (prev == next) { // only the head is left: its slot (if it is one) is empty now
            int location = ((Head) prev).location;
            if (location >= 0) {
                occupied[location >>> SLOT_BITS] &= ~(1L << (location & SLOT_MASK));
            }
        }
        entry.prev = null;
        entry.next = null;
    }

    @SuppressWarnings("unchecked")
    private int expire(long now, int budget, ExpiryHandler<? super E> handler) {
        if (due.next == due) {
            return 0;
        }
        // Hand out only the entries due when the call started: a handler that cancels one of them
        // must not make room for an entry it re-armed into the past, which waits for the next call.
        // Both lists are due lists, so cancel and schedule work unchanged on either.
        spliceToFront(due, expiring);
        int expired = 0;
        try {
            while (expired < budget && expiring.next != expiring) {
                TimerEntry entry = expiring.next;
                unlink(entry);
                size--;
                expired++;
                handler.onExpired((E) entry, now);
            }
        } finally {
            spliceToFront(expiring, due); // what is left stays ahead of what handlers made due
        }
        return expired;
    }

    /** Moves every entry of the list {@code from} to the front of the list {@code to}. */
    private static void spliceToFront(Head from, Head to) {
        TimerEntry first = from.next;
        if (first == from) {
            return;
        }
        TimerEntry last = from.prev;
        TimerEntry oldFirst = to.next;
        to.next = first;
        first.prev = to;
        last.next = oldFirst;
        oldFirst.prev = last;
        from.next = from;
        from.prev = from;
    }

    /**
     * Where {@code entry} is: level * 64 + slot, {@link #DUE} or {@link #UNLINKED}. Walks the entry's
     * list to its head, so O(list length): for tests.
     */
    int locationOf(TimerEntry entry) {
        if (entry.next == null) {
            return UNLINKED;
        }
        TimerEntry e = entry.next;
        while (!(e instanceof Head)) {
            e = e.next;
        }
        return ((Head) e).location;
    }

    /**
     * Checks the structure and throws {@link AssertionError} on the first broken invariant: links,
     * locations, occupancy bits, counts, and that every entry sits where its deadline says. For tests.
     */
    void checkInvariants() {
        int seen = 0;
        for (int location = 0; location < slots.length; location++) {
            int level = location >>> SLOT_BITS;
            int slot = location & SLOT_MASK;
            Head sentinel = slots[location];
            int count = checkList(sentinel);
            boolean bit = (occupied[level] & (1L << slot)) != 0;
            if (bit != (count > 0)) {
                throw new AssertionError("occupancy bit of level " + level + " slot " + slot + " is " + bit
                        + " with " + count + " entries");
            }
            for (TimerEntry e = sentinel.next; e != sentinel; e = e.next) {
                long delay = e.deadline - time;
                long fromOrigin = (time - origin) + Math.min(delay, MAX_DELAY_NANOS);
                long expiryTick = (fromOrigin >> tickShift) + ((fromOrigin & tickMask) == 0 ? 0 : 1);
                if (expiryTick - currentTick <= 0) {
                    throw new AssertionError("entry with deadline " + e.deadline + " at time " + time
                            + " is in level " + level + " instead of due");
                }
                // The slot must be reached no later than the entry's expiry tick.
                int shift = SLOT_BITS * level;
                long index = currentTick >>> shift;
                long reachTick = (index + ((slot - index - 1) & SLOT_MASK) + 1) << shift;
                if (reachTick - expiryTick > 0) {
                    throw new AssertionError("entry expiring at tick " + expiryTick + " sits in level " + level
                            + " slot " + slot + ", reached only at tick " + reachTick);
                }
            }
            seen += count;
        }
        int dueSeen = checkList(due) + checkList(expiring) + checkList(cascading);
        if (seen + dueSeen != size) {
            throw new AssertionError("wheel holds " + (seen + dueSeen) + " entries, size says " + size);
        }
    }

    private static int checkList(Head sentinel) {
        int location = sentinel.location;
        int count = 0;
        TimerEntry prev = sentinel;
        for (TimerEntry e = sentinel.next; e != sentinel; e = e.next) {
            if (e.prev != prev) {
                throw new AssertionError("broken back link at location " + location);
            }
            if (e instanceof Head) {
                throw new AssertionError("a second list head in the list at location " + location);
            }
            prev = e;
            if (++count > 100_000_000) {
                throw new AssertionError("cycle in list at location " + location);
            }
        }
        if (sentinel.prev != prev) {
            throw new AssertionError("broken tail link at location " + location);
        }
        return count;
    }
}
