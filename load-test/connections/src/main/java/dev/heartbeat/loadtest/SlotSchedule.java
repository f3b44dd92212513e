/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.Arrays;

/**
 * Fires an action for each member connection once per period, at a fixed phase of its own, with
 * the moment it was <em>meant</em> to fire: the period is cut into slots of about a millisecond and
 * each connection sits in one slot for life. A loop that runs late fires the missed slots on its next
 * turns, each with its own intended moment, so a stall shows up in latencies measured from those
 * moments instead of being hidden (coordinated omission). At most one period of slots per
 * {@link #fire}: catching up after a long stall takes several turns, never one unbounded burst.
 *
 * <p>Not thread-safe: owned by one event loop ({@link ClientLoop}).
 */
final class SlotSchedule {

    /** Receives one firing. */
    interface Action {
        /** Fires for a member; {@code intendedNanos} is the moment its slot was due. */
        void fire(ClientConnection c, long intendedNanos);
    }

    private static final long TARGET_SLOT_NANOS = 1_000_000;
    private static final int MAX_SLOTS = 4096;

    private final long slotNanos;
    private final ClientConnection[][] members;
    private final int[] sizes;
    private long nextSlotAt;
    private int nextSlot;

    /**
     * @param periodNanos between two firings of one member
     * @param startNanos the moment slot 0 is first due
     */
    SlotSchedule(long periodNanos, long startNanos) {
        int slots = (int) Math.max(1, Math.min(MAX_SLOTS, periodNanos / TARGET_SLOT_NANOS));
        this.slotNanos = periodNanos / slots;
        this.members = new ClientConnection[slots][];
        this.sizes = new int[slots];
        this.nextSlotAt = startNanos;
    }

    /** The number of slots in one period. */
    int slots() {
        return members.length;
    }

    /** Adds a connection to the slot its index hashes to; it first fires when that slot next comes due. */
    void add(ClientConnection c) {
        int slot = (int) Long.remainderUnsigned(Scenario.mix64(c.index), members.length);
        ClientConnection[] list = members[slot];
        if (list == null) {
            list = members[slot] = new ClientConnection[4];
        } else if (sizes[slot] == list.length) {
            list = members[slot] = Arrays.copyOf(list, list.length * 2);
        }
        list[sizes[slot]++] = c;
    }

    /**
     * Fires every slot due at {@code now}, at most one period of them, dropping closed members.
     *
     * @return how many firings were made
     */
    int fire(long now, Action action) {
        int fired = 0;
        for (int turn = 0; turn < members.length && nextSlotAt - now <= 0; turn++) {
            ClientConnection[] list = members[nextSlot];
            int size = sizes[nextSlot];
            for (int i = size - 1; i >= 0; i--) {
                ClientConnection c = list[i];
                if (c.isClosed()) {
                    list[i] = list[--size];
                    list[size] = null;
                } else {
                    action.fire(c, nextSlotAt);
                    fired++;
                }
            }
            sizes[nextSlot] = size;
            nextSlot = nextSlot + 1 == members.length ? 0 : nextSlot + 1;
            nextSlotAt += slotNanos;
        }
        return fired;
    }
}
