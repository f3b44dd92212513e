/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;

/**
 * A real stop-the-world pause, on the real clock: the whole test JVM is stopped for 1.5 s
 * ({@code SIGSTOP}, then {@code SIGCONT} from a shell it started: every thread stops at once, as in
 * a long full GC or a suspended VM, but reliably and for a known time), while a monitor with the
 * default stall threshold (100 ms) holds 100 channels that talk every few ms and 100 silent ones,
 * all closed after 500 ms without a read. (The ticker-jump version of this is in {@link FaultTest}.)
 *
 * <p>Expected, written before the run: no channel is closed while its stamps say it read within
 * 500 ms; no talking channel is closed at all, even though the event loop (this thread) runs the
 * worker's actions for 200 ms after the pause before it reads again, as a loop working off its
 * backlog would: the checks that came due in the pause are deferred by the worker's delay and
 * counted as stall re-checks, not judged on stamps the pause made old; every silent channel is
 * closed, within the pause plus 1 s after it ended (re-judged after as long again as the delay,
 * plus slack for a loaded machine). Linux (or any system with {@code sh} and {@code kill}); about
 * 4 s.
 */
class RealPauseTest {

    private static final long TIMEOUT_MS = 500;
    private static final long PAUSE_MS = 1_500;
    private static final int CHANNELS = 100;

    @Test
    void aRealPauseClosesNoTalkingChannelAndDrainsTheSilentOnes() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/bin/sh")), "needs /bin/sh and kill");
        HeartbeatConfig cfg = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMillis(TIMEOUT_MS)).build();
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().build().startWorker();
        List<EmbeddedChannel> talking = new ArrayList<>();
        List<EmbeddedChannel> silent = new ArrayList<>();
        long[] lastRead = new long[CHANNELS];
        long[] silentClosedAt = new long[CHANNELS];
        try {
            for (int i = 0; i < CHANNELS; i++) {
                talking.add(new EmbeddedChannel(monitor.newHandler(cfg), new HeartbeatHandlerTest.Sink()));
                lastRead[i] = System.nanoTime();
                silent.add(new EmbeddedChannel(monitor.newHandler(cfg)));
            }
            long start = System.nanoTime();
            pauseThisProcessSoon();
            long resumedAt = 0;
            long pauseNanos = 0;
            long previous = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() - end < 0 && !allClosed(silent)) {
                for (int i = 0; i < CHANNELS; i++) {
                    long now = System.nanoTime(); // a pause is seen between any two channels
                    if (resumedAt == 0 && now - previous > TimeUnit.MILLISECONDS.toNanos(PAUSE_MS) * 2 / 3) {
                        resumedAt = now;
                        pauseNanos = now - previous;
                    }
                    previous = now;
                    EmbeddedChannel ch = talking.get(i);
                    ch.runPendingTasks();
                    assertTrue(ch.isOpen(), "talking channel " + i + " closed, " + (now - lastRead[i]) / 1_000_000
                            + " ms after its last read, " + (resumedAt == 0 ? "before the pause"
                            : (now - resumedAt) / 1_000_000 + " ms after a pause of " + pauseNanos / 1_000_000
                            + " ms"));
                    if (resumedAt == 0 || now - resumedAt >= TimeUnit.MILLISECONDS.toNanos(200)) {
                        ch.writeInbound("data"); // not while working off the backlog
                        lastRead[i] = System.nanoTime();
                    }
                    EmbeddedChannel s = silent.get(i);
                    s.runPendingTasks();
                    if (!s.isOpen() && silentClosedAt[i] == 0) {
                        silentClosedAt[i] = System.nanoTime();
                    }
                }
                Thread.onSpinWait();
            }
            assertTrue(resumedAt != 0, "no pause of at least " + PAUSE_MS * 2 / 3 + " ms was seen");
            assertTrue(allClosed(silent), "silent channels left open 10 s after the start");
            for (int i = 0; i < CHANNELS; i++) {
                long closed = silentClosedAt[i];
                assertTrue(closed - start >= TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS), "silent channel " + i
                        + " closed early");
                assertTrue(closed - resumedAt <= pauseNanos + TimeUnit.SECONDS.toNanos(1), "silent channel " + i
                        + " closed " + (closed - resumedAt) / 1_000_000 + " ms after a pause of "
                        + pauseNanos / 1_000_000 + " ms");
            }
            assertTrue(monitor.stats().stallRechecks() >= CHANNELS, "the silent channels' checks, due in the "
                    + "pause, deferred and counted: " + monitor.stats());
            assertEquals(CHANNELS, monitor.stats().closedReaderIdle(), "only the silent channels closed");
        } finally {
            for (EmbeddedChannel ch : talking) {
                ch.finishAndReleaseAll();
            }
            for (EmbeddedChannel ch : silent) {
                ch.finishAndReleaseAll();
            }
            monitor.close();
        }
    }

    private static boolean allClosed(List<EmbeddedChannel> channels) {
        return channels.stream().noneMatch(EmbeddedChannel::isOpen);
    }

    /**
     * Starts a shell that stops this process 100 ms from now for {@link #PAUSE_MS}, and a second one
     * that continues it after 5 s whatever happened to the first, so the test cannot hang.
     */
    private static void pauseThisProcessSoon() throws IOException {
        long pid = ProcessHandle.current().pid();
        new ProcessBuilder("/bin/sh", "-c", "sleep 5; kill -CONT " + pid).start();
        new ProcessBuilder("/bin/sh", "-c", "sleep 0.1; kill -STOP " + pid + "; sleep " + PAUSE_MS / 1000.0
                + "; kill -CONT " + pid).start();
    }
}
