/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import io.netty.channel.Channel;

/**
 * The judging the idle policies share ({@link EventPolicy}, {@link ClosePolicy}): the worker replays
 * {@code IdleStateHandler}'s three timeout tasks. For each enabled kind (reader, writer, all) the
 * handler keeps the time that task would run next and, when it comes due, the worker makes the same
 * decision the task would, from the same stamps. Because a decision is taken as of the scheduled
 * check time (never later than the worker's own now), events keep exactly {@code IdleStateHandler}'s
 * cadence; only their delivery is up to a tick later. What to do about the kinds found idle is the
 * subclass's, on the event loop, which checks each again from the current stamps first.
 *
 * <p>Stateless. Per channel: the three check times and the handler's judgement word (which kinds
 * were idle at their last check, and the order the three tasks were last scheduled in). The check
 * times of the enabled kinds are in the handler's two policy slots (the reader's in slot 0, the
 * writer's in slot 1, the all-idle check's in whichever of the two is free); a configuration that
 * enables all three keeps the all-idle check's time in an {@link AllIdleCheck} side object, so the
 * handler carries two check times, not three, for every other configuration.
 */
public abstract class IdlePolicy extends HandlerPolicy {

    // Action bits, worker -> event loop: the kinds found idle (first or subsequent) ...
    public static final int READER = 1;
    static final int READER_FIRST = 1 << 1;
    public static final int WRITER = 1 << 2;
    static final int WRITER_FIRST = 1 << 3;
    static final int ALL = 1 << 4;
    static final int ALL_FIRST = 1 << 5;
    /** ... and the order to act on them in: a {@link CheckOrder} index in these three bits. */
    private static final int ORDER_SHIFT = 10;
    private static final int ORDER_BITS = 7 << ORDER_SHIFT;

    // Judgement flags (worker only): whether each kind was idle at its last check ...
    private static final int READER_WAS_IDLE = 1;
    private static final int WRITER_WAS_IDLE = 1 << 1;
    private static final int ALL_WAS_IDLE = 1 << 2;
    /** ... and the {@link CheckOrder} in which IdleStateHandler would have scheduled its tasks last. */
    private static final int SCHEDULED_SHIFT = 6;
    private static final int SCHEDULED_BITS = 7 << SCHEDULED_SHIFT;

    @Override
    boolean tracksReads(Plan cfg) {
        return cfg.readerIdleNanos > 0 || cfg.allIdleNanos > 0;
    }

    @Override
    boolean tracksWrites(Plan cfg) {
        return cfg.writerIdleNanos > 0 || cfg.allIdleNanos > 0;
    }

    @Override
    public void describe(Plan cfg, StringBuilder s) {
        s.append(", readerIdle=").append(cfg.owner.readerIdle()).append(", writerIdle=").append(cfg.owner.writerIdle())
                .append(", allIdle=").append(cfg.owner.allIdle()).append(", observeOutput=").append(cfg.observeOutput);
    }

    /**
     * An {@link OutputObserver} for {@code observeOutput}, taking the outbound buffer as it is now (as
     * a new IdleStateHandler would); else an {@link AllIdleCheck} if all three kinds are on (an
     * existing one is kept; an output observer is one); else whatever the handler has.
     */
    @Override
    Object sideFor(Plan cfg, Object current, Channel channel, long now, Randomness random) {
        if (cfg.observeOutput) {
            if (current instanceof OutputObserver output) {
                output.snapshot(channel, now);
                return output;
            }
            return new OutputObserver(channel, now);
        }
        if (allThree(cfg)) {
            return current instanceof AllIdleCheck ? current : new AllIdleCheck();
        }
        return current;
    }

    /** Whether {@code cfg} enables all three kinds: then the all-idle check time is in an {@link AllIdleCheck}. */
    private static boolean allThree(Plan cfg) {
        return cfg.readerIdleNanos > 0 && cfg.writerIdleNanos > 0 && cfg.allIdleNanos > 0;
    }

    /**
     * Worker: the all-idle check's side object of {@code cfg}, or null if {@code cfg} needs none; also
     * null if it needs one and the handler has none, which only a worker still judging a configuration
     * the event loop is switching away from sees (see {@link HeartbeatHandler#allIdleCheck}).
     */
    private static AllIdleCheck third(HeartbeatHandler h, Plan cfg) {
        return allThree(cfg) ? h.allIdleCheck() : null;
    }

    /** When the enabled check of {@code kind} is next due: in its policy slot, or in {@code third}. */
    private static long due(HeartbeatHandler h, Plan cfg, AllIdleCheck third, int kind) {
        int slot = slotOf(cfg, kind);
        return slot >= 0 ? h.checkTime(slot) : third.due;
    }

    /** Sets when the enabled check of {@code kind} is next due. */
    private static void due(HeartbeatHandler h, Plan cfg, AllIdleCheck third, int kind, long time) {
        int slot = slotOf(cfg, kind);
        if (slot >= 0) {
            h.checkTime(slot, time);
        } else {
            third.due = time;
        }
    }

    /**
     * The policy slot of the enabled check of {@code kind}: the reader's is 0 and the writer's 1; the
     * all-idle check's is whichever of the two its configuration leaves free, or -1 (the side object).
     */
    private static int slotOf(Plan cfg, int kind) {
        if (kind != CheckOrder.ALL) {
            return kind == CheckOrder.READER ? 0 : 1;
        }
        return cfg.readerIdleNanos == 0 ? 0 : cfg.writerIdleNanos == 0 ? 1 : -1;
    }

    // ------------------------------------------------------------------ worker

    /** Each check starts from {@code start}, as IdleStateHandler schedules its three tasks when it initialises. */
    @Override
    void start(HeartbeatHandler h, Plan cfg, long start) {
        h.judgement(CheckOrder.INITIAL << SCHEDULED_SHIFT); // and no kind was idle
        AllIdleCheck third = third(h, cfg);
        if (allThree(cfg) && third == null) {
            return; // a stale configuration (see third): its judge looks no further either
        }
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            long timeout = CheckOrder.timeout(cfg, kind);
            if (timeout > 0) { // a disabled kind has no slot: the all-idle check may have taken it
                due(h, cfg, third, kind, start + timeout);
            }
        }
    }

    @Override
    int judge(HeartbeatHandler h, BoundConfig bound, long now) {
        Plan cfg = bound.config;
        AllIdleCheck third = third(h, cfg);
        if (allThree(cfg) && third == null) {
            // A reconfiguration away from this configuration is under way: its request decides.
            return verdict(h, now + cfg.shortestNanos, 0);
        }
        long read = h.lastReadOpaque();
        long write = h.lastWriteOpaque();
        boolean busy = h.readingOpaque();
        // Replay IdleStateHandler's task queue up to now: the due check with the earliest time runs
        // first (ties in scheduling order) and goes to the back of that order, as a task that runs
        // schedules itself again. A check that found the channel busy is due again at the last
        // activity plus its timeout, which may be before now (the worker looks up to a tick late):
        // then it runs again in this loop, in its place among the others, so that what it finds
        // comes in IdleStateHandler's order. Each kind runs at most twice: the second run finds the
        // channel idle (the stamps are those the first one saw), and an idle check is next due a
        // whole timeout later. The checks are independent here; the order matters on the event loop.
        int scheduled = (h.judgement() & SCHEDULED_BITS) >>> SCHEDULED_SHIFT;
        int found = CheckOrder.INITIAL; // the kinds found idle go to its back, in the order found
        int bits = 0;
        boolean ran = false;
        while (true) {
            int kind = -1;
            long at = 0;
            for (int i = 0; i < 3; i++) {
                int k = CheckOrder.kindAt(scheduled, i);
                long timeout = CheckOrder.timeout(cfg, k);
                long due = timeout > 0 ? due(h, cfg, third, k) : 0;
                if (timeout > 0 && now - due >= 0) {
                    long t = checkTime(due, timeout, now);
                    if (kind < 0 || t - at < 0) {
                        kind = k;
                        at = t;
                    }
                }
            }
            if (kind < 0) {
                break;
            }
            ran = true;
            scheduled = CheckOrder.moveToBack(scheduled, kind);
            int event = runCheck(h, cfg, third, kind, at, read, write, busy);
            if (event != 0) {
                bits |= event;
                found = CheckOrder.moveToBack(found, kind);
            }
        }
        if (ran) {
            h.judgement((h.judgement() & ~SCHEDULED_BITS) | (scheduled << SCHEDULED_SHIFT));
            bits |= found << ORDER_SHIFT;
        }
        return verdict(h, nextCheck(h, cfg, third), bits);
    }

    /**
     * The kinds whose verdict is void: the worker's latest check of the kind found it not idle, or found it idle
     * as of a time less than a timeout after the activity now stamped (traffic came after that check). An idle
     * verdict waiting in the budget past a read and a whole timeout after it would else fire in the new spell,
     * before or beside the verdict of the worker's own check of that spell: two events a timeout apart at most
     * (the interaction model, seed 5450). A kind the worker found idle again since the traffic keeps its bits,
     * merged into one event of the new spell, and its first-event bit from that check.
     */
    @Override
    int outdatedBits(HeartbeatHandler h, Plan cfg) {
        AllIdleCheck third = third(h, cfg);
        if (allThree(cfg) && third == null) {
            return 0; // a stale configuration: the event loop drops its verdicts
        }
        int outdated = 0;
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            long timeout = CheckOrder.timeout(cfg, kind);
            if (timeout > 0 && ((h.judgement() & wasIdleFlag(kind)) == 0
                    || due(h, cfg, third, kind) - timeout - CheckOrder.lastActivity(h, kind) < timeout)) {
                outdated |= eventBit(kind, true) | eventBit(kind, false);
            }
        }
        return outdated;
    }

    /** The earliest of the enabled checks. */
    private static long nextCheck(HeartbeatHandler h, Plan cfg, AllIdleCheck third) {
        long next = 0;
        boolean any = false;
        for (int kind = CheckOrder.READER; kind <= CheckOrder.ALL; kind++) {
            if (CheckOrder.timeout(cfg, kind) > 0) {
                long due = due(h, cfg, third, kind);
                next = any ? earliest(next, due) : due;
                any = true;
            }
        }
        return next;
    }

    /**
     * One run of an {@code IdleStateHandler} timeout task of {@code kind}, taken at {@code at} (its
     * due time, see {@link #checkTime}): idle if the last activity is at least the kind's timeout
     * before it. Sets when the check runs next.
     *
     * @return the event bit if it found the channel idle (first or subsequent), else 0
     */
    private static int runCheck(HeartbeatHandler h, Plan cfg, AllIdleCheck third, int kind, long at,
            long read, long write, boolean reading) {
        long timeout = CheckOrder.timeout(cfg, kind);
        long last = kind == CheckOrder.READER ? read : kind == CheckOrder.WRITER ? write : latest(read, write);
        boolean busy = reading && kind != CheckOrder.WRITER; // a read in progress is no write
        int wasIdle = wasIdleFlag(kind);
        int judgement = h.judgement();
        if (!busy && at - last >= timeout) {
            h.judgement(judgement | wasIdle);
            due(h, cfg, third, kind, at + timeout);
            return eventBit(kind, (judgement & wasIdle) == 0);
        }
        h.judgement(judgement & ~wasIdle);
        due(h, cfg, third, kind, busy ? at + timeout : last + timeout);
        return 0;
    }

    /** When a check due at {@code due} is taken: then, or now if it is a whole period late (a stall). */
    private static long checkTime(long due, long timeout, long now) {
        return now - due >= timeout ? now : due;
    }

    private static int wasIdleFlag(int kind) {
        return kind == CheckOrder.READER ? READER_WAS_IDLE : kind == CheckOrder.WRITER ? WRITER_WAS_IDLE : ALL_WAS_IDLE;
    }

    private static int eventBit(int kind, boolean first) {
        return kind == CheckOrder.READER ? (first ? READER_FIRST : READER)
                : kind == CheckOrder.WRITER ? (first ? WRITER_FIRST : WRITER) : (first ? ALL_FIRST : ALL);
    }

    // ------------------------------------------------------------------ event loop

    /**
     * The order, in IdleStateHandler's, to act on the kinds found idle: a {@link CheckOrder} index. Two
     * verdicts in one word (a close that joined a held one and comes back at its re-check, hand-offs
     * merged while they wait) have their orders OR'ed, which can name none of the six (3 | 4, seed 649:
     * the re-check threw, and the held close was lost until the next idle check): then IdleStateHandler's
     * initial order. Every kind the bits name is looked at in any order.
     */
    static int order(int bits) {
        int order = (bits & ORDER_BITS) >>> ORDER_SHIFT;
        return order < CheckOrder.ORDERS ? order : CheckOrder.INITIAL;
    }

    /** Whether {@code bits} say {@code kind} was found idle for the first time since it was last busy. */
    static boolean first(int kind, int bits) {
        return (bits & eventBit(kind, true)) != 0;
    }

    /** Event loop: whether the verdict's {@code kind} still holds from the current stamps. */
    static boolean idle(HeartbeatHandler h, int kind, Plan cfg, int bits, long now) {
        if ((bits & (eventBit(kind, true) | eventBit(kind, false))) == 0) {
            return false;
        }
        switch (kind) {
            case CheckOrder.READER:
                return cfg.readerIdleNanos > 0 && !h.readingOpaque()
                        && now - h.lastReadOpaque() >= cfg.readerIdleNanos;
            case CheckOrder.WRITER:
                return cfg.writerIdleNanos > 0 && now - h.lastWriteOpaque() >= cfg.writerIdleNanos
                        && !outputChanged(h, cfg, first(kind, bits));
            default:
                return cfg.allIdleNanos > 0 && !h.readingOpaque()
                        && now - CheckOrder.lastActivity(h, kind) >= cfg.allIdleNanos
                        && !outputChanged(h, cfg, first(kind, bits));
        }
    }


    private static boolean outputChanged(HeartbeatHandler h, Plan cfg, boolean first) {
        OutputObserver output = cfg.observeOutput ? h.output() : null;
        return output != null && output.changed(h.ctx.channel(), first, h.lastWriteStamp());
    }
}
