/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.MonitorEngine;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * A monitor runs, or says loudly that it does not: a handler activated on a monitor that was neither
 * started nor built {@code manual()} is counted and warned about (once per monitor); a manual monitor
 * is driven by {@code runOnce()} only; a {@code hostWatchdog} without a host is refused.
 */
class MonitorLifecycleTest {

    private static final HeartbeatConfig IDLE = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1))
            .build();

    @Test
    void aHandlerActivatedOnANeverStartedMonitorIsCountedAndWarnedOnce() {
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().ticker(new ManualTicker(0)).build();
        EmbeddedChannel a = new EmbeddedChannel(monitor.newHandler(IDLE));
        EmbeddedChannel b = new EmbeddedChannel(monitor.newHandler(IDLE));
        try {
            assertEquals(2, monitor.stats().unmonitoredChannels(), "both activated on a monitor that never runs");
            assertTrue(monitor.engine.warnedNotRunning(), "one WARN for this monitor");
            assertTrue(MonitorEngine.NOT_RUNNING_WARNING.contains("startWorker()")
                    && MonitorEngine.NOT_RUNNING_WARNING.contains("manual()"), MonitorEngine.NOT_RUNNING_WARNING);
        } finally {
            a.finishAndReleaseAll();
            b.finishAndReleaseAll();
            monitor.close();
        }
    }

    @Test
    void aManualMonitorIsNeitherWarnedAboutNorCounted() {
        ManualTicker ticker = new ManualTicker(0);
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().ticker(ticker).manual().build();
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(IDLE));
        try {
            assertEquals(0, monitor.stats().unmonitoredChannels());
            assertFalse(monitor.engine.warnedNotRunning());
            ticker.advance(Duration.ofMillis(1100).toNanos());
            monitor.runOnce();
            monitor.runOnce();
            ch.runPendingTasks();
            assertFalse(ch.isOpen(), "runOnce drives it");
        } finally {
            ch.finishAndReleaseAll();
            monitor.close();
        }
    }

    @Test
    void aStartedMonitorIsNeitherWarnedAboutNorCounted() {
        HeartbeatMonitor monitor = HeartbeatMonitor.start();
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(IDLE));
        try {
            assertEquals(0, monitor.stats().unmonitoredChannels());
            assertFalse(monitor.engine.warnedNotRunning());
        } finally {
            ch.finishAndReleaseAll();
            monitor.close();
        }
    }

    @Test
    void startWorkerIsRefusedOnAManualMonitor() {
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().build();
        try {
            IllegalStateException e = assertThrows(IllegalStateException.class, monitor::startWorker);
            assertEquals("this HeartbeatMonitor was built manual(): it runs only when runOnce() is called, and "
                    + "startWorker() would race with that", e.getMessage());
        } finally {
            monitor.close();
        }
    }

    @Test
    void refusesAHostWatchdogWithoutAHost() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> HeartbeatMonitor.builder().hostWatchdog(Duration.ofSeconds(1)).build());
        assertEquals("hostWatchdog (PT1S) needs hostedBy(EventExecutor): without a host loop there is nothing to "
                + "watch", e.getMessage());
    }
}
