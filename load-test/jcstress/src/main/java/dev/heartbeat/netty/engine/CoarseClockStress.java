/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import java.util.concurrent.atomic.AtomicLong;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress test of the coarse write clock's late publication ({@link CoarseClock}), real code on both sides, on a
 * shared ticker that stands for real time. The clock's lease is 100 (resolution 100 from time 0). The worker lets
 * time pass to 300, beyond the lease, and only then publishes the next (a late worker: it records the old lease's
 * late interval). An event loop completes a write at the time it reads, stamps it, and bounds the stamp at once (as
 * a loop that checks a verdict again does); the arbiter bounds it again once both are done (as a later check
 * does). Results: whether each bound is no earlier than the write (1) or earlier (0).
 *
 * <p>The window this guards: the worker has stored the new lease and not yet recorded the old one's interval. A
 * stamp of the old lease bounded then, by the new lease and the intervals recorded so far, would be judged as
 * itself, 200 before its write; the clock's floor keeps it judged by a ticker reading until the interval is
 * recorded.
 *
 * <p>In the package of {@code CoarseClock} (package-private): the jcstress jar runs on the class path.
 * Run: {@code java -jar load-test/target/jcstress.jar -t CoarseClockStress}.
 */
@JCStressTest
@Description("a late lease publication (worker) vs a write stamped and bounded at once (event loop)")
@Outcome(id = "1, 1", expect = ACCEPTABLE, desc = "Both bounds are no earlier than the write.")
@Outcome(expect = FORBIDDEN, desc = "A bound earlier than the write it stands for: a check could come early.")
@State
public class CoarseClockStress {

    private final AtomicLong time = new AtomicLong();
    private final CoarseClock clock = new CoarseClock(time::get, 100);
    private long written;
    private long stamp;

    @Actor
    public void worker() {
        time.set(300);
        clock.refreshIfDue(300);
    }

    @Actor
    public void eventLoop(II_Result r) {
        long t = time.get();
        long s = clock.stamp(0);
        written = t;
        stamp = s;
        r.r1 = clock.bound(s) - t >= 0 ? 1 : 0;
    }

    @Arbiter
    public void arbiter(II_Result r) {
        r.r2 = clock.bound(stamp) - written >= 0 ? 1 : 0;
    }
}
