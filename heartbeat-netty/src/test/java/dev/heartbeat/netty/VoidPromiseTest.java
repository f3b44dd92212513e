/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.WRITER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Writes with the void promise count as {@code IdleStateHandler} counts them: when they complete,
 * not when they are flushed. A peer that stopped reading ({@link PeerChannel}) leaves them pending:
 * that is no write for the writer idleness and no progress for the write stall. In virtual time.
 */
class VoidPromiseTest {

    /** An action may come one tick (1.05 ms) after its deadline; virtual time moves in 1 ms steps. */
    private static final long LATE = 3;

    private final VirtualTime.World world = new VirtualTime.World(3);

    @AfterEach
    void tearDown() {
        world.close();
    }

    /** Records the user events and, from this test, the exceptions that reach it. */
    final class Recorder extends VirtualTime.Recorder {
        final List<Throwable> errors = new ArrayList<>();

        Recorder() {
            super(world);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            errors.add(cause);
        }
    }

    private PeerChannel channel(ChannelHandler... handlers) {
        PeerChannel ch = new PeerChannel(handlers);
        world.channels.add(ch);
        world.monitor.runOnce();
        return ch;
    }

    private static void writeVoid(PeerChannel ch, int bytes) {
        ch.writeAndFlush(Unpooled.buffer(bytes).writeZero(bytes), ch.voidPromise());
    }

    @Test
    void aVoidPromiseWriteThatNeverCompletesIsNoProgressForTheWriteStall() {
        Recorder r = new Recorder();
        PeerChannel ch = channel(world.monitor.newHandler(HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofSeconds(60)).writeStall(Duration.ofSeconds(1)).build()), r);
        world.advance(100);
        ch.stopReading();
        for (int i = 0; i < 30 && ch.isOpen(); i++) { // the application writes and flushes every 100 ms
            writeVoid(ch, 100);
            world.step(100);
        }
        assertFalse(ch.isOpen(), "a peer that reads nothing is closed for WRITE_STALL: " + r.events);
        assertEquals(List.of(HeartbeatCloseEvent.of(CloseReason.WRITE_STALL)), r.events);
        long stalledFor = r.times.get(0) - 100;
        assertTrue(stalledFor >= 1_000 && stalledFor <= 1_250 + LATE,
                "closed between the timeout and 1.25 times it after the first pending byte: " + stalledFor + " ms");
    }

    @Test
    void voidPromiseWritesToAPeerThatReadsNothingLeaveTheWriterIdle() {
        Recorder r = new Recorder();
        PeerChannel ch = channel(world.monitor.newHandler(HeartbeatConfig.events(false, 0, 1, 0, TimeUnit.SECONDS)),
                r);
        ch.stopReading();
        for (int i = 0; i < 40; i++) { // 4 s of writes every 100 ms, none of which completes
            world.step(100);
            writeVoid(ch, 10);
        }
        world.step(LATE);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT, WRITER_IDLE_STATE_EVENT,
                WRITER_IDLE_STATE_EVENT), r.events, "IdleStateHandler fires these 4, at 1, 2, 3 and 4 s");
        for (int i = 0; i < 4; i++) {
            long at = r.times.get(i);
            assertTrue(at >= 1_000L * (i + 1) && at <= 1_000L * (i + 1) + LATE, "event " + i + " at " + at + " ms");
        }

        ch.readAgain(); // the peer takes it all: the writes complete, at 4.003 s
        world.step(999);
        assertEquals(4, r.events.size(), "never early: the writes completed 999 ms ago");
        world.step(1 + LATE);
        assertEquals(FIRST_WRITER_IDLE_STATE_EVENT, r.events.get(4), "a completed write makes the next one first");
    }

    /** In front of the Heartbeat handler: fails every write, as a codec that cannot encode it would. */
    static final class FailingWrites extends ChannelOutboundHandlerAdapter {
        final IOException failure = new IOException("cannot encode");

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ReferenceCountUtil.release(msg);
            promise.setFailure(failure);
        }
    }

    @Test
    void aFailedVoidPromiseWriteReachesTheExceptionHandlerAsWithoutHeartbeat() {
        FailingWrites failing = new FailingWrites();
        Recorder r = new Recorder();
        PeerChannel ch = channel(failing, world.monitor.newHandler(HeartbeatConfig.events(false, 0, 1, 0,
                TimeUnit.SECONDS)), r);
        writeVoid(ch, 10);
        assertEquals(1, r.errors.size(), "the channel's void promise fires a failure into the pipeline");
        assertSame(failing.failure, r.errors.get(0));

        ch.writeAndFlush(Unpooled.buffer(1).writeZero(1), ch.unsafe().voidPromise());
        assertEquals(1, r.errors.size(), "the unsafe void promise fires nothing, with Heartbeat or without");
        world.advance(999);
        assertTrue(r.events.isEmpty(), "a failed write counts as a write, as in IdleStateHandler: " + r.events);
    }

    /**
     * Bytes allocated per write with the void promise, flushed, on an {@link EmbeddedChannel} with
     * {@code handler} (or none), after warming up.
     */
    private static double bytesPerVoidWrite(ChannelHandler handler) {
        EmbeddedChannel ch = handler == null ? new EmbeddedChannel() : new EmbeddedChannel(handler);
        try {
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().getId();
            String message = "m";
            int writes = 20_000;
            long allocated = 0;
            for (int round = 0; round < 6; round++) { // the first five warm up
                long before = threads.getThreadAllocatedBytes(tid);
                for (int i = 0; i < writes; i++) {
                    ch.writeAndFlush(message, ch.voidPromise());
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
    void aVoidPromiseWriteAllocatesLessThanInIdleStateHandler() {
        double none = bytesPerVoidWrite(null);
        double heartbeat = bytesPerVoidWrite(world.monitor.newHandler(HeartbeatConfig.events(false, 0, 1, 0,
                TimeUnit.SECONDS)));
        double netty = bytesPerVoidWrite(new IdleStateHandler(0, 1, 0, TimeUnit.SECONDS));
        System.out.printf(java.util.Locale.ROOT, "aVoidPromiseWriteAllocatesLessThanInIdleStateHandler: bytes per "
                + "void-promise write: no handler %.1f, Heartbeat %.1f, IdleStateHandler %.1f%n", none, heartbeat,
                netty);
        assertTrue(heartbeat - none > 0, "a void-promise write gets a promise of its own: " + heartbeat);
        assertTrue(heartbeat - none < netty - none, "Heartbeat " + heartbeat + " B, IdleStateHandler " + netty + " B");
    }
}
