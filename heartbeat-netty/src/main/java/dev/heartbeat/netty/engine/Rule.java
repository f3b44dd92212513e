/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import io.netty.channel.ChannelHandlerContext;

/**
 * Everything that can decide about a channel, behind one contract: given the channel's state and
 * now, a rule says what it wants done (its action bits, see {@link ActionBits}) and when it next
 * needs to look ({@link HeartbeatHandler#lookAt}); on the channel's event loop it checks again from
 * the current state and acts. A configuration compiles once into the ordered list of the rules it
 * uses ({@link HeartbeatConfig#rules()}); the handler runs that list and knows no rule by name.
 *
 * <p>The rules: the main policy ({@link EventPolicy}, {@link ClosePolicy}, {@link PingPolicy}), and
 * {@link DrainRule}, {@link UnwritableRule}, {@link WriteStallRule}, {@link MaxAgeRule},
 * {@link OverloadRule}. Every close a rule makes goes through the {@link CloseSequence}.
 *
 * <p>The promises the engine keeps for every rule, whatever the others do:
 * <ul>
 * <li>the entry's next look is the earliest any rule of its configuration asked for in the
 *     judgement (the engine starts from the longest timeout and takes the minimum): no rule can push
 *     another's look away;</li>
 * <li>a rule's bits reach only its own {@link #perform}, and only under the configuration they were
 *     judged under (the stale-verdict filter), except {@link ActionBits#DRAIN}, which is terminal;</li>
 * <li>a rule is performed only while the handler may still act (active, open, the same configuration);
 *     an earlier rule of the list may have closed the channel.</li>
 * </ul>
 *
 * <p>Stateless: one instance per rule (or per configuration's settings), shared by every channel;
 * per-channel state lives in the handler's fields and in side objects made only for configurations
 * that use them. Threads: {@link #judge} on the monitor's worker, {@link #firstLook} and
 * {@link #perform} on the handler's executor.
 */
public abstract class Rule {

    /** The action bits this rule's judgements return: its own, disjoint from every other rule's. */
    public abstract int bits();

    /**
     * Whether this rule rests once the channel's goodbye ended the conversation (a goodbye after
     * which the peer answers nothing, see {@link Probe#goodbyeEndsConversation}): then it neither
     * judges nor acts. The idle policies do; the lifecycle rules do not.
     */
    boolean restsAfterLastWord() {
        return false;
    }

    /**
     * Event loop, when the handler starts or switches to {@code cfg} with its stamps set to
     * {@code now}: the earliest this rule needs its first look, given the state it carries over (an
     * age, an unwritable spell), or {@code first} if it needs none sooner.
     */
    long firstLook(HeartbeatHandler h, Plan cfg, long first, long now) {
        return first;
    }

    /**
     * Worker: what is due at {@code now} under {@code bound}, from the state the event loop published;
     * asks for the rule's next look with {@link HeartbeatHandler#lookAt} on every path.
     *
     * @return this rule's action bits for {@link #perform}, 0 for none
     */
    abstract int judge(HeartbeatHandler h, BoundConfig bound, long now);

    /**
     * Event loop: carries out {@code bits} (this rule's, judged under {@code cfg}), checking again from
     * the event loop's current view first: the worker judged from older state. Every close goes
     * through the {@link CloseSequence}.
     */
    abstract void perform(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, int bits, long now);

    /**
     * Event loop, on the read path (only of configurations whose {@link BoundConfig#inspectsReads}):
     * whether {@code msg} was this rule's own (an answer to something it sent) and is consumed here.
     */
    boolean onInbound(HeartbeatHandler h, ChannelHandlerContext ctx, Plan cfg, Object msg) {
        return false;
    }

    static long latest(long a, long b) {
        return a - b >= 0 ? a : b;
    }

    static long earliest(long a, long b) {
        return a - b <= 0 ? a : b;
    }
}
