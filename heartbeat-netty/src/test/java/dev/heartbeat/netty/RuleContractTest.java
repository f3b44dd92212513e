/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.ActionBits;
import dev.heartbeat.netty.engine.DrainRule;
import dev.heartbeat.netty.engine.EventPolicy;
import dev.heartbeat.netty.engine.HandlerPolicy;
import dev.heartbeat.netty.engine.MaxAgeRule;
import dev.heartbeat.netty.engine.OverloadRule;
import dev.heartbeat.netty.engine.Rule;
import dev.heartbeat.netty.engine.UnwritableRule;
import dev.heartbeat.netty.engine.WriteStallRule;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The rule contract ({@link Rule}): the hand-off bits of the rules are disjoint and below the
 * handler's own flags, and a configuration compiles into the list its settings call for: the drain
 * first (every channel can be drained), the guards' rules only where a guard is set, the overload's
 * only for close-when-idle, the main policy last and only when it has a timeout.
 */
class RuleContractTest {

    /** The handler's first own bit in the hand-off word (ON_WIRE, then the configuration tag). */
    private static final int FIRST_HANDLER_BIT = 1 << 22;

    private static final List<Rule> ALL = List.of(DrainRule.INSTANCE, UnwritableRule.INSTANCE,
            WriteStallRule.INSTANCE, MaxAgeRule.INSTANCE, OverloadRule.INSTANCE, EventPolicy.INSTANCE,
            HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1)).build().plan.policy,
            HeartbeatConfig.ping(ch -> "PING").interval(Duration.ofSeconds(1)).build().plan.policy);

    @Test
    void theRulesBitsAreDisjointAndBelowTheHandlersFlags() {
        int seen = ActionBits.RECHECK; // the close sequence's own
        for (Rule rule : ALL) {
            int bits = rule.bits();
            if (rule instanceof HandlerPolicy) {
                assertEquals(ActionBits.POLICY, bits, rule + ": a main policy owns the low 16 bits");
                continue;
            }
            assertTrue(bits != 0 && (bits & (bits - 1)) == 0, rule + " has one bit");
            assertEquals(0, bits & seen, rule + " shares a bit with another rule or the close sequence");
            assertEquals(0, bits & ActionBits.POLICY, rule + " takes a main policy's bit");
            assertTrue(Integer.compareUnsigned(bits, FIRST_HANDLER_BIT) < 0, rule + " takes a handler flag's bit");
            seen |= bits;
        }
    }

    @Test
    void aConfigurationCompilesTheRulesItsSettingsCallFor() {
        HeartbeatConfig idle = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10)).build();
        assertEquals(List.of(DrainRule.INSTANCE, OverloadRule.INSTANCE, idle.plan.policy), rules(idle));

        HeartbeatConfig guarded = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10))
                .maxAge(Duration.ofMinutes(1)).writeStall(Duration.ofSeconds(1)).maxUnwritable(Duration.ofSeconds(5))
                .build();
        assertEquals(List.of(DrainRule.INSTANCE, UnwritableRule.INSTANCE, WriteStallRule.INSTANCE,
                MaxAgeRule.INSTANCE, OverloadRule.INSTANCE, guarded.plan.policy), rules(guarded));

        HeartbeatConfig events = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(10)).build();
        assertEquals(List.of(DrainRule.INSTANCE, events.plan.policy), rules(events),
                "the drop-in: not scaled by overload");

        HeartbeatConfig ping = HeartbeatConfig.ping(ch -> "PING").interval(Duration.ofSeconds(10))
                .writeStall(Duration.ofSeconds(1)).build();
        assertEquals(List.of(DrainRule.INSTANCE, WriteStallRule.INSTANCE, MaxAgeRule.INSTANCE, ping.plan.policy),
                rules(ping), "max age's rule is there with any guard state: an announced grace outlives a switch");

        HeartbeatConfig ageOnly = HeartbeatConfig.closeWhenIdle().maxAge(Duration.ofMinutes(1)).build();
        assertEquals(List.of(DrainRule.INSTANCE, MaxAgeRule.INSTANCE, OverloadRule.INSTANCE), rules(ageOnly),
                "no timeout: no main policy to judge");
        for (HeartbeatConfig cfg : List.of(idle, guarded, events, ping, ageOnly)) {
            assertSame(DrainRule.INSTANCE, cfg.plan.rules()[0], "the drain comes first: it is terminal");
        }
    }

    private static List<Rule> rules(HeartbeatConfig cfg) {
        return Arrays.asList(cfg.plan.rules());
    }
}
