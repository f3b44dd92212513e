/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import java.util.concurrent.TimeUnit;

/**
 * Storm control: a token bucket on the worker's hand-offs (pings, closes, idle events), so that
 * 100,000 connections that went silent together are pinged or closed at a steady rate rather than
 * in one burst. What the bucket cannot pay for waits in a FIFO, oldest first, with its action bits
 * parked on the handler (see {@code HeartbeatHandler.offerActions}): a channel that comes due again
 * while it waits adds its bits to the waiting word and takes no second place. Worker only, except
 * the counters (volatile, read by any thread). No allocation in steady state: the FIFO is a ring
 * that grows by doubling and never shrinks.
 *
 * <p>Bound: with a rate of {@code R} per second and {@code B} hand-offs due at once, the last waits
 * {@code B / R} seconds (reported as {@link #worstDelayNanos}); every hand-off is still judged on
 * time and checked again on the event loop, so a deferral only delays, never advances, an action.
 */
public final class ActionBudget {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    /** The bucket holds at most this fraction of a second's rate, so no second sees more than 1.01 x the rate. */
    private static final int BURST_DIVISOR = 100;

    /** The highest rate {@code HeartbeatMonitor.Builder#actionBudget} takes. */
    public static final int MAX_RATE = 100_000_000;

    final int perSecond;
    private final long capacity;
    /** Tokens, scaled by one second of nanos (a token is SECOND units), to refill exactly by elapsed time. */
    private long units;
    private long refilledAt;
    private boolean started;

    private HeartbeatHandler[] handlers = new HeartbeatHandler[64];
    private long[] since = new long[64];
    private int head;
    private int size;

    /** Worker only: how long the handler {@link #next} returned last waited. */
    private long lastWaitedNanos;
    private long deferredCount;
    private volatile long deferred;
    private volatile long worstDelayNanos;
    /** The whole second of the worker's clock ({@code floorDiv(now, 1 s)}) that {@link #paidThisSecond} counts. */
    private long second = Long.MIN_VALUE;
    private long paidThisSecond;
    private volatile long busiestSecond;

    ActionBudget(int perSecond) {
        this.perSecond = perSecond;
        this.capacity = Math.max(1, perSecond / BURST_DIVISOR) * SECOND;
    }

    /** Worker: adds the tokens earned since the last call, up to the bucket's capacity. */
    void refill(long now) {
        if (!started) {
            started = true;
            refilledAt = now;
            units = capacity;
            return;
        }
        long elapsed = now - refilledAt;
        if (elapsed <= 0) {
            return;
        }
        refilledAt = now;
        // A second refills the bucket (it holds a hundredth of one); below that, elapsed * perSecond
        // cannot overflow (perSecond is at most MAX_RATE).
        long earned = elapsed >= SECOND ? capacity : elapsed * perSecond;
        units = Math.min(capacity, units + earned);
    }

    /** Worker: takes a token at {@code now} if one is there and nobody older waits. */
    boolean tryTake(long now) {
        if (size == 0 && units >= SECOND) {
            units -= SECOND;
            paid(now);
            return true;
        }
        return false;
    }

    /** Worker: counts a hand-off paid for at {@code now} in its whole second of the worker's clock. */
    private void paid(long now) {
        long s = Math.floorDiv(now, SECOND);
        if (s != second) {
            second = s;
            paidThisSecond = 0;
        }
        if (++paidThisSecond > busiestSecond) {
            busiestSecond = paidThisSecond; // published for readers; the worker is the only writer
        }
    }

    /** Worker: {@code h} waits for a token from {@code now}. */
    void defer(HeartbeatHandler h, long now) {
        if (size == handlers.length) {
            grow();
        }
        int tail = (head + size) & (handlers.length - 1);
        handlers[tail] = h;
        since[tail] = now;
        size++;
        deferredCount++;
        deferred = deferredCount; // published for readers on other threads; the worker is the only writer
    }

    /** Worker: whether hand-offs wait. */
    boolean hasWaiting() {
        return size > 0;
    }

    /**
     * Worker: the oldest waiting handler if a token pays for it now (taken), else null.
     */
    HeartbeatHandler next(long now) {
        if (size == 0 || units < SECOND) {
            return null;
        }
        units -= SECOND;
        paid(now);
        HeartbeatHandler h = handlers[head];
        long waited = now - since[head];
        handlers[head] = null;
        head = (head + 1) & (handlers.length - 1);
        size--;
        lastWaitedNanos = waited;
        if (waited > worstDelayNanos) {
            worstDelayNanos = waited;
        }
        return h;
    }

    /** Worker: how long the handler {@link #next} returned last waited for its token. */
    long lastWaitedNanos() {
        return lastWaitedNanos;
    }

    /** Worker: how long until the bucket pays for one more hand-off. */
    long nanosToNextToken() {
        long missing = SECOND - units;
        return missing <= 0 ? 0 : (missing + perSecond - 1) / perSecond;
    }

    /**
     * The most hand-offs paid for in one whole second of the worker's clock; any thread. At most the
     * rate plus the bucket's capacity: a second's refill and a full bucket.
     */
    long busiestSecond() {
        return busiestSecond;
    }

    /** Hand-offs that waited for the budget; any thread. */
    long deferred() {
        return deferred;
    }

    /** The longest a hand-off waited for the budget; any thread. */
    long worstDelayNanos() {
        return worstDelayNanos;
    }

    /** Worker: the hand-offs waiting now. */
    int waiting() {
        return size;
    }

    private void grow() {
        int n = handlers.length;
        HeartbeatHandler[] h = new HeartbeatHandler[n * 2];
        long[] s = new long[n * 2];
        for (int i = 0; i < size; i++) {
            h[i] = handlers[(head + i) & (n - 1)];
            s[i] = since[(head + i) & (n - 1)];
        }
        handlers = h;
        since = s;
        head = 0;
    }
}
