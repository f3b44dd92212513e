/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

/**
 * The layout of the hand-off word, in one place: which bits each {@link Rule} hands from the
 * worker to the event loop, and the engine's own above them. A rule owns its bits and no other
 * rule reads them; {@code RuleContractTest} checks that the rules' bits are disjoint.
 *
 * <pre>
 *  0-15  the main policy's ({@link HandlerPolicy}: events, close when idle, ping)
 *  16    {@link #AGE}          max age: the age is reached, or a goodbye's next step or its grace is due
 *  17    {@link #STALL}        write stall: bytes pending, look for a stall
 *  18    {@link #UNWRITABLE}   the channel has been unwritable for its maximum
 *  19    {@link #DRAIN}        the channel's drain slot came (terminal: survives a reconfiguration)
 *  20    {@link #RECHECK}      the close sequence: a close the veto held is due for its re-check
 *  21    {@link #OVERLOAD}     an idle channel under a reduced (overload) timeout
 *  22    ON_WIRE              the ping policy's flag, kept by the hand-off (see HeartbeatHandler)
 *  23-31 the configuration tag the bits were judged under
 * </pre>
 */
public final class ActionBits {

    /** The main policy's bits. */
    public static final int POLICY = 0xFFFF;
    /** {@link MaxAgeRule}. */
    static final int AGE = 1 << 16;
    /** {@link WriteStallRule}. */
    static final int STALL = 1 << 17;
    /** {@link UnwritableRule}. */
    static final int UNWRITABLE = 1 << 18;
    /** {@link DrainRule}. */
    static final int DRAIN = 1 << 19;
    /** {@link CloseSequence}: the held closes are due for their re-check. */
    public static final int RECHECK = 1 << 20;
    /** {@link OverloadRule}. */
    static final int OVERLOAD = 1 << 21;

    private ActionBits() {
    }
}
