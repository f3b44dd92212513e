/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.EventLoopBatches;
import static dev.heartbeat.netty.HeartbeatHandlerTest.events;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT;
import static io.netty.handler.timeout.IdleStateEvent.FIRST_WRITER_IDLE_STATE_EVENT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.ref.WeakReference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.heartbeat.core.ManualTicker;
import dev.heartbeat.netty.HeartbeatHandlerTest.Recorder;
import dev.heartbeat.testing.LeakDetection;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPipelineException;
import io.netty.channel.ChannelPromise;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.codec.EncoderException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One test per path that a review found no test walking (the tracker's correctness issue, items 1
 * to 16), each named for the promise it keeps. Virtual time throughout: a {@link ManualTicker}
 * started below zero (so the clock crosses zero, not only {@code Long.MAX_VALUE}), the monitor
 * driven with {@link HeartbeatMonitor#runOnce()}, {@link EmbeddedChannel} for the event loop.
 */
@ExtendWith(LeakDetection.class)
class PromiseRegressionTest {

    /** An action may come one tick (1.05 ms) after its deadline; the test clock moves in 1 ms steps. */
    private static final long LATE = 3;

    private final ManualTicker ticker = new ManualTicker(-TimeUnit.SECONDS.toNanos(100)); // crosses zero
    // No timer slack: these tests assert exact delivery times (CoalescingTest covers the default).
    private final HeartbeatMonitor monitor = HeartbeatMonitor.builder().manual().ticker(ticker)
            .maxCoalescing(Duration.ZERO).build();
    private final List<EmbeddedChannel> channels = new ArrayList<>();
    private final List<AutoCloseable> cleanups = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (EmbeddedChannel ch : channels) {
            ch.finishAndReleaseAll();
        }
        for (AutoCloseable c : cleanups) {
            c.close();
        }
        monitor.close();
    }

    private EmbeddedChannel channel(ChannelHandler... handlers) {
        EmbeddedChannel ch = new EmbeddedChannel(handlers);
        channels.add(ch);
        return ch;
    }

    /** Moves virtual time in 1 ms steps, running the worker after each, then the event loops' tasks. */
    private void advance(long millis) {
        for (long i = 0; i < millis; i++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
        runEventLoops();
    }

    /** Moves virtual time in 1 ms steps, running the worker and then the event loops after each. */
    private void live(long millis) {
        for (long i = 0; i < millis; i++) {
            advance(1);
        }
    }

    private void runEventLoops() {
        for (EmbeddedChannel ch : channels) {
            ch.runPendingTasks();
        }
    }

    // ------------------------------------------------------------------ 1. a verdict acts only under its config

    @Test
    void aVerdictJudgedUnderOneConfigNeverActsUnderAnother() {
        Recorder r = new Recorder();
        EmbeddedChannel ch = channel(monitor.newHandler(events(1000, 0, 0)), r);
        ticker.advance(1000 + LATE, TimeUnit.MILLISECONDS);
        monitor.runOnce(); // the worker judged reader idle under the first config...
        monitor.reconfigure(ch, events(0, 60_000, 0)); // ...the event loop switches to writer-only first
        ch.runPendingTasks();
        assertTrue(r.events.isEmpty(), "the reader verdict does not act under a writer-only config: " + r.events);
        advance(59_990);
        assertTrue(r.events.isEmpty(), "writer idle only after 60 s: " + r.events);
        advance(10 + LATE);
        assertEquals(List.of(FIRST_WRITER_IDLE_STATE_EVENT), r.events);
        assertEquals(1, monitor.stats().staleVerdicts());
    }

    @Test
    void aLoginThatLandsAfterTheVerdictKeepsTheChannelOpen() {
        HeartbeatConfig login = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10)).build();
        HeartbeatConfig session = HeartbeatConfig.closeWhenIdle().allIdle(Duration.ofMinutes(5)).build();
        EmbeddedChannel ch = channel(monitor.newHandler(login), new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                monitor.reconfigure(ctx.channel(), session); // the login: switch to the session timeout
            }
        });
        ticker.advance(10_000 + LATE, TimeUnit.MILLISECONDS);
        monitor.runOnce();        // the worker decides to close for the login deadline...
        ch.writeInbound("LOGIN"); // ...the login is read, and the queued close runs after it
        assertTrue(ch.isOpen(), "the close was judged under the login config");
        advance(299_990);
        assertTrue(ch.isOpen());
        advance(10 + LATE);
        assertFalse(ch.isOpen(), "closed by the session's all-idle timeout");
        assertEquals(1, monitor.stats().closedAllIdle());
        assertEquals(0, monitor.stats().closedReaderIdle());
    }

    // ------------------------------------------------------------------ 2. nothing after the user closes

    @Test
    void aUserWhoClosesOnTheFirstEventReceivesNoOther() {
        Recorder r = new Recorder();
        r.closeOnIdle = true;
        EmbeddedChannel ch = channel(monitor.newHandler(events(1000, 1000, 1000)), r);
        advance(1000 + LATE);
        assertFalse(ch.isOpen());
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), r.events,
                "IdleStateHandler's writer and all tasks find the channel closed");
        HeartbeatStats stats = monitor.stats();
        assertEquals(0, stats.writerIdleEvents() + stats.allIdleEvents(), "nor are any fired into the closed pipeline");
    }

    // ------------------------------------------------------------------ 3. no sentinel ticker values

    @Test
    void thePingPolicyClosesASilentPeerWhileTheClockIsBelowZero() {
        ManualTicker negative = new ManualTicker(Long.MIN_VALUE + TimeUnit.HOURS.toNanos(1));
        HeartbeatMonitor m = HeartbeatMonitor.builder().manual().ticker(negative).maxCoalescing(Duration.ZERO).build();
        cleanups.add(m);
        HeartbeatConfig cfg = HeartbeatConfig.ping(c -> "PING").interval(Duration.ofSeconds(40))
                .timeout(Duration.ofSeconds(5)).maxMissedPings(2).build();
        EmbeddedChannel ch = channel(m.newHandler(cfg));
        // The event loop runs every 10 s only, so the worker's checks come before pings are written.
        for (int s = 0; s < 600 && ch.isOpen(); s += 10) {
            for (int ms = 0; ms < 10_000; ms++) {
                negative.advance(1, TimeUnit.MILLISECONDS);
                m.runOnce();
            }
            ch.runPendingTasks();
        }
        assertFalse(ch.isOpen(), "closed after two unanswered pings, within 600 s");
        assertEquals(1, m.stats().closedPingTimeout());
    }

    // ------------------------------------------------------------------ 4, 5. ping cadence

    @Test
    void keepAliveRePingsAtOnceAfterAMissedAnswer() {
        HeartbeatConfig cfg = HeartbeatConfig.ping(c -> "KEEPALIVE").interval(Duration.ofSeconds(30))
                .timeout(Duration.ofSeconds(5)).maxMissedPings(3).whenWriterIdle().build();
        EmbeddedChannel ch = channel(monitor.newHandler(cfg));
        live(44_990);
        assertTrue(ch.isOpen());
        assertEquals(3, monitor.stats().pingsSent(), "pings at 30, 35 and 40 s");
        live(10 + 3 * LATE); // each ping is timed from its write, which may come a tick after its decision
        assertFalse(ch.isOpen(), "three pings unanswered for 5 s each: closed at 45 s, not 95 s");
    }

    @Test
    void aPeerThatAnswersAtOnceIsPingedEveryIntervalEvenWhenTheTimeoutIsLonger() {
        HeartbeatConfig cfg = HeartbeatConfig.ping(c -> "PING").interval(Duration.ofMillis(500))
                .timeout(Duration.ofSeconds(1)).build();
        EmbeddedChannel ch = channel(monitor.newHandler(cfg));
        List<Long> pingedAt = new ArrayList<>();
        long lastAnswer = 0;
        for (long ms = 1; ms <= 10_000; ms++) {
            advance(1);
            if (ch.readOutbound() != null) {
                pingedAt.add(ms);
                long silence = ms - lastAnswer;
                assertTrue(silence >= 500 && silence <= 500 + LATE, "pinged after " + silence + " ms of silence");
                ch.writeInbound("PONG"); // answers at once
                lastAnswer = ms;
            }
        }
        assertTrue(pingedAt.size() >= 19, "a ping every ~500 ms: " + pingedAt);
    }

    // ------------------------------------------------------------------ 6. a failed ping is counted failed, not missed
    // (and, fail closed, a peer that stays silent after it is closed all the same: issue 26, item 16)

    /** Fails every write toward the head, as an encoder that cannot encode the message would. */
    static final class FailingEncoder extends ChannelOutboundHandlerAdapter {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            promise.setFailure(new EncoderException("cannot encode " + msg));
        }
    }

    @Test
    void aPingThatCannotBeWrittenIsCountedFailedNotMissed() {
        HeartbeatConfig cfg = HeartbeatConfig.ping(c -> "PING").interval(Duration.ofSeconds(10))
                .timeout(Duration.ofSeconds(2)).maxMissedPings(2).build();
        EmbeddedChannel ch = channel(new FailingEncoder(), monitor.newHandler(cfg));
        live(10_000 + 2 * 2_000 - 1);
        assertTrue(ch.isOpen(), "never before interval + maxMissedPings x timeout");
        live(LATE);
        assertFalse(ch.isOpen(), "a silent peer is closed though no ping could be written");
        HeartbeatStats stats = monitor.stats();
        assertEquals(0, stats.pingsSent());
        assertEquals(2, stats.pingWriteFailures(), "failed ping writes counted");
        assertEquals(new ProbeStats("custom", 0, 0, 0, 2), stats.pings("custom"), "failed, not missed");
        assertEquals(1, stats.closedPingTimeout());
    }

    @Test
    void aThrowingPingFactoryIsCountedFailedNotMissed() {
        Recorder r = new Recorder();
        HeartbeatConfig cfg = HeartbeatConfig.ping(c -> {
            throw new IllegalStateException("no ping");
        }).interval(Duration.ofSeconds(10)).timeout(Duration.ofSeconds(2)).maxMissedPings(1).build();
        EmbeddedChannel ch = channel(monitor.newHandler(cfg), r);
        live(10_000 + 2_000 - 1);
        assertTrue(ch.isOpen());
        live(LATE);
        assertFalse(ch.isOpen(), "a silent peer is closed though the factory threw");
        assertEquals(1, monitor.stats().pingWriteFailures());
        assertEquals(1, monitor.stats().closedPingTimeout());
        assertFalse(r.errors.isEmpty(), "the factory's exception reaches the pipeline");
    }

    // ------------------------------------------------------------------ 7. a coarse tick is not a stall

    @Test
    void aCoarseTickIsNotMistakenForAStall() {
        HeartbeatMonitor m = HeartbeatMonitor.builder().manual().ticker(ticker).tick(Duration.ofNanos(1L << 30))
                .maxCoalescing(Duration.ZERO).build();
        cleanups.add(m);
        Recorder r = new Recorder();
        EmbeddedChannel ch = new EmbeddedChannel(m.newHandler(events(5_000, 0, 0)), r);
        channels.add(ch);
        long firstAt = -1;
        for (long ms = 1; ms <= 8_000 && firstAt < 0; ms++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            m.runOnce();
            ch.runPendingTasks();
            if (!r.events.isEmpty()) {
                firstAt = ms;
            }
        }
        long bound = 5_000 + TimeUnit.NANOSECONDS.toMillis(1L << 30) + LATE;
        assertTrue(firstAt >= 5_000 && firstAt <= bound, "first event at " + firstAt + " ms, bound " + bound);
        assertEquals(0, m.stats().stallRechecks());
    }

    // ------------------------------------------------------------------ 8. no retention through the batch

    @Test
    void aLiveChannelDoesNotKeepClosedChannelsReachable() throws Exception {
        DefaultEventLoop loop = new DefaultEventLoop();
        DefaultEventLoop clientLoop = new DefaultEventLoop();
        cleanups.add(() -> {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        });
        BlockingQueue<Channel> accepted = new LinkedBlockingQueue<>();
        AtomicInteger created = new AtomicInteger();
        HeartbeatConfig close = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(1)).build();
        HeartbeatConfig watch = events(1000, 0, 0);
        Channel server = new ServerBootstrap().group(loop, loop).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        boolean keep = created.getAndIncrement() % 10 == 0; // interleaved in the batch
                        ch.pipeline().addLast(monitor.newHandler(keep ? watch : close), new Recorder());
                        accepted.add(ch);
                    }
                }).bind(LocalAddress.ANY).syncUninterruptibly().channel();
        List<WeakReference<Channel>> dead = new ArrayList<>();
        List<Channel> live = new ArrayList<>();
        List<Channel> clients = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            clients.add(new Bootstrap().group(clientLoop).channel(LocalChannel.class)
                    .handler(new ChannelInboundHandlerAdapter())
                    .connect(server.localAddress()).syncUninterruptibly().channel());
            Channel child = accepted.poll(10, TimeUnit.SECONDS);
            assertNotNull(child);
            if (i % 10 == 0) {
                live.add(child);
            } else {
                dead.add(new WeakReference<>(child));
            }
        }
        loop.submit(() -> { }).syncUninterruptibly();
        for (int ms = 0; ms < 1_010; ms++) { // one mass idle close; the live channel is judged with them
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
        loop.submit(() -> { }).syncUninterruptibly();
        clientLoop.submit(() -> { }).syncUninterruptibly();
        loop.submit(() -> { }).syncUninterruptibly();
        accepted.clear();
        loop.submit(() -> { }).syncUninterruptibly();
        monitor.runOnce(); // applies the closed channels' cancel requests: the worker's queue lets go of them
        assertTrue(live.stream().allMatch(Channel::isOpen), "the watched channels stay");
        for (int attempt = 0; attempt < 20 && dead.stream().anyMatch(w -> w.get() != null); attempt++) {
            System.gc();
            Thread.sleep(20); // waits for the collector, not for a timer
        }
        long reachable = dead.stream().filter(w -> w.get() != null).count();
        assertEquals(0, reachable, "closed channels still reachable through the live handler's batch link");
        for (Channel c : live) {
            c.close().syncUninterruptibly();
        }
        for (Channel c : clients) { // every close settled before the loops shut down (no warnings)
            c.close().syncUninterruptibly(); // closed by its peer already, or now: never waits forever
        }
        loop.submit(() -> { }).syncUninterruptibly();
        clientLoop.submit(() -> { }).syncUninterruptibly();
        server.close().syncUninterruptibly();
    }

    // ------------------------------------------------------------------ 9. one handler, one channel

    @Test
    void addingTheHandlerToASecondPipelineLeavesTheFirstChannelMonitored() {
        Recorder r = new Recorder();
        ChannelHandler handler = monitor.newHandler(events(1000, 0, 0));
        channel(handler, r);
        EmbeddedChannel second = channel();
        second.pipeline().addLast(handler);
        ChannelPipelineException e = assertThrows(ChannelPipelineException.class, second::checkException);
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(1, monitor.stats().channels());
        advance(1000 + LATE);
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), r.events, "the first channel is still watched");
    }

    // ------------------------------------------------------------------ 10. event loops are forgotten

    @Test
    void theMonitorForgetsEventLoopsItNoLongerUses() {
        for (int i = 0; i < 2_000; i++) {
            EmbeddedChannel ch = new EmbeddedChannel(monitor.newHandler(
                    HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMillis(10)).build()));
            advance(0);
            for (int ms = 0; ms < 12; ms++) {
                ticker.advance(1, TimeUnit.MILLISECONDS);
                monitor.runOnce();
            }
            ch.runPendingTasks();
            assertFalse(ch.isOpen());
            ch.finishAndReleaseAll();
        }
        assertTrue(monitor.engine.eventLoopBatches() <= EventLoopBatches.MIN_CAPACITY * 2,
                "event loop batches remembered: " + monitor.engine.eventLoopBatches());
    }

    // ------------------------------------------------------------------ 11. runOnce from any thread

    @Test
    void runOnceFromAnotherThreadKeepsWatchingTheChannel() throws Exception {
        Recorder r = new Recorder();
        channel(monitor.newHandler(events(1000, 0, 0)), r);
        advance(500);
        Thread other = new Thread(() -> advanceWorkerOnly(2_000));
        other.start();
        other.join();
        runEventLoops();
        assertEquals(List.of(FIRST_READER_IDLE_STATE_EVENT), r.events, "the verdicts at 1 s and 2 s, merged");
        assertEquals(1, monitor.stats().timer().entries(), "the entry stays in the wheel");
        assertEquals(0, monitor.stats().timer().callbackFailures());
        advance(1_000);
        assertEquals(2, r.events.size(), "and the main thread drives it on: " + r.events);
    }

    private void advanceWorkerOnly(long millis) {
        for (long i = 0; i < millis; i++) {
            ticker.advance(1, TimeUnit.MILLISECONDS);
            monitor.runOnce();
        }
    }

    // ------------------------------------------------------------------ 12. reconfigure on the handler's executor

    @Test
    @SuppressWarnings("deprecation") // addLast(group, ...) is deprecated in Netty 4.2, and still what users call
    void reconfigureRunsOnTheExecutorTheHandlerWasAddedWith() throws Exception {
        DefaultEventLoop handlerLoop = new DefaultEventLoop();
        cleanups.add(() -> handlerLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly());
        EmbeddedChannel ch = channel();
        ch.pipeline().addLast(handlerLoop, "idle", monitor.newHandler(events(1000, 0, 0)));
        handlerLoop.submit(() -> { }).syncUninterruptibly();
        CountDownLatch release = new CountDownLatch(1);
        handlerLoop.execute(() -> { // the handler's executor is busy
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertTrue(monitor.reconfigure(ch, events(2000, 0, 0)));
            assertEquals(Duration.ofSeconds(1), monitor.configOf(ch).readerIdle(),
                    "not applied on the calling thread (the channel's event loop is not the handler's)");
        } finally {
            release.countDown(); // a failing assertion must not leave the executor blocked for the cleanup
        }
        handlerLoop.submit(() -> { }).syncUninterruptibly();
        assertEquals(Duration.ofSeconds(2), monitor.configOf(ch).readerIdle(), "applied on the handler's executor");
    }

    // ------------------------------------------------------------------ 13, 14. configuration errors

    @Test
    void aBuilderWithNoTimeoutIsRefused() {
        IllegalStateException events = assertThrows(IllegalStateException.class,
                () -> HeartbeatConfig.events().build());
        assertTrue(events.getMessage().contains("readerIdle, writerIdle or allIdle"), events.getMessage());
        assertThrows(IllegalStateException.class, () -> HeartbeatConfig.closeWhenIdle().build());
        assertThrows(IllegalStateException.class,
                () -> HeartbeatConfig.closeWhenIdle().withTimeoutExceptions().build());
    }

    @Test
    void theDropInOverloadTakesWhatIdleStateHandlerTakes() {
        HeartbeatConfig huge = HeartbeatConfig.events(false, Long.MAX_VALUE, 0, 0, TimeUnit.DAYS);
        assertEquals(HeartbeatConfig.MAX_TIMEOUT, huge.readerIdle(), "saturated, as documented");
        HeartbeatConfig negative = HeartbeatConfig.events(false, -1, 5, -7, TimeUnit.SECONDS);
        assertEquals(Duration.ZERO, negative.readerIdle(), "negative disables, as in IdleStateHandler");
        assertEquals(Duration.ofSeconds(5), negative.writerIdle());
        assertEquals(Duration.ZERO, negative.allIdle());
        HeartbeatConfig tiny = HeartbeatConfig.events(false, 1, 0, 0, TimeUnit.NANOSECONDS);
        assertEquals(HeartbeatConfig.MIN_TIMEOUT, tiny.readerIdle(), "raised to 1 ms, as in IdleStateHandler");
        HeartbeatConfig none = HeartbeatConfig.events(false, 0, 0, 0, TimeUnit.SECONDS);
        assertEquals(Duration.ZERO, none.readerIdle(), "IdleStateHandler(0, 0, 0) is valid and tracks nothing");
        HeartbeatMonitor.Builder b = HeartbeatMonitor.builder();
        b.stallThreshold(Duration.ofSeconds(Long.MAX_VALUE)); // no ArithmeticException: means never
        IllegalArgumentException tooLong = assertThrows(IllegalArgumentException.class,
                () -> HeartbeatConfig.events().readerIdle(Duration.ofSeconds(Long.MAX_VALUE)));
        assertTrue(tooLong.getMessage().startsWith("readerIdle must be at most"), tooLong.getMessage());
    }

    // ------------------------------------------------------------------ 15. closed monitor, closed channel

    @Test
    void aHandlerActivatedAfterTheMonitorClosedIsCountedAndWarnedOnce() {
        ChannelHandler a = monitor.newHandler(events(1000, 0, 0));
        ChannelHandler b = monitor.newHandler(events(1000, 0, 0));
        monitor.close();
        channel(a);
        channel(b);
        assertEquals(2, monitor.stats().unmonitoredChannels());
        assertTrue(monitor.engine.warnedUnmonitored());
    }

    @Test
    void reconfigureOnAClosedMonitorFailsLoudly() {
        EmbeddedChannel ch = channel(monitor.newHandler(events(1000, 0, 0)));
        monitor.close();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> monitor.reconfigure(ch, events(2000, 0, 0)));
        assertEquals("this HeartbeatMonitor is closed", e.getMessage());
    }

    @Test
    void reconfigureOnAClosedChannelReturnsFalse() {
        EmbeddedChannel ch = channel(monitor.newHandler(events(1000, 0, 0)));
        assertTrue(monitor.reconfigure(ch, events(2000, 0, 0)));
        ch.close();
        assertFalse(monitor.reconfigure(ch, events(3000, 0, 0)), "documented: false for a closed channel");
    }

    @Test
    void twoHeartbeatHandlersAreReconfiguredByName() {
        Recorder r = new Recorder();
        EmbeddedChannel ch = channel();
        ch.pipeline().addLast("login", monitor.newHandler(
                HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofSeconds(10)).build()));
        ch.pipeline().addLast("idle", monitor.newHandler(events(0, 0, 60_000)));
        ch.pipeline().addLast(r);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> monitor.reconfigure(ch, events(1, 0, 0)));
        assertTrue(e.getMessage().contains("name one"), e.getMessage());
        assertTrue(monitor.reconfigure(ch, "login", HeartbeatConfig.closeWhenIdle()
                .readerIdle(Duration.ofMinutes(5)).build()));
        assertEquals(Duration.ofMinutes(5), monitor.configOf(ch, "login").readerIdle());
        assertEquals(Duration.ofSeconds(60), monitor.configOf(ch, "idle").allIdle());
        assertThrows(IllegalArgumentException.class, () -> monitor.configOf(ch, "nope"));
    }

    // ------------------------------------------------------------------ 16. resetReadTimeout / resetWriteTimeout

    @Test
    void resetReadAndWriteTimeoutPostponeTheirEvents() {
        Recorder r = new Recorder();
        EmbeddedChannel ch = channel(monitor.newHandler(events(1000, 1000, 0)), r);
        advance(900);
        monitor.resetReadTimeout(ch);
        monitor.resetWriteTimeout(ch);
        advance(100 + LATE);
        assertTrue(r.events.isEmpty(), "both reset at 900 ms: " + r.events);
        advance(896);
        assertTrue(r.events.isEmpty());
        advance(1 + LATE);
        assertEquals(2, r.events.size(), "both fire at 1.9 s: " + r.events);
        assertSame(FIRST_READER_IDLE_STATE_EVENT, r.events.get(0));
    }

    // ------------------------------------------------------------------ the interaction model's seed 19976

    /**
     * Idleness is measured afresh from a reconfiguration: a tracked write that a flush completed unseen (one that
     * did not pass the handler) while a configuration that tracks no writes was in force is no activity after a
     * switch back to one that does. It was: the first close verdict settled the write's promise then, stamped it,
     * and found the channel busy (the interaction model, seed 19976: an all-idle close 70 ms late).
     */
    @Test
    void aWriteCompletedUnseenBeforeAReconfigurationIsNoLaterActivity() {
        HeartbeatConfig tracking = HeartbeatConfig.closeWhenIdle().allIdle(Duration.ofMillis(70)).build();
        HeartbeatConfig notTracking = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(10)).build();
        ChannelOutboundHandlerAdapter front = new ChannelOutboundHandlerAdapter();
        EmbeddedChannel ch = channel(front, monitor.newHandler(tracking));
        advance(10);
        ch.write("OUT"); // tracked; not flushed, so its promise waits
        monitor.reconfigure(ch, notTracking);
        ch.pipeline().context(front).flush(); // completes the write without passing Heartbeat
        advance(10);
        monitor.reconfigure(ch, tracking);
        long ms = 0;
        while (ch.isOpen() && ms < 300) {
            advance(1);
            ms++;
        }
        assertFalse(ch.isOpen(), "still open 300 ms after the switch");
        assertTrue(ms <= 70 + LATE, "closed " + ms + " ms after the switch to a 70 ms all-idle close");
        assertTrue(ms >= 70, "closed " + ms + " ms after the switch: early");
    }
}
