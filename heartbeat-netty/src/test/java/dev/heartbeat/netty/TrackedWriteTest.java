/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.HeartbeatHandler;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.core.Ticker;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.GenericFutureListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tracked write ({@link HeartbeatHandler#onWrite}): a write counts when it completes, as in
 * {@code IdleStateHandler}, whenever and in whatever order it completes, with one clock read per
 * flush, not per write. Writer idleness 1 s, in virtual time.
 */
class TrackedWriteTest {

    private static final long LATE = 3;

    private final VirtualTime.World world = new VirtualTime.World(3);

    @AfterEach
    void tearDown() {
        world.close();
    }

    private ChannelHandler writerIdle() {
        return world.monitor.newHandler(HeartbeatConfig.events(false, 0, 1, 0, TimeUnit.SECONDS));
    }

    private PeerChannel channel(ChannelHandler... handlers) {
        PeerChannel ch = new PeerChannel(handlers);
        world.channels.add(ch);
        world.monitor.runOnce();
        return ch;
    }

    /** Steps {@code millis} and asserts no event came; then steps to the deadline and asserts the first one. */
    private void idleExactlyAfter(VirtualTime.Recorder r, long millis, String why) {
        int before = r.events.size();
        world.step(millis - 1);
        assertEquals(before, r.events.size(), "never early: " + why + ": " + r.events);
        world.step(1 + LATE);
        assertEquals(before + 1, r.events.size(), "on time: " + why + ": " + r.events);
        assertEquals(FIRST_WRITER_IDLE_STATE_EVENT, r.events.get(before));
    }

    @Test
    void writesThatCompleteAfterTheirFlushAreSeenWhenTheyComplete() {
        VirtualTime.Recorder r = world.recorder();
        PeerChannel ch = channel(writerIdle(), r);
        ch.stopReading();
        world.step(100);
        for (int i = 0; i < 3; i++) { // three writes, one flush: none completes (the peer reads nothing)
            ch.write(Unpooled.buffer(10).writeZero(10));
        }
        ch.flush();
        world.step(1_000 - 100 + LATE);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), r.events, "pending writes are no writes");

        world.step(500);
        ch.readAgain(); // outside any flush of the handler's: the socket drained
        idleExactlyAfter(r, 1_000, "the writes completed when the peer read them");
    }

    /** Head side of the handler: holds the first write it sees and completes every later one at once. */
    static final class HoldsFirst extends ChannelOutboundHandlerAdapter {
        ChannelPromise held;
        Object heldMessage;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (held == null && heldMessage == null) {
                held = promise;
                heldMessage = msg;
            } else {
                ReferenceCountUtil.release(msg);
                promise.setSuccess();
            }
        }

        void complete() {
            ReferenceCountUtil.release(heldMessage);
            held.setSuccess();
        }
    }

    /** Head side of the handler: flushes when told, as a handler that flushes on its own does. */
    static final class FlushesOnItsOwn extends ChannelOutboundHandlerAdapter {
        ChannelHandlerContext ctx;

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        void flushNow() {
            ctx.flush();
        }
    }

    /**
     * A write that a flush not passing the handler completes (a handler in front flushing on its own; the
     * handler's own goodbye) is settled before the verdict is acted on: never early. It is stamped when the
     * event loop acts (1 s), not when it completed (0.5 s), so the event comes at 2 s where
     * {@code IdleStateHandler}'s comes at 1.5 s: late in this path, never early.
     */
    @Test
    void aWriteCompletedByAFlushThatDidNotPassTheHandlerIsNeverMissed() {
        FlushesOnItsOwn front = new FlushesOnItsOwn();
        VirtualTime.Recorder r = world.recorder();
        PeerChannel ch = channel(front, writerIdle(), r);
        world.step(100);
        ch.write(Unpooled.buffer(1).writeZero(1)); // not flushed: pending
        world.step(400);
        front.flushNow(); // at 500 ms: the write completes, unseen by the handler's flush
        world.step(1_500 - 500 - 1);
        assertEquals(List.of(), r.events, "never early: the write completed at 500 ms");
        world.step(500 + 1 + LATE);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), r.events, "late, not lost: " + r.events);
    }

    @Test
    void anEarlierWriteThatCompletesAfterALaterOneIsSeen() {
        HoldsFirst holds = new HoldsFirst();
        VirtualTime.Recorder r = world.recorder();
        PeerChannel ch = channel(holds, writerIdle(), r);
        world.step(100);
        ch.write(Unpooled.buffer(1).writeZero(1)); // held: completes later, out of order
        ch.writeAndFlush(Unpooled.buffer(1).writeZero(1)); // completes at once, at 100 ms
        world.step(400);
        holds.complete(); // at 500 ms: IdleStateHandler's last write is now
        idleExactlyAfter(r, 1_000, "the held write completed at 500 ms");
    }

    @Test
    void aWriteCompletedWithoutAFlushIsSeen() {
        HoldsFirst completesAtOnce = new HoldsFirst();
        completesAtOnce.heldMessage = "taken"; // holds nothing
        VirtualTime.Recorder r = world.recorder();
        PeerChannel ch = channel(completesAtOnce, writerIdle(), r);
        world.step(300);
        ch.write(Unpooled.buffer(1).writeZero(1)); // completed in the write; no flush follows
        idleExactlyAfter(r, 1_000, "the write completed at 300 ms");
    }

    @Test
    void aWriteFlushedJustBeforeTheDeadlineKeepsTheWriterBusy() {
        VirtualTime.Recorder r = world.recorder();
        PeerChannel ch = channel(writerIdle(), r);
        world.step(999);
        ch.writeAndFlush(Unpooled.buffer(1).writeZero(1));
        idleExactlyAfter(r, 1_000, "the write completed at 999 ms");
    }

    @Test
    void voidPromiseWritesCompletedByTheirFlushCount() {
        VirtualTime.Recorder r = world.recorder();
        PeerChannel ch = channel(writerIdle(), r);
        world.step(600);
        ch.write(Unpooled.buffer(1).writeZero(1), ch.voidPromise());
        ch.write(Unpooled.buffer(1).writeZero(1), ch.voidPromise());
        ch.flush();
        idleExactlyAfter(r, 1_000, "the void writes completed at 600 ms");
    }

    /** A manual ticker that counts its readings. */
    static final class CountingTicker implements Ticker {
        final ManualTicker time = new ManualTicker(0);
        int reads;

        @Override
        public long nanoTime() {
            reads++;
            return time.nanoTime();
        }
    }

    @Test
    void aFlushOfWritesThatCompletedReadsTheClockOnce() {
        CountingTicker ticker = new CountingTicker();
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(HeartbeatConfig.events(false, 0, 1, 0,
                TimeUnit.SECONDS)));
        try {
            List<ChannelFuture> promises = new ArrayList<>();
            int before = ticker.reads;
            for (int i = 0; i < 5; i++) {
                promises.add(ch.write("m" + i));
            }
            assertEquals(before, ticker.reads, "a write that has not completed reads no clock");
            ch.flush();
            assertTrue(promises.stream().allMatch(ChannelFuture::isSuccess));
            assertEquals(before + 1, ticker.reads, "five writes completed by one flush: one clock read");

            ch.writeAndFlush("again");
            assertEquals(before + 2, ticker.reads, "a write and flush: one clock read");
        } finally {
            ch.finishAndReleaseAll();
            monitor.close();
        }
    }

    /**
     * The application's side of a request and its response: writes an answer to each message it reads
     * (with the void promise if {@code voidPromise}), and flushes them when the read batch completes, running
     * {@code beforeFlush} and {@code afterFlush} around the flush, still inside the batch.
     */
    static final class Echo extends io.netty.channel.ChannelInboundHandlerAdapter {
        final boolean voidPromise;
        Runnable beforeFlush = () -> { };
        Runnable afterFlush = () -> { };

        Echo(boolean voidPromise) {
            this.voidPromise = voidPromise;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
            ctx.write("answer", voidPromise ? ctx.voidPromise() : ctx.newPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            beforeFlush.run();
            ctx.flush();
            afterFlush.run();
        }
    }

    /** Reader and writer idleness, 1 s each: the handler tracks both, so a read batch is marked. */
    private static HeartbeatConfig readerAndWriter() {
        return HeartbeatConfig.events(false, 1, 1, 0, TimeUnit.SECONDS);
    }

    @Test
    void anAnswerWrittenWithinItsReadBatchSharesTheBatchsClockRead() {
        for (boolean voidPromise : new boolean[] {false, true}) {
            CountingTicker ticker = new CountingTicker();
            HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
            HeartbeatHandler handler = (HeartbeatHandler) monitor.newHandler(readerAndWriter());
            EmbeddedChannel ch = new EmbeddedChannel(handler, new Echo(voidPromise));
            try {
                ticker.time.advance(Duration.ofMillis(7));
                int before = ticker.reads;
                ch.writeInbound("request 1", "request 2"); // one read batch of two messages, two answers
                assertEquals(2, ch.outboundMessages().size(), "both answers written");
                assertEquals(before + 1, ticker.reads, "one clock read for the batch and its answers (void "
                        + voidPromise + ")");
                assertEquals(ticker.time.nanoTime(), handler.lastWriteOpaque(), "the answers stamped");
            } finally {
                ch.finishAndReleaseAll();
                monitor.close();
            }
        }
    }

    @Test
    void anAnswerThatCompletedWithinItsBatchIsStampedNoEarlierThanItCompleted() {
        CountingTicker ticker = new CountingTicker();
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        HeartbeatHandler handler = (HeartbeatHandler) monitor.newHandler(readerAndWriter());
        Echo echo = new Echo(false);
        EmbeddedChannel ch = new EmbeddedChannel(handler, echo);
        try {
            echo.beforeFlush = () -> ticker.time.advance(Duration.ofMillis(40)); // completes 40 ms into the batch end
            long start = ticker.time.nanoTime();
            ch.writeInbound("request");
            assertTrue(handler.lastWriteOpaque() - (start + TimeUnit.MILLISECONDS.toNanos(40)) >= 0,
                    "stamped at the batch's end, not at its start: after the completion");
        } finally {
            ch.finishAndReleaseAll();
            monitor.close();
        }
    }

    /**
     * A verdict acted on inside a read batch (the embedded loop runs its tasks where it is told to; a
     * transport's loop never does) finds the answer that completed earlier in the batch: the stamp the
     * batch owes is paid before a rule reads the stamps. Without that payment the writer idleness of 1 s
     * would be declared 1 ms after a write.
     */
    @Test
    void aVerdictActedOnWithinAReadBatchSeesTheAnswersWrittenInIt() {
        VirtualTime.Recorder r = world.recorder();
        Echo echo = new Echo(false);
        PeerChannel ch = channel(world.monitor.newHandler(HeartbeatConfig.events(false, 5, 1, 0, TimeUnit.SECONDS)),
                echo, r);
        world.step(999); // the writer is due at 1 s (no write since 0)
        // the answer completes at 999 ms, flushed as the batch ends; still inside it, the worker judges at 1,001 ms
        // and the loop acts on its verdict
        echo.afterFlush = () -> world.step(2);
        ch.writeInbound("request");
        echo.afterFlush = () -> { };
        assertEquals(List.of(), r.events, "never early: the answer completed at 999 ms");
        world.step(997);
        assertEquals(List.of(), r.events, "never early: 1,998 ms, the answer completed at 999 ms");
        world.step(3 + LATE); // stamped when the loop acted, at 1,001 ms: late by the rest of the batch
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), r.events);
    }

    /** Bytes allocated per {@code writeAndFlush} with a promise of the caller's, over no handler's. */
    private static double bytesPerWrite(ChannelHandler handler) {
        EmbeddedChannel ch = handler == null ? new EmbeddedChannel() : new EmbeddedChannel(handler);
        try {
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().getId();
            int writes = 20_000;
            long allocated = 0;
            for (int round = 0; round < 6; round++) { // the first five warm up
                long before = threads.getThreadAllocatedBytes(tid);
                for (int i = 0; i < writes; i++) {
                    ch.writeAndFlush("m", ch.newPromise());
                    if (i % 64 == 63) {
                        ch.outboundMessages().clear();
                    }
                }
                allocated = threads.getThreadAllocatedBytes(tid) - before;
            }
            return (double) allocated / writes;
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aTrackedWriteAllocatesNothing() {
        double none = bytesPerWrite(null);
        double heartbeat = bytesPerWrite(writerIdle());
        double stall = bytesPerWrite(world.monitor.newHandler(HeartbeatConfig.events()
                .readerIdle(Duration.ofSeconds(30)).writeStall(Duration.ofSeconds(1)).build()));
        System.out.printf(java.util.Locale.ROOT, "aTrackedWriteAllocatesNothing: bytes per write: no handler %.1f, "
                + "Heartbeat %.1f, with a write stall %.1f%n", none, heartbeat, stall);
        assertTrue(heartbeat - none < 1, "Heartbeat " + heartbeat + " B, no handler " + none + " B");
        assertTrue(stall - none < 1, "with a write stall " + stall + " B, no handler " + none + " B");
    }

    /** A promise that counts the listeners added to it. */
    static final class CountingPromise extends DefaultChannelPromise {
        int listeners;

        CountingPromise(EmbeddedChannel ch) {
            super(ch, ch.eventLoop());
        }

        @Override
        public ChannelPromise addListener(GenericFutureListener<? extends Future<? super Void>> listener) {
            listeners++;
            return super.addListener(listener);
        }
    }

    @Test
    void aWriteCompletedByItsFlushGetsNoListener() {
        EmbeddedChannel ch = world.channel(writerIdle());
        CountingPromise promise = new CountingPromise(ch);
        ch.writeAndFlush("a", promise);
        assertTrue(promise.isSuccess());
        assertEquals(0, promise.listeners, "settled at the end of its flush");
    }

    @Test
    void theWriteTrackerOfAReconfiguredHandlerSettlesAtTheFlushToo() {
        CountingTicker ticker = new CountingTicker();
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker).build();
        HeartbeatHandler handler = (HeartbeatHandler) monitor.newHandler(HeartbeatConfig.events(false, 1, 0, 0,
                TimeUnit.SECONDS));
        EmbeddedChannel ch = new EmbeddedChannel(handler);
        try {
            handler.reconfigure(HeartbeatConfig.events(false, 1, 1, 0, TimeUnit.SECONDS).plan);
            ticker.time.advance(Duration.ofMillis(5));
            int before = ticker.reads;
            CountingPromise promise = new CountingPromise(ch);
            ch.writeAndFlush("a", promise);
            assertEquals(0, promise.listeners, "settled at the end of its flush");
            assertEquals(before + 1, ticker.reads, "a write completed by its flush: one clock read");
            assertEquals(ticker.time.nanoTime(), handler.lastWriteOpaque(), "stamped at the flush");
        } finally {
            ch.finishAndReleaseAll();
            monitor.close();
        }
    }
}
