/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import dev.heartbeat.netty.HeartbeatConfig;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;

/**
 * The main policy, the last of a configuration's {@link Rule}s: what it decides when a channel's
 * entry comes due, and what it then does on the channel's event loop. One stateless instance per
 * policy, held by every {@link Plan} of that policy; the per-channel state is the
 * handler's, read and written through its named accessors (and, for the state only some policies
 * need, its side object). Adding a policy is adding a subclass; the handler and the monitor never
 * ask which policy they run.
 *
 * <p>Threads: {@link #start} and {@link #judge} run on the monitor's worker, {@link #perform} and
 * {@link #sideFor} on the channel's event loop, the rest on any thread (they read only the
 * configuration).
 */
public abstract class HandlerPolicy extends Rule {

    /* Implementation notes: why judge returns the verdict and re-arms through the handler.
     *
     * A judgement has two results: the action bits for the event loop and the time of the next
     * check. The bits are returned (an int), and the next look is asked for through
     * HeartbeatHandler.lookAt, which keeps the earliest of every rule's in the worker's scratch (the
     * engine resets it before the rules judge, so no rule has to remember to clear it). A deadline
     * kept in a handler field would grow every handler by 8 bytes, and a result object would
     * allocate at every check. Every path through a judge ends in `return verdict(h, next, bits)`,
     * which does both.
     */

    /** The public name of this policy. */
    public abstract HeartbeatConfig.Policy kind();

    /** Whether reads matter to {@code cfg}: the read path stamps only then. */
    abstract boolean tracksReads(Plan cfg);

    /** Whether writes matter to {@code cfg}: the write path listens only then. */
    abstract boolean tracksWrites(Plan cfg);

    /** Appends this policy's settings of {@code cfg} to its {@code toString}. */
    public abstract void describe(Plan cfg, StringBuilder s);

    /**
     * Event loop, when the handler starts or is reconfigured to {@code cfg}: the side object the
     * handler keeps (see {@code HeartbeatHandler.side}): {@code current} if it serves, or a new one.
     * The handler stores it before it publishes {@code cfg} to the worker.
     *
     * @param current the side object the handler has, or null
     * @param channel the handler's channel
     * @param now the ticker time the handler's stamps are about to be set to
     * @param random a test's fixed randomness for what the side object draws, or null (its own draws)
     */
    abstract Object sideFor(Plan cfg, Object current, Channel channel, long now, Randomness random);

    /**
     * Worker, at the first expiry under a new configuration: starts judging {@code cfg} as of
     * {@code start}, the ticker time the handler's stamps were set at (the handler has cleared its
     * judgement word).
     */
    abstract void start(HeartbeatHandler h, Plan cfg, long start);

    /**
     * Worker: decides, from the handler's stamps, what is due at {@code now} under {@code bound} (the
     * configuration the handler is judged under, bound to its monitor), and re-arms the entry (ending
     * with {@link #verdict}).
     *
     * @return the action bits for {@link #perform} (at most the low 16 bits), 0 for none
     */
    @Override
    abstract int judge(HeartbeatHandler h, BoundConfig bound, long now);

    /**
     * Event loop: carries out the action {@code bits} that {@link #judge} returned under the same
     * configuration, checking again from the current stamps first (the worker judged from older
     * ones). The handler has checked that it is active and the channel open.
     */
    @Override
    abstract void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now);

    /**
     * The action bits of this policy that may wait for their event loop's next wake-up, up to a
     * coalescing window (see {@code HeartbeatMonitor.Builder#lazyHandOffs}): actions whose lateness
     * nothing is timed by. None by default: an idle event or a close is timed by its deadline.
     */
    int deferrableBits() {
        return 0;
    }

    /**
     * Worker, as a word that waited for the action budget is handed over: the bits of this policy in it that the
     * channel's traffic since has made void (none by default). The event loop checks each action again before it
     * acts, but a wait can outlast a timeout: then the channel may be idle again, in a new spell the worker judges
     * on its own, and the old verdict must not act in it too.
     */
    int outdatedBits(HeartbeatHandler h, Plan cfg) {
        return 0;
    }

    /** Worker: ends a judgement: the next look at {@code next} (or sooner: another rule's); returns {@code bits}. */
    static int verdict(HeartbeatHandler h, long next, int bits) {
        h.lookAt(next);
        return bits;
    }

    /** The main policy's bits are the low 16 of the hand-off word. */
    @Override
    public final int bits() {
        return ActionBits.POLICY;
    }

    /** An idle policy waits for the peer's traffic: it rests once a goodbye ended the conversation. */
    @Override
    final boolean restsAfterLastWord() {
        return true;
    }
}
