/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.HeartbeatHandler;
import dev.heartbeat.netty.engine.IdlePolicy;
import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.III_Result;

/**
 * jcstress tests of a handler's action hand-off word (config tag in the top 9 bits, the ping's
 * on-the-wire flag and the action bits below): the worker's {@link HeartbeatHandler#offerActions}
 * against the event loop's {@link HeartbeatHandler#takeActions}, real code on a handler outside a
 * pipeline. Results: the word
 * the worker's offer replaced (0: it would push the handler), the word the event loop took, and the
 * word the arbiter finds left. READER is 1, WRITER is 4; the tag before any change is 0, after one
 * change 1 (1 &lt;&lt; 23 = 8388608).
 *
 * <p>Run: {@code java -jar load-test/target/jcstress.jar -t ActionWordStress}.
 */
public final class ActionWordStress {

    private ActionWordStress() {
    }

    /** Same configuration: bits merge. */
    @JCStressTest
    @Description("offerActions(WRITER) over a pending READER, same tag, vs takeActions()")
    @Outcome(id = "0, 1, 4", expect = ACCEPTABLE,
            desc = "The event loop took READER first; WRITER landed in an empty word (the worker pushes again).")
    @Outcome(id = "1, 5, 0", expect = ACCEPTABLE,
            desc = "WRITER merged into the pending word (no push); the event loop took both at once.")
    @Outcome(expect = FORBIDDEN, desc = "An action lost or taken twice.")
    @State
    public static class SameTag {
        final HeartbeatHandler h = Fixture.handler();

        public SameTag() {
            h.offerActions(IdlePolicy.READER, h.serialToJudge()); // judged before any change: tag 0
        }

        @Actor
        public void worker(III_Result r) {
            r.r1 = h.offerActions(IdlePolicy.WRITER, h.serialToJudge());
        }

        @Actor
        public void eventLoop(III_Result r) {
            r.r2 = h.takeActions();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r3 = h.takeActions();
        }
    }

    /** A reconfiguration between two verdicts: the new verdict replaces the old one, never merges. */
    @JCStressTest
    @Description("offerActions(WRITER) under tag 1 over a pending READER of tag 0, vs takeActions()")
    @Outcome(id = "0, 1, 8388612", expect = ACCEPTABLE,
            desc = "The event loop took the old READER (its tag is stale: perform drops it); WRITER then "
                    + "landed alone with the new tag.")
    @Outcome(id = "1, 8388612, 0", expect = ACCEPTABLE,
            desc = "WRITER replaced the stale READER (no push: the handler is still in the stack); the event loop "
                    + "took only the new verdict.")
    @Outcome(id = ".*, 8388613, .*", expect = FORBIDDEN,
            desc = "Mixed: the old configuration's READER carried under the new tag.")
    @Outcome(expect = FORBIDDEN, desc = "The new verdict lost or taken twice, or a mixed word.")
    @State
    public static class TagChange {
        final HeartbeatHandler h = Fixture.handler();

        public TagChange() {
            h.offerActions(IdlePolicy.READER, h.serialToJudge()); // judged before any change: tag 0
            h.reconfigure(Fixture.CONFIG_B); // one change: tag 1
        }

        @Actor
        public void worker(III_Result r) {
            r.r1 = h.offerActions(IdlePolicy.WRITER, h.serialToJudge()); // judged after the change: tag 1
        }

        @Actor
        public void eventLoop(III_Result r) {
            r.r2 = h.takeActions();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r3 = h.takeActions();
        }
    }

    /**
     * The ping's on-the-wire flag shares the word: the event loop sets it as it writes a ping, while
     * the worker offers a verdict and the event loop takes one; neither hand-off may clear or carry it.
     */
    @JCStressTest
    @Description("pingWrote() and takeActions() on the event loop vs offerActions(WRITER) on the worker")
    @Outcome(id = "0, 1, 4", expect = ACCEPTABLE,
            desc = "The event loop took READER first; WRITER then landed in an empty word.")
    @Outcome(id = "1, 5, 0", expect = ACCEPTABLE, desc = "WRITER merged into the pending word; taken at once.")
    @Outcome(expect = FORBIDDEN, desc = "The flag lost or leaked into a verdict, or an action lost or taken twice.")
    @State
    public static class OnWire {
        final HeartbeatHandler h = Fixture.handler();

        public OnWire() {
            h.offerActions(IdlePolicy.READER, h.serialToJudge());
        }

        @Actor
        public void worker(III_Result r) {
            r.r1 = h.offerActions(IdlePolicy.WRITER, h.serialToJudge());
        }

        @Actor
        public void eventLoop(III_Result r) {
            h.pingWrote(1);
            r.r2 = h.takeActions();
        }

        @Arbiter
        public void arbiter(III_Result r) {
            r.r3 = h.pingOnWire() ? h.takeActions() : -1; // the flag stays; only verdicts are taken
        }
    }
}
