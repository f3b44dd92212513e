/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * jcstress tests of a handler's configuration sequence lock: the event loop's
 * {@link HeartbeatHandler#reconfigure} (odd serial, config release, even serial; the handler is in
 * no pipeline, so nothing else happens) against the worker's {@link HeartbeatHandler#configToJudge}.
 * Real code on both sides. The serial the worker judged under is not readable directly: the worker
 * actor offers an action after a successful read, and the arbiter reads the serial's tag back from
 * the action word ({@code serial >>> 1}, read back with {@code HeartbeatHandler.tagOfWord}). Results:
 * the config the worker got (0: none, the change was in progress; 1: A; 2: B) and the tag of its
 * verdict (-1: no verdict).
 *
 * <p>Run: {@code java -jar load-test/target/jcstress.jar -t ConfigSeqlockStress}.
 */
public final class ConfigSeqlockStress {

    private ConfigSeqlockStress() {
    }

    static int code(HeartbeatConfig cfg) {
        return cfg == null ? 0 : cfg == Fixture.CONFIG_A ? 1 : cfg == Fixture.CONFIG_B ? 2 : 9;
    }

    static void judge(HeartbeatHandler h, II_Result r) {
        BoundConfig bound = h.configToJudge();
        HeartbeatConfig cfg = bound == null ? null : bound.config;
        r.r1 = code(cfg);
        if (cfg != null) {
            h.offerActions(IdlePolicy.READER);
        }
    }

    static int verdictTag(HeartbeatHandler h) {
        int word = h.takeActions();
        return word == 0 ? -1 : HeartbeatHandler.tagOfWord(word);
    }

    /** One reconfiguration, A (serial 0) to B (serial 2). */
    @JCStressTest
    @Description("reconfigure(B) on the event loop vs configToJudge() on the worker")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "Before the change: A with serial 0.")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "After the change: B with serial 2.")
    @Outcome(id = "0, -1", expect = ACCEPTABLE, desc = "During the change (odd or moving serial): nothing judged.")
    @Outcome(expect = FORBIDDEN, desc = "A (config, serial) pair that never existed together: A with 2, B with 0.")
    @State
    public static class Once {
        final HeartbeatHandler h = Fixture.handler();

        @Actor
        public void eventLoop() {
            h.reconfigure(Fixture.CONFIG_B);
        }

        @Actor
        public void worker(II_Result r) {
            judge(h, r);
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r2 = verdictTag(h);
        }
    }

    /** Two reconfigurations, A to B to A (serials 0, 2, 4): the config alone cannot tell 0 from 4. */
    @JCStressTest
    @Description("reconfigure(B), reconfigure(A) on the event loop vs configToJudge() on the worker")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "Before both changes: A with serial 0.")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "Between the changes: B with serial 2.")
    @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "After both changes: A with serial 4.")
    @Outcome(id = "0, -1", expect = ACCEPTABLE, desc = "During a change: nothing judged.")
    @Outcome(expect = FORBIDDEN, desc = "A (config, serial) pair that never existed together.")
    @State
    public static class Twice {
        final HeartbeatHandler h = Fixture.handler();

        @Actor
        public void eventLoop() {
            h.reconfigure(Fixture.CONFIG_B);
            h.reconfigure(Fixture.CONFIG_A);
        }

        @Actor
        public void worker(II_Result r) {
            judge(h, r);
        }

        @Arbiter
        public void arbiter(II_Result r) {
            r.r2 = verdictTag(h);
        }
    }
}
