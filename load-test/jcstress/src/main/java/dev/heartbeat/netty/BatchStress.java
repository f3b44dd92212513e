/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.EventLoopBatch;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import dev.heartbeat.netty.engine.IdlePolicy;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.netty.util.concurrent.EventExecutor;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.IIII_Result;

/**
 * jcstress test of {@link EventLoopBatch}: the worker's cycle (offer actions, push the handlers
 * whose word was empty, submit) against the event loop running the batch submitted in an earlier
 * cycle. All real code; the event loop and the handlers' contexts are counting stubs
 * ({@link Fixture.Stub}), and {@link HeartbeatHandler#perform} ends at once for a handler outside a
 * pipeline, after one {@code ctx.executor()} call, which is what counts a perform.
 *
 * <p>Before the actors: handler 1 has READER pending, is in the queue and the batch is submitted.
 * The worker then offers WRITER to handler 1 and READER to handler 2; the arbiter runs the batch
 * once more if the worker submitted it, as the event loop would. Results: performs of handler 1,
 * performs of handler 2, submissions by the worker, and leftovers (bit 0/1: handler 1/2 still has
 * actions; bits 2/3: unused since the batch is a queue, not a stack of linked handlers; bit 4: the
 * batch is not idle, a handler is left in its queue or it is still submitted).
 *
 * <p>Run: {@code java -jar load-test/target/jcstress.jar -t BatchStress}.
 */
@JCStressTest
@Description("EventLoopBatch: worker offerActions + push + submitIfNeeded vs the event loop's run()")
@Outcome(id = "1, 1, 0, 0", expect = ACCEPTABLE,
        desc = "The worker's cycle came first: WRITER merged into handler 1's pending word, handler 2 pushed "
                + "while the batch was still submitted; one run performed both.")
@Outcome(id = "1, 1, 1, 0", expect = ACCEPTABLE,
        desc = "Handler 2 was pushed after run cleared 'submitted': the worker submitted again; the queue was "
                + "taken by the first run or the second (then the other run found it empty).")
@Outcome(id = "2, 1, 1, 0", expect = ACCEPTABLE,
        desc = "The run took handler 1's READER first; WRITER re-pushed it (it had left the queue), submitted; "
                + "the next run performed it and handler 2.")
@Outcome(id = "2, 1, 0, .*", expect = FORBIDDEN,
        desc = "Lost action: a handler was pushed after the run took the queue, and nobody submitted the batch.")
@Outcome(expect = FORBIDDEN,
        desc = "An action lost or performed twice, a handler in the queue twice, "
                + "or pending actions or handlers left behind.")
@State
public class BatchStress {

    private final Fixture.Stub loop = Fixture.Stub.eventLoop();
    private final EventLoopBatch batch;
    private final HeartbeatHandler h1 = Fixture.handler();
    private final HeartbeatHandler h2 = Fixture.handler();
    private final Fixture.Stub ctx1;
    private final Fixture.Stub ctx2;

    public BatchStress() {
        EventExecutor executor = loop.asExecutor();
        batch = new EventLoopBatch(executor, Fixture.MONITOR.engine);
        ctx1 = Fixture.Stub.context(executor);
        ctx2 = Fixture.Stub.context(executor);
        h1.ctx = ctx1.asContext();
        h2.ctx = ctx2.asContext();
        offer(h1, IdlePolicy.READER);
        batch.submitIfNeeded(false, 0, 0);
        loop.executes = 0; // that submission is the run of the event-loop actor
    }

    private void offer(HeartbeatHandler h, int bits) {
        if (h.offerActions(bits, h.serialToJudge()) == 0) {
            batch.push(h);
        }
    }

    @Actor
    public void worker() {
        offer(h1, IdlePolicy.WRITER);
        offer(h2, IdlePolicy.READER);
        batch.submitIfNeeded(false, 0, 0);
    }

    @Actor
    public void eventLoop() {
        batch.run();
    }

    @Arbiter
    public void arbiter(IIII_Result r) {
        int submissions = loop.executes;
        if (submissions > 0) {
            batch.run();
        }
        r.r1 = ctx1.executorCalls;
        r.r2 = ctx2.executorCalls;
        r.r3 = submissions;
        r.r4 = (h1.takeActions() != 0 ? 1 : 0) | (h2.takeActions() != 0 ? 2 : 0)
                | (batch.isIdle() ? 0 : 16);
    }

    /**
     * A lazy hand-off woken by an urgent one: handler 1's READER was queued lazily in cycle 1 (no
     * wake-up); in cycle 2 the worker offers handler 2 an action that must not wait and submits,
     * while the event loop runs the lazily queued batch (it woke for I/O). The worker either turns
     * the lazy hand-off into a woken one (a no-op task that wakes the loop, which then runs both) or,
     * if the run had started, submits the batch again; the arbiter runs that second submission as the
     * loop would. Results: performs of handler 1, of handler 2, the worker's {@code execute} calls,
     * and leftovers (as above). Every interleaving must end with both performed once and nothing left,
     * after one wake-up, or none if the lazy run took handler 2 before the worker looked.
     */
    @JCStressTest
    @Description("EventLoopBatch: a lazily queued batch escalated by an urgent hand-off vs its run")
    @Outcome(id = "1, 1, 1, 0", expect = ACCEPTABLE,
            desc = "Both performed once; the loop was woken once (a wake-up task, or the batch again).")
    @Outcome(id = "1, 1, 0, 0", expect = ACCEPTABLE,
            desc = "The lazy run took handler 2 as well, before the worker submitted: nothing left to wake for.")
    @Outcome(id = "1, 0, .*", expect = FORBIDDEN,
            desc = "Lost action: handler 2 was pushed and nobody ran the batch after.")
    @Outcome(expect = FORBIDDEN,
            desc = "An action lost or performed twice, no wake-up or two, or the batch left busy.")
    @State
    public static class Lazy {
        private final Fixture.LazyLoop loop = new Fixture.LazyLoop();
        private final EventLoopBatch batch = new EventLoopBatch(loop, Fixture.MONITOR.engine);
        private final HeartbeatHandler h1 = Fixture.handler();
        private final HeartbeatHandler h2 = Fixture.handler();
        private final Fixture.Stub ctx1 = Fixture.Stub.context(loop);
        private final Fixture.Stub ctx2 = Fixture.Stub.context(loop);

        public Lazy() {
            h1.ctx = ctx1.asContext();
            h2.ctx = ctx2.asContext();
            if (h1.offerActions(IdlePolicy.READER, h1.serialToJudge()) == 0) {
                batch.push(h1);
            }
            if (batch.submitIfNeeded(true, 0, 100) != EventLoopBatch.WAITING || loop.lazyExecutes != 1) {
                throw new IllegalStateException("not queued lazily");
            }
        }

        @Actor
        public void worker() {
            if (h2.offerActions(IdlePolicy.READER, h2.serialToJudge()) == 0) {
                batch.push(h2);
            }
            batch.mustNotWait();
            batch.submitIfNeeded(true, 1, 101);
        }

        @Actor
        public void eventLoop() {
            batch.run();
        }

        @Arbiter
        public void arbiter(IIII_Result r) {
            if (loop.executed != null) {
                loop.executed.run(); // the wake-up (a no-op: the actor's run was the lazy task) or the batch
            }
            r.r1 = ctx1.executorCalls;
            r.r2 = ctx2.executorCalls;
            r.r3 = loop.executes;
            r.r4 = (h1.takeActions() != 0 ? 1 : 0) | (h2.takeActions() != 0 ? 2 : 0)
                    | (batch.isIdle() ? 0 : 16);
        }
    }
}
