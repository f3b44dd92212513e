/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.HeartbeatHandler;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress test of the activity stamps: the event loop stamps a read twice with the real
 * {@link HeartbeatHandler#resetReadTimeout} (an opaque store of the ticker), while the worker reads
 * the stamp twice as its judgement does (an opaque load of the same field, through a private
 * lookup: the judgement's reads sit inside private methods that need a full verdict around them).
 * The stamps cross the 32-bit boundary, so a torn read shows as a value never written. Results: the
 * worker's two reads as codes, 0 for {@link #S0}, 1 for {@link #S1}, 2 for {@link #S2}, 9 for any
 * other value.
 *
 * <p>The complementary property, that the event loop's own re-check sees its latest stamp, is
 * program order on one thread and needs no test here.
 *
 * <p>Run: {@code java -jar load-test/target/jcstress.jar -t StampStress}.
 */
@JCStressTest
@Description("two read stamps (opaque stores, event loop) vs two opaque loads of the stamp (worker)")
@Outcome(id = "0, 0", expect = ACCEPTABLE, desc = "Both reads before the new stamps.")
@Outcome(id = "0, 1", expect = ACCEPTABLE, desc = "Saw the first new stamp on the second read.")
@Outcome(id = "0, 2", expect = ACCEPTABLE, desc = "Saw the second new stamp on the second read.")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "Both reads between the stamps.")
@Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "One read between, one after.")
@Outcome(id = "2, 2", expect = ACCEPTABLE, desc = "Both reads after the stamps.")
@Outcome(id = "9, .*", expect = FORBIDDEN, desc = "A stamp that was never written (torn).")
@Outcome(id = ".*, 9", expect = FORBIDDEN, desc = "A stamp that was never written (torn).")
@Outcome(expect = FORBIDDEN, desc = "The stamp went backwards between the worker's two reads.")
@State
public class StampStress {

    /** The stamp before the test: the last nanosecond below 2^32. */
    static final long S0 = 0xFFFF_FFFFL;
    /** The first new stamp, one nanosecond later: the upper half changes. */
    static final long S1 = 0x1_0000_0000L;
    /** The second new stamp: both halves differ from {@link #S0}'s. */
    static final long S2 = 0x1_0000_0001L;

    private static final VarHandle LAST_READ;

    static {
        try {
            LAST_READ = MethodHandles.privateLookupIn(HeartbeatHandler.class, MethodHandles.lookup())
                    .findVarHandle(HeartbeatHandler.class, "lastRead", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final HeartbeatHandler h = Fixture.handler();

    public StampStress() {
        Fixture.setNow(S0);
        h.resetReadTimeout();
    }

    static int code(long stamp) {
        return stamp == S0 ? 0 : stamp == S1 ? 1 : stamp == S2 ? 2 : 9;
    }

    @Actor
    public void eventLoop() {
        Fixture.setNow(S1);
        h.resetReadTimeout();
        Fixture.setNow(S2);
        h.resetReadTimeout();
    }

    @Actor
    public void worker(II_Result r) {
        long first = (long) LAST_READ.getOpaque(h);
        long second = (long) LAST_READ.getOpaque(h);
        r.r1 = code(first);
        r.r2 = code(second);
    }
}
