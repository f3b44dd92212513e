/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static dev.heartbeat.netty.HeartbeatHandlerTest.events;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.testing.LeakDetection;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.EventExecutorGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Faults, each with its expected outcome written first: a stalled worker, a blocked event loop,
 * throwing user code, and an {@code OutOfMemoryError} where Heartbeat allocates (a ping, the hand-off
 * of a batch). Virtual time; the event loops that must be blocked are real {@link DefaultEventLoop}s
 * (blocked by a task waiting on a latch, not by sleeping).
 */
@ExtendWith(LeakDetection.class)
class FaultTest {

    private static final long LATE = 3;

    private final ManualTicker ticker = new ManualTicker(-TimeUnit.SECONDS.toNanos(10)); // crosses zero
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
            .maxCoalescing(Duration.ZERO).build();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final List<EventExecutorGroup> groups = new ArrayList<>();

    @AfterEach
    void tearDown() {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        for (EventExecutorGroup g : groups) {
            g.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        monitor.close();
    }

    private void advance(long millis) {
        for (long i = 0; i < millis; i++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
            for (EmbeddedChannel ch : channels) {
                ch.runPendingTasks();
            }
        }
    }

    // ------------------------------------------------------------------ a stalled worker

    /**
     * Expected: the whole process pauses for 2 s (the worker and the event loops: nothing is stamped
     * meanwhile). The first worker cycle after it finds every check about 1.5 s late and defers each
     * by as long instead of closing all 200 channels at once; the channels whose peers talk again after
     * the pause stay open, the silent ones are closed once the deferral has passed, within a tick.
     */
    @Test
    void aStalledWorkerDefersInsteadOfClosingEveryone() {
        HeartbeatConfig close = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1)).build();
        List<EmbeddedChannel> talking = new ArrayList<>();
        List<EmbeddedChannel> silent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(close));
            channels.add(ch);
            (i % 2 == 0 ? talking : silent).add(ch);
        }
        advance(500);
        ticker.advance(2, TimeUnit.SECONDS); // the pause
        monitor.runOnce();
        channels.forEach(EmbeddedChannel::runPendingTasks);
        assertEquals(0, monitor.stats().closedTotal(), "nothing closed at the first cycle after the pause");
        assertEquals(200, monitor.stats().stallRechecks(), "every late check deferred, and counted");
        for (int ms = 0; ms < 2_000; ms += 100) { // after the pause, half of the peers talk again
            for (EmbeddedChannel ch : talking) {
                ch.writeInbound("after the pause");
                ch.readInbound();
            }
            advance(100);
        }
        assertTrue(talking.stream().allMatch(EmbeddedChannel::isOpen), "no premature close");
        assertTrue(silent.stream().noneMatch(EmbeddedChannel::isOpen), "the silent ones are closed");
        assertEquals(100, monitor.stats().closedReaderIdle());
    }

    // ------------------------------------------------------------------ a blocked event loop

    /** Records idle events and the thread each arrived on. */
    static final class ThreadRecorder extends ChannelInboundHandlerAdapter {
        final Queue<Thread> threads = new ConcurrentLinkedQueue<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                threads.add(Thread.currentThread());
            }
        }
    }

    private static Thread threadOf(EventExecutor loop) {
        return loop.submit(Thread::currentThread).syncUninterruptibly().getNow();
    }

    /**
     * Expected: event loop A is blocked (a task that waits); the worker goes on deciding. Channels on
     * event loop B get their events meanwhile; A's wait, and once A runs again each of its channels
     * gets exactly one event (the two verdicts decided meanwhile merge), on A's own thread.
     */
    @Test
    @SuppressWarnings("deprecation") // addLast(group, ...): deprecated in Netty 4.2, still what users call
    void aBlockedEventLoopHoldsOnlyItsOwnChannels() throws Exception {
        DefaultEventLoop loopA = new DefaultEventLoop();
        DefaultEventLoop loopB = new DefaultEventLoop();
        groups.add(loopA);
        groups.add(loopB);
        List<ThreadRecorder> onA = new ArrayList<>();
        List<ThreadRecorder> onB = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            EventExecutor loop = i % 2 == 0 ? loopA : loopB;
            ThreadRecorder r = new ThreadRecorder();
            EmbeddedChannel ch = new EmbeddedChannel();
            ch.pipeline().addLast(loop, monitor.newHandler(events(1000, 0, 0))).addLast(loop, r);
            channels.add(ch);
            (loop == loopA ? onA : onB).add(r);
        }
        loopA.submit(() -> { }).syncUninterruptibly();
        loopB.submit(() -> { }).syncUninterruptibly();
        CountDownLatch unblock = new CountDownLatch(1);
        loopA.execute(() -> {
            try {
                unblock.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            advance(1_000 + LATE); // the first verdicts; B runs its batch before the second ones come
            loopB.submit(() -> { }).syncUninterruptibly();
            advance(1_000); // the second verdicts, at 2 s
            loopB.submit(() -> { }).syncUninterruptibly();
            assertTrue(onB.stream().allMatch(r -> r.threads.size() == 2), "B is not held up by A");
            assertTrue(onA.stream().allMatch(r -> r.threads.isEmpty()), "A's actions wait for A");
        } finally {
            unblock.countDown(); // also when an assertion failed: the cleanup must not wait for a blocked A
        }
        loopA.submit(() -> { }).syncUninterruptibly();
        Thread a = threadOf(loopA);
        for (ThreadRecorder r : onA) {
            assertEquals(1, r.threads.size(), "not lost, not doubled: the verdicts decided meanwhile merge");
            assertEquals(a, r.threads.peek(), "on A's own thread");
        }
        assertEquals(0, monitor.stats().timer().callbackFailures());
    }

    // ------------------------------------------------------------------ throwing user code

    /**
     * Expected: a user handler that throws from {@code userEventTriggered} does not stop monitoring
     * (Netty routes the exception to {@code exceptionCaught}); the next events still come, the worker
     * sees no failure.
     */
    @Test
    void aThrowingUserHandlerDoesNotStopMonitoring() {
        AtomicInteger seen = new AtomicInteger();
        AtomicInteger errors = new AtomicInteger();
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(events(1000, 0, 0)),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
                        seen.incrementAndGet();
                        throw new IllegalStateException("user bug");
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        errors.incrementAndGet();
                    }
                });
        channels.add(ch);
        advance(3_000 + LATE);
        assertEquals(3, seen.get(), "events at 1, 2 and 3 s");
        assertEquals(3, errors.get());
        assertTrue(ch.isOpen());
        assertEquals(0, monitor.stats().timer().callbackFailures());
    }

    // ------------------------------------------------------------------ out of memory

    /**
     * Expected: a ping factory that throws {@code OutOfMemoryError} once costs that one ping (counted
     * as a failed ping write, not a missed ping; the peer staying silent, it counts toward
     * maxMissedPings, fail closed); the worker survives and the next ping goes out.
     */
    @Test
    void anOutOfMemoryErrorMakingAPingCostsOnlyThatPing() {
        AtomicInteger calls = new AtomicInteger();
        HeartbeatConfig cfg = HeartbeatConfig.ping(c -> {
            if (calls.incrementAndGet() == 1) {
                throw new OutOfMemoryError("test: no heap for the ping");
            }
            return "PING";
        }).interval(Duration.ofSeconds(1)).timeout(Duration.ofMillis(500)).maxMissedPings(2).build();
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(cfg), new ChannelInboundHandlerAdapter() {
            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                // the factory's error reaches the pipeline; swallowed here
            }
        });
        channels.add(ch);
        advance(1_000 + 500 + LATE);
        assertTrue(ch.isOpen(), "one failed ping of the two that may go unanswered");
        assertEquals(1, monitor.stats().pingWriteFailures());
        assertEquals("PING", ch.readOutbound(), "the next ping, a ping timeout later");
        assertEquals(1, monitor.stats().pingsSent());
        advance(500 + LATE);
        assertFalse(ch.isOpen(), "and that one, unanswered, closes the channel");
    }

    /** An event loop whose next {@code execute} throws {@code OutOfMemoryError}, as allocating a task node could. */
    static final class FlakyLoop extends DefaultEventLoop {
        volatile boolean failNext;

        @Override
        public void execute(Runnable task) {
            if (failNext) {
                failNext = false;
                throw new OutOfMemoryError("test: no heap for the task");
            }
            super.execute(task);
        }
    }

    /**
     * Expected: the hand-off of a batch to its event loop throws {@code OutOfMemoryError}; the batch
     * keeps its actions and is handed over after the next worker cycle that expires anything, so every
     * channel still gets its event, once; the failure is counted; the worker survives.
     */
    @Test
    @SuppressWarnings("deprecation") // addLast(group, ...): deprecated in Netty 4.2, still what users call
    void anOutOfMemoryErrorHandingOverABatchDelaysItsActionsButLosesNone() {
        FlakyLoop flaky = new FlakyLoop();
        groups.add(flaky);
        List<ThreadRecorder> recorders = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            ThreadRecorder r = new ThreadRecorder();
            EmbeddedChannel ch = new EmbeddedChannel();
            ch.pipeline().addLast(flaky, monitor.newHandler(events(1000 + i, 0, 0))).addLast(flaky, r);
            channels.add(ch);
            recorders.add(r);
        }
        flaky.submit(() -> { }).syncUninterruptibly();
        flaky.failNext = true;
        advance(1_000 + 9 + LATE);
        flaky.submit(() -> { }).syncUninterruptibly();
        assertEquals(1, monitor.stats().dispatchFailures(), "the failed hand-off is counted");
        assertTrue(recorders.stream().allMatch(r -> r.threads.size() == 1), "every event arrived, once");
        assertEquals(0, monitor.stats().timer().callbackFailures(), "the worker caught it where it happened");
    }
}
