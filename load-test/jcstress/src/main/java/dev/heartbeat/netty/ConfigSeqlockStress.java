/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.BoundConfig;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import dev.heartbeat.netty.engine.IdlePolicy;
import dev.heartbeat.netty.engine.Plan;
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
 * {@link HeartbeatHandler#reconfigure} (CHANGING set, config release, serial advanced; the handler is
 * in no pipeline, so nothing else happens) against the worker's {@link HeartbeatHandler#serialToJudge}
 * and {@link HeartbeatHandler#configToJudge}. Real code on both sides. The worker actor offers an
 * action tagged with the serial it judged under after a successful read, and the arbiter reads the
 * tag back from the action word (the number of changes, read back with
 * {@code HeartbeatHandler.tagOfWord}). Results:
 * the config the worker got (0: none, the change was in progress; 1: A; 2: B) and the tag of its
 * verdict (-1: no verdict).
 *
 * <p>Run: {@code java -jar load-test/target/jcstress.jar -t ConfigSeqlockStress}.
 */
public final class ConfigSeqlockStress {

    private ConfigSeqlockStress() {
    }

    static int code(Plan cfg) {
        return cfg == null ? 0 : cfg == Fixture.CONFIG_A ? 1 : cfg == Fixture.CONFIG_B ? 2 : 9;
    }

    static void judge(HeartbeatHandler h, II_Result r) {
        int serial = h.serialToJudge();
        BoundConfig bound = h.configToJudge(serial);
        Plan cfg = bound == null ? null : bound.config;
        r.r1 = code(cfg);
        if (cfg != null) {
            h.offerActions(IdlePolicy.READER, serial);
        }
    }

    static int verdictTag(HeartbeatHandler h) {
        int word = h.takeActions();
        return word == 0 ? -1 : HeartbeatHandler.tagOfWord(word);
    }

    /** One reconfiguration, A (serial 0, tag 0) to B (one change, tag 1). */
    @JCStressTest
    @Description("reconfigure(B) on the event loop vs configToJudge() on the worker")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "Before the change: A with tag 0.")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "After the change: B with tag 1.")
    @Outcome(id = "0, -1", expect = ACCEPTABLE, desc = "During the change (CHANGING or moved): nothing judged.")
    @Outcome(expect = FORBIDDEN, desc = "A (config, serial) pair that never existed together: A with tag 1, B with 0.")
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

    /** Two reconfigurations, A to B to A (tags 0, 1, 2): the config alone cannot tell the first A from the last. */
    @JCStressTest
    @Description("reconfigure(B), reconfigure(A) on the event loop vs configToJudge() on the worker")
    @Outcome(id = "1, 0", expect = ACCEPTABLE, desc = "Before both changes: A with tag 0.")
    @Outcome(id = "2, 1", expect = ACCEPTABLE, desc = "Between the changes: B with tag 1.")
    @Outcome(id = "1, 2", expect = ACCEPTABLE, desc = "After both changes: A with tag 2.")
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
