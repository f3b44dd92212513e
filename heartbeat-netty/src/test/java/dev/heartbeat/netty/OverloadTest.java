/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import dev.heartbeat.netty.micrometer.HeartbeatMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Overload: idle timeouts of closeWhenIdle channels scaled down at runtime, in virtual time. */
class OverloadTest {

    private final VirtualTime.World world = new VirtualTime.World(3);
    private final HeartbeatMonitor monitor = world.monitor;

    @AfterEach
    void tearDown() {
        world.close();
    }

    private EmbeddedChannel closeAfter10s() {
        return world.channel(monitor.newHandler(HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10))
                .build()), new KeepAliveTest.Recorder());
    }

    @Test
    void aReducedTimeoutClosesTheIdlestFirstNeverBeforeTheScaledTimeout() {
        EmbeddedChannel silent = closeAfter10s();
        EmbeddedChannel talking = closeAfter10s();
        EmbeddedChannel dropIn = world.channel(monitor.newHandler(HeartbeatConfig.events()
                .readerIdle(Duration.ofSeconds(10)).build()), new KeepAliveTest.Recorder());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        new HeartbeatMetrics(monitor).bindTo(registry);
        world.advance(4_000);
        talking.writeInbound("hello"); // its last read: 4 s
        world.advance(2_000);
        monitor.reduceIdleTimeouts(0.5); // at 6 s: idle timeouts of 5 s from now on
        world.advance(2);
        assertFalse(silent.isOpen(), "idle 6 s > 5 s: closed at once");
        assertTrue(talking.isOpen(), "idle 2 s");
        world.advance(2_990);
        assertTrue(talking.isOpen(), "not before 5 s after its read");
        world.advance(12);
        assertFalse(talking.isOpen(), "closed 5 s after its read");
        assertTrue(dropIn.isOpen(), "the drop-in events policy is not scaled");
        assertEquals(2, monitor.overloadCloses());
        assertEquals(2, monitor.stats().closed(CloseReason.READER_IDLE));
        assertEquals(2.0, registry.get("heartbeat.overload.closes").functionCounter().count());
        assertEquals(0.5, registry.get("heartbeat.overload.factor").gauge().value());
    }

    /**
     * A channel judged during an overload that finds traffic is looked at again at its scaled deadline,
     * not its full one. The world's ticker starts near Long.MIN_VALUE: a "no deadline" sentinel of
     * Long.MAX_VALUE, compared by subtraction, read as the past there and the scaled look was dropped
     * (closed at 13 s before, 5 s late).
     */
    @Test
    void aChannelJudgedDuringAnOverloadIsClosedAtItsScaledTimeoutAfterItsLastRead() {
        EmbeddedChannel ch = closeAfter10s();
        world.advance(1_000);
        monitor.reduceIdleTimeouts(0.5); // at 1 s: its look moves to 5 s
        world.advance(2_000);
        ch.writeInbound("hello"); // at 3 s: scaled deadline 8 s, full one 13 s
        world.advance(2_010); // judged at 5 s: traffic since, look again at 8 s
        assertTrue(ch.isOpen(), "read 2 s ago");
        world.advance(2_980);
        assertTrue(ch.isOpen(), "not before 5 s after its read");
        world.advance(40);
        assertFalse(ch.isOpen(), "closed 5 s after its read, at 8 s, not at its full timeout (13 s)");
        assertEquals(1, monitor.overloadCloses());
    }

    @Test
    void endingTheOverloadRestoresTheTimeout() {
        monitor.reduceIdleTimeouts(0.5);
        monitor.reduceIdleTimeouts(1);
        assertEquals(1.0, monitor.idleTimeoutFactor());
        EmbeddedChannel ch = closeAfter10s();
        world.advance(9_990);
        assertTrue(ch.isOpen());
        world.advance(15);
        assertFalse(ch.isOpen());
        assertEquals(0, monitor.overloadCloses());
    }

    @Test
    void badFactorsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> monitor.reduceIdleTimeouts(0));
        assertThrows(IllegalArgumentException.class, () -> monitor.reduceIdleTimeouts(1.5));
        assertThrows(IllegalArgumentException.class, () -> monitor.reduceIdleTimeouts(Double.NaN));
    }
}
