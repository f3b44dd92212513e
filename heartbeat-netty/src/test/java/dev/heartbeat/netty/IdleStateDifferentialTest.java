/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import dev.heartbeat.core.ManualTicker;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.handler.timeout.VirtualTimeIdleStateHandler;
import io.netty.util.Version;
import org.junit.jupiter.api.Test;

/**
 * Differential test of the event policy against Netty's {@link IdleStateHandler}: random traces of
 * reads, writes and time run through both, each on its own {@link EmbeddedChannel}, in one virtual
 * time; each must fire the same {@link IdleStateEvent}s, Heartbeat at most one tick (plus the 1 ms
 * step of the virtual clock) after {@code IdleStateHandler} and never before.
 *
 * <p><b>Why the comparison is exact.</b> Heartbeat decides an event as of the check time
 * {@code IdleStateHandler} would run its timeout task, but looks at the stamps up to a tick later
 * (when the wheel hands the channel to the worker). Activity in that gap would be seen by one and
 * not the other, a legitimate difference. So the trace generator learns every check time from
 * {@code IdleStateHandler} itself (each timeout task reschedules through a hook, see
 * {@link VirtualTimeIdleStateHandler}): the first check of each enabled kind, the re-checks after
 * activity ({@code lastActivity + timeout}), and the periodic subsequent checks every timeout while
 * idle. It places activity (any of the operations below) only at least {@value #GUARD_MS} ms, more
 * than two ticks, after every check time; activity just before a check is allowed, since both
 * then see it. Activity that cannot be placed (a timeout below 4 ms checks too often) is dropped.
 *
 * <p><b>What is compared.</b> Per kind (reader, writer, all), the sequences of events must be
 * equal, pair by pair, with {@code 0 <= heartbeatTime - nettyTime <= tick + step}. Events of
 * different kinds are compared per kind, because Heartbeat fires all the kinds due in one worker
 * cycle together (in IdleStateHandler's order), where IdleStateHandler may fire them a ms apart. An event
 * {@code IdleStateHandler} fired in the last {@code tick + step} of a trace may still be on its way
 * from Heartbeat and is not required. With observeOutput, an idle writer check and an idle all check
 * at the same time share the "did the outbound buffer change" state, so which one is suppressed
 * depends on their order; Heartbeat replays IdleStateHandler's task order for them, and every trace
 * is compared in full. {@code -Dheartbeat.strictOutputOrder=false} falls back to comparing only the
 * reader events of traces where that order matters (see {@link Trace#outputCheckOrderDiffers()}).
 *
 * <p>Timeouts are 0 (disabled) or 3 to 200 ms. Below 3 ms a tick plus the 1 ms step of the virtual
 * clock reach a whole timeout, which Heartbeat rightly treats as a stalled worker: it takes the check
 * as of its own time instead of the due time, and the cadence no longer matches.
 *
 * <p>Operations: inbound read batch ({@code writeInbound} of 1-3 messages), a read batch left open
 * ({@code writeOneInbound}) and closed later ({@code flushInbound}), write and flush, write without
 * flush, flush alone (writes of 0-3 bytes, some with the void promise), time advances, and new
 * settings mid-trace ({@code monitor.reconfigure} against a new {@code IdleStateHandler} in place of
 * the old one; see {@link Trace#reconfigure()}). In half the traces the peer stops reading and reads
 * again ({@link PeerChannel}): meanwhile flushed writes wait in the outbound buffer uncompleted, as on a
 * socket whose peer reads nothing, so a write (with the void promise too) counts only when it
 * completes, as {@code IdleStateHandler} counts it. One trace in eight closes the channel from the
 * user's handler on the first idle event, as a typical user does: both must deliver that one event
 * and no other, which checks that Heartbeat fires the kinds due together in {@code IdleStateHandler}'s
 * task order (see {@link CheckOrder}). Clocks start anywhere: near {@code Long.MAX_VALUE} (wrapping),
 * near {@code Long.MIN_VALUE}, just below zero, or at random.
 *
 * <p>Properties: {@code -Dheartbeat.seed=N} replays a whole run, {@code -Dheartbeat.trace=N} one
 * trace (its seed is in the failure message), {@code -Dheartbeat.traces=N} sets how many traces run.
 */
class IdleStateDifferentialTest {

    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    /** The monitor's wheel tick (the default, set explicitly). */
    private static final long TICK_NANOS = 1L << 20;
    /** Heartbeat acts within a tick of the deadline; the virtual clock runs it at the next whole ms. */
    private static final long MAX_LATE_MS = (TICK_NANOS + MS) / MS;
    /** Activity happens at least this long after every check time: more than two ticks. */
    private static final long GUARD_MS = 3;
    private static final int TRACES = Integer.getInteger("heartbeat.traces", 10_000);
    /** Also compare writer and all events where the order of their output checks is known to differ. */
    private static final boolean STRICT_OUTPUT_ORDER =
            Boolean.parseBoolean(System.getProperty("heartbeat.strictOutputOrder", "true"));
    private static final IdleState[] KINDS = {IdleState.READER_IDLE, IdleState.WRITER_IDLE, IdleState.ALL_IDLE};
    /** The name of IdleStateHandler in its pipeline. */
    private static final String IDLE = "idle";

    /**
     * Traces that once differed, replayed on every run (their seeds name them only as long as the
     * trace generator stays as it is). Both have a check that finds the channel busy and is due again
     * before the worker gets to it, so one expiry runs that kind twice: in the first, the reader
     * re-check (10, 11 ms) must come before the writer check (12 ms), whose event the user would
     * close on; in the second, the reader re-check ties with the writer check (19 ms) and must come
     * after it, as the reader task was rescheduled last.
     */
    @Test
    void tracesThatOnceDifferedStillMatch() {
        for (long seed : new long[] {-7954457786119283368L, -6681771001652963219L}) {
            String failure = new Trace(seed, false).run();
            if (failure != null) {
                fail("trace seed " + seed + ":\n" + failure);
            }
        }
    }

    @Test
    void heartbeatFiresWhatIdleStateHandlerFires() {
        Version handler = Version.identify().get("netty-handler");
        String netty = handler == null ? "?" : handler.artifactVersion();
        String single = System.getProperty("heartbeat.trace");
        if (single != null) {
            String failure = new Trace(Long.parseLong(single.trim())).run();
            if (failure != null) {
                fail("Netty " + netty + ", trace seed " + single + ":\n" + failure);
            }
            return;
        }
        String seedProperty = System.getProperty("heartbeat.seed");
        long seed = seedProperty != null ? Long.parseLong(seedProperty.trim()) : new SplittableRandom().nextLong();
        System.out.printf(Locale.ROOT, "IdleStateDifferentialTest: Netty %s, seed %d (replay: -Dheartbeat.seed=%d)%n",
                netty, seed, seed);
        SplittableRandom seeds = new SplittableRandom(seed);
        long started = System.nanoTime();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long cpuStarted = threads.getCurrentThreadCpuTime();
        long events = 0;
        long droppedOps = 0;
        long ops = 0;
        long virtualMs = 0;
        int fullyCompared = 0;
        int reconfigured = 0;
        int closedOnFirst = 0;
        int belowZero = 0;
        int peerStopped = 0;
        int i = 0;
        for (; fullyCompared < TRACES; i++) {
            long traceSeed = seeds.nextLong();
            Trace trace = new Trace(traceSeed);
            String failure = trace.run();
            if (failure != null) {
                fail(String.format(Locale.ROOT, "Heartbeat and IdleStateHandler differ (Netty %s) in trace %d of run "
                        + "seed %d;%nreplay the run with -Dheartbeat.seed=%d, this trace alone with "
                        + "-Dheartbeat.trace=%d%n%s", netty, i, seed, seed, traceSeed, failure));
            }
            if (!trace.readerOnly) {
                fullyCompared++;
            }
            events += trace.nettyEvents.size();
            ops += trace.ops;
            droppedOps += trace.droppedOps;
            virtualMs += trace.nowMs;
            reconfigured += trace.reconfigures > 0 ? 1 : 0;
            closedOnFirst += trace.closeOnFirstEvent && !trace.nettyEvents.isEmpty() ? 1 : 0;
            belowZero += trace.tickerStart < 0 || trace.tickerStart > Long.MAX_VALUE - 3_000 * MS ? 1 : 0;
            peerStopped += trace.peerStops > 0 ? 1 : 0;
        }
        System.out.printf(Locale.ROOT, "IdleStateDifferentialTest: %d traces (%d compared in full, %d for the reader "
                + "only: observeOutput with coinciding writer and all checks), %d events, %d operations (%d dropped "
                + "near checks), %d s virtual, in %d ms (%d ms CPU); %d traces reconfigured mid-trace, %d closed by "
                + "the user on the first event, %d with the clock below zero, %d with a peer that stopped reading%n",
                i, fullyCompared, i - fullyCompared,
                events, ops, droppedOps, virtualMs / 1000, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started),
                TimeUnit.NANOSECONDS.toMillis(threads.getCurrentThreadCpuTime() - cpuStarted), reconfigured,
                closedOnFirst, belowZero, peerStopped);
    }

    /** An idle event and the virtual time (ms since the trace began) it reached the end of the pipeline. */
    private record Fired(IdleStateEvent event, long atMs) {
        @Override
        public String toString() {
            return atMs + " ms " + (event.isFirst() ? "FIRST_" : "") + event.state();
        }
    }

    /** An idle writer or all check of IdleStateHandler; afterChange: an unflushed write came before it. */
    private record OutputCheck(IdleState kind, long atMs, boolean afterChange) {
        @Override
        public String toString() {
            return atMs + " ms " + kind + (afterChange ? " (buffer changed)" : "");
        }
    }

    /** Records the idle events that reach the end of a pipeline, with the virtual time. */
    private static final class Recorder extends ChannelInboundHandlerAdapter {
        private final List<Fired> fired;
        private final LongSupplier nowMs;
        private final boolean closeOnFirst;
        private final List<Throwable> errors = new ArrayList<>();
        /** While set, each message read is answered (a write of 1 B) and the answers flushed as the batch ends. */
        boolean answering;
        private boolean answerWritten;

        Recorder(List<Fired> fired, LongSupplier nowMs, boolean closeOnFirst) {
            this.fired = fired;
            this.nowMs = nowMs;
            this.closeOnFirst = closeOnFirst;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent e) {
                fired.add(new Fired(e, nowMs.getAsLong()));
                if (closeOnFirst) {
                    ctx.close();
                }
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (answering) {
                ctx.write(Unpooled.buffer(1).writeZero(1));
                answerWritten = true;
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (answerWritten) {
                answerWritten = false;
                ctx.flush();
            }
            ctx.fireChannelReadComplete();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!(closeOnFirst && cause instanceof ClosedChannelException)) { // a pending void-promise write failed
                errors.add(cause);
            }
        }
    }

    /** One random trace, run through both handlers. */
    private static final class Trace {
        private final long seed;
        private final SplittableRandom rnd;
        private long readerMs;
        private long writerMs;
        private long allMs;
        private boolean observeOutput;
        /** Both recorders close the channel on the first idle event, as a typical user handler does. */
        private final boolean closeOnFirstEvent;
        private final long tickerStart;
        private final long tickPhase;

        private final List<Fired> nettyEvents = new ArrayList<>();
        private final List<Fired> heartbeatEvents = new ArrayList<>();
        /** The times (ms) at which IdleStateHandler runs, or will run, a check. */
        private final BitSet checks = new BitSet();
        /** The writer and all checks IdleStateHandler ran and found idle, in the order it ran them. */
        private final List<OutputCheck> idleOutputChecks = new ArrayList<>();
        /** An unflushed write changed the outbound buffer since the last idle writer or all check. */
        private boolean outputChanged;
        /** Both handlers are in place: later schedules are checks rescheduling themselves. */
        private boolean started;
        private final StringBuilder log = new StringBuilder();
        /** Virtual time, ms since the trace began. */
        private long nowMs;
        /** Netty's clock at the trace's start. */
        private long nettyBase;
        private int reconfigures;
        private boolean readOpen;
        /** A write waits for a flush: its completion would stamp the old IdleStateHandler, not a new one. */
        private boolean unflushed;
        /** Only reader events were compared: see {@link #outputCheckOrderDiffers()}. */
        private boolean readerOnly;
        private int ops;
        private int droppedOps;
        private String harnessError;
        private ManualTicker ticker;
        private HeartbeatMonitor monitor;
        /** The channel of IdleStateHandler. */
        private PeerChannel netty;
        private Recorder nettyRecorder;
        private Recorder heartbeatRecorder;
        /** The channel of Heartbeat's handler. */
        private PeerChannel heartbeat;
        /**
         * The peer's reading, drawn from a stream of its own so that the operations drawn from
         * {@link #rnd} stay those of the seed; null for a peer that always reads.
         */
        private final SplittableRandom peer;
        /** Flushed writes wait in the outbound buffers: the peer stopped reading. */
        private boolean pending;
        private int peerStops;

        Trace(long seed) {
            this(seed, true);
        }

        /** A trace; {@code stallingPeer}: its peer may stop reading (for half the seeds), else it always reads. */
        Trace(long seed, boolean stallingPeer) {
            this.seed = seed;
            this.rnd = new SplittableRandom(seed);
            SplittableRandom peerRnd = new SplittableRandom(~seed);
            this.peer = stallingPeer && peerRnd.nextBoolean() ? peerRnd : null;
            long r;
            long w;
            long a;
            do {
                r = timeout();
                w = timeout();
                a = timeout();
            } while (r == 0 && w == 0 && a == 0);
            readerMs = r;
            writerMs = w;
            allMs = a;
            observeOutput = (w > 0 || a > 0) && rnd.nextBoolean(); // only writer and all idleness observe output
            closeOnFirstEvent = rnd.nextInt(8) == 0;
            switch (rnd.nextInt(6)) {
                case 0: tickerStart = Long.MAX_VALUE - rnd.nextLong(3_000 * MS); break; // wraps to negative
                case 1: tickerStart = Long.MIN_VALUE + rnd.nextLong(3_000 * MS); break; // the most negative
                case 2: tickerStart = -rnd.nextLong(3_000 * MS); break;                 // crosses zero
                default: tickerStart = rnd.nextLong(); break;
            }
            tickPhase = rnd.nextLong(TICK_NANOS);
        }

        /** The longest timeout in force (at least 1 ms, so time still moves after a reconfigure to nothing). */
        private long maxMs() {
            return Math.max(1, Math.max(readerMs, Math.max(writerMs, allMs)));
        }

        private long timeout() {
            int p = rnd.nextInt(100);
            if (p < 30) {
                return 0;
            }
            if (p < 37) {
                return 3L + rnd.nextInt(5); // 3..7 ms: few or no windows for activity while idle
            }
            if (p < 87) {
                return 8L + rnd.nextInt(53); // 8..60 ms
            }
            return 61L + rnd.nextInt(140); // 61..200 ms: the wheel's second level
        }

        String run() {
            ticker = new ManualTicker(tickerStart);
            monitor = HeartbeatMonitor.builder().manual().ticker(ticker).tick(Duration.ofNanos(TICK_NANOS))
                    .maxCoalescing(Duration.ZERO) // exact delivery: within a tick of IdleStateHandler
                    .build();
            ticker.advance(tickPhase); // the trace starts anywhere within a wheel tick

            netty = new PeerChannel();
            netty.freezeTime(); // before the handler is added, so it starts at a whole virtual ms
            long nettyBase = TimeUnit.SECONDS.toNanos(1); // Netty 4.1's clock (ticksInNanos); 4.2 reads the loop's
            nettyRecorder = new Recorder(nettyEvents, () -> nowMs, closeOnFirstEvent);
            netty.pipeline().addLast(IDLE, nettyHandler(nettyBase)).addLast(nettyRecorder);

            heartbeat = new PeerChannel();
            heartbeatRecorder = new Recorder(heartbeatEvents, () -> nowMs, closeOnFirstEvent);
            heartbeat.pipeline().addLast(monitor.newHandler(HeartbeatConfig.events(observeOutput, readerMs, writerMs,
                    allMs, TimeUnit.MILLISECONDS)), heartbeatRecorder);
            this.nettyBase = nettyBase;
            started = true;
            try {
                int count = 5 + rnd.nextInt(40);
                for (int i = 0; i < count && nowMs < 1_000; i++) {
                    operation(maxMs());
                }
                advance(rnd.nextLong(maxMs() + 1));
                if (harnessError != null) {
                    return describe(harnessError);
                }
                List<Throwable> errors = new ArrayList<>(nettyRecorder.errors);
                errors.addAll(heartbeatRecorder.errors);
                if (!errors.isEmpty()) {
                    return describe("exceptions reached the end of a pipeline: " + errors);
                }
                String diff = compare();
                return diff == null ? null : describe(diff);
            } finally {
                netty.finishAndReleaseAll();
                heartbeat.finishAndReleaseAll();
                monitor.close();
            }
        }

        private VirtualTimeIdleStateHandler nettyHandler(long base) {
            return new VirtualTimeIdleStateHandler(observeOutput, readerMs, writerMs, allMs, TimeUnit.MILLISECONDS,
                    () -> base + nowMs * MS, this::checkScheduled);
        }

        /**
         * New settings mid-trace: Heartbeat's {@code reconfigure}, and for IdleStateHandler what a user
         * of it does, a new handler in its place (which starts measuring from now, as reconfigure does).
         * Only between read batches and with nothing left unflushed or pending: a new IdleStateHandler
         * does not know a batch is open, and a write that completes later stamps the handler it passed
         * through (the old one), while Heartbeat's one handler rightly counts it.
         */
        private String reconfigure() {
            long r;
            long w;
            long a;
            do {
                r = timeout();
                w = timeout();
                a = timeout();
            } while (r == 0 && w == 0 && a == 0 && rnd.nextInt(8) != 0); // rarely: to nothing at all
            readerMs = r;
            writerMs = w;
            allMs = a;
            observeOutput = (w > 0 || a > 0) && rnd.nextBoolean();
            outputChanged = false; // the new IdleStateHandler takes the buffer as it is
            reconfigures++;
            netty.pipeline().replace(IDLE, IDLE, nettyHandler(nettyBase));
            monitor.reconfigure(heartbeat, HeartbeatConfig.events(observeOutput, readerMs, writerMs, allMs,
                    TimeUnit.MILLISECONDS));
            return String.format(Locale.ROOT, "reconfigure: readerIdle=%d ms, writerIdle=%d ms, allIdle=%d ms, "
                    + "observeOutput=%s", readerMs, writerMs, allMs, observeOutput);
        }

        private void checkScheduled(IdleState state, long delayNanos) {
            long at = nowMs * MS + delayNanos;
            if (at % MS != 0 && harnessError == null) {
                harnessError = "harness: IdleStateHandler scheduled a " + state + " check off the ms grid: +"
                        + delayNanos + " ns at " + nowMs + " ms (is its clock virtual?)";
            }
            checks.set((int) (at / MS));
            // A check reschedules itself a whole timeout ahead only if it found the channel idle (it
            // cannot have seen activity at its own time, see quiet(); reader and all see an open read
            // batch as activity).
            if (started && ((state == IdleState.WRITER_IDLE && delayNanos == writerMs * MS)
                    || (state == IdleState.ALL_IDLE && delayNanos == allMs * MS && !readOpen))) {
                idleOutputChecks.add(new OutputCheck(state, nowMs, outputChanged));
                outputChanged = false; // that check took note of the buffer
            }
        }

        /**
         * Whether, with observeOutput, IdleStateHandler ran an idle all check that found the outbound
         * buffer changed by an unflushed write, then within a tick an idle writer check. Each idle
         * writer or all check asks whether the buffer changed since the last one asked (state the two
         * kinds share), so the first to ask takes the change: its event is suppressed if it is not a
         * first one. IdleStateHandler asks in the order its tasks run (due time, then the order they
         * were scheduled); Heartbeat asks writer, then all, for the kinds due in one worker cycle, so
         * it may reverse the order and suppress the writer event where IdleStateHandler suppresses the
         * all event (a completed write needs no such care: it makes both next events first ones).
         */
        boolean outputCheckOrderDiffers() {
            if (!observeOutput || writerMs == 0 || allMs == 0) {
                return false;
            }
            for (int i = 0; i < idleOutputChecks.size(); i++) {
                OutputCheck all = idleOutputChecks.get(i);
                if (all.kind != IdleState.ALL_IDLE || !all.afterChange) {
                    continue;
                }
                for (int j = i + 1; j < idleOutputChecks.size(); j++) {
                    OutputCheck writer = idleOutputChecks.get(j);
                    if (writer.atMs - all.atMs > MAX_LATE_MS) {
                        break;
                    }
                    if (writer.kind == IdleState.WRITER_IDLE) {
                        return true;
                    }
                }
            }
            return false;
        }

        private void operation(long maxMs) {
            int p = rnd.nextInt(100);
            if (p < 35 || !netty.isOpen() || !heartbeat.isOpen()) { // a closed channel only sees time pass
                long ms;
                int q = rnd.nextInt(100);
                if (q < 45) {
                    ms = 1L + rnd.nextInt(5);
                } else if (q < 85) {
                    ms = 1 + rnd.nextLong(maxMs);
                } else {
                    ms = maxMs + rnd.nextLong(maxMs + 1); // a few subsequent events
                }
                advance(ms);
                return;
            }
            ops++;
            // Activity only where both handlers see it alike: not within GUARD_MS after a check.
            long waited = 0;
            while (!quiet() && waited < 2 * maxMs + GUARD_MS) {
                step();
                waited++;
            }
            if (!netty.isOpen() || !heartbeat.isOpen()) {
                return; // closed by a user on an idle event while waiting
            }
            if (waited > 0) {
                logAt().append("(waited ").append(waited).append(" ms: a check was due within ").append(GUARD_MS)
                        .append(" ms)\n");
            }
            if (!quiet()) {
                droppedOps++;
                logAt().append("(dropped an operation: no quiet time)\n");
                return;
            }
            if (peer != null && !unflushed && peer.nextInt(6) == 0) {
                logAt().append(togglePeer()).append('\n');
                return;
            }
            String what;
            if (p >= 97 && !readOpen && !unflushed && !pending) {
                what = reconfigure();
            } else if (p < 52) {
                int n = 1 + rnd.nextInt(3);
                Object[] msgs = new Object[n];
                for (int i = 0; i < n; i++) {
                    msgs[i] = i;
                }
                boolean answered = rnd.nextInt(3) == 0; // a request answered as its batch ends
                nettyRecorder.answering = answered;
                heartbeatRecorder.answering = answered;
                netty.writeInbound(msgs);
                heartbeat.writeInbound(msgs);
                nettyRecorder.answering = false;
                heartbeatRecorder.answering = false;
                readOpen = false;
                what = "read batch of " + n + " (writeInbound)";
                if (answered) {
                    unflushed = true; // written while reading, flushed at the batch's end
                    flushed();
                    what += ", answered (written while reading, flushed as the batch ends)"
                            + (pending ? ", pending" : "");
                }
            } else if (p < 57) {
                netty.writeOneInbound(1);
                heartbeat.writeOneInbound(1);
                readOpen = true;
                what = "read, batch left open (writeOneInbound)";
            } else if (p < 62) {
                netty.flushInbound();
                heartbeat.flushInbound();
                what = readOpen ? "read batch complete (flushInbound)" : "read complete, no read (flushInbound)";
                readOpen = false;
            } else if (p < 78) {
                int size = rnd.nextInt(4);
                boolean voidPromise = rnd.nextInt(4) == 0;
                netty.writeAndFlush(buffer(size), promise(netty, voidPromise));
                heartbeat.writeAndFlush(buffer(size), promise(heartbeat, voidPromise));
                unflushed = true; // written, then flushed
                flushed();
                what = "write " + size + " B and flush" + (voidPromise ? " (void promise)" : "")
                        + (pending ? ", pending" : "");
            } else if (p < 91) {
                int size = rnd.nextInt(4);
                boolean voidPromise = rnd.nextInt(4) == 0;
                netty.write(buffer(size), promise(netty, voidPromise));
                heartbeat.write(buffer(size), promise(heartbeat, voidPromise));
                outputChanged = true; // even 0 B: the buffer counts each entry's overhead
                unflushed = true;
                what = "write " + size + " B, no flush" + (voidPromise ? " (void promise)" : "");
            } else {
                netty.flush();
                heartbeat.flush();
                flushed();
                what = "flush" + (pending ? ", pending" : "");
            }
            logAt().append(what).append('\n');
        }

        /**
         * A flush passed both handlers: the writes complete if the peer reads (then both next writer and
         * all events are first ones), else they wait in the outbound buffer, changed.
         */
        private void flushed() {
            if (heartbeat.reading()) {
                outputChanged = false;
            } else if (unflushed) {
                outputChanged = true; // the head of the buffer is a flushed message now
                pending = true;
            }
            unflushed = false;
        }

        /**
         * The peer stops reading, or reads again: then the flushed writes waiting in both outbound
         * buffers complete now (activity, so only at a quiet time, as the other operations).
         */
        private String togglePeer() {
            if (heartbeat.reading()) {
                netty.stopReading();
                heartbeat.stopReading();
                peerStops++;
                return "the peer stops reading";
            }
            netty.readAgain();
            heartbeat.readAgain();
            boolean completed = pending;
            if (pending) {
                outputChanged = false; // writes complete
                pending = false;
            }
            return "the peer reads again" + (completed ? ": the pending writes complete" : "");
        }

        private static ByteBuf buffer(int size) {
            return Unpooled.buffer(size).writeZero(size);
        }

        private static ChannelPromise promise(EmbeddedChannel ch, boolean voidPromise) {
            return voidPromise ? ch.voidPromise() : ch.newPromise();
        }

        /** Whether no IdleStateHandler check ran within the last GUARD_MS ms (counting now). */
        private boolean quiet() {
            int from = (int) Math.max(0, nowMs - GUARD_MS + 1);
            int next = checks.nextSetBit(from);
            return next < 0 || next > nowMs;
        }

        /** The trace log, at a new line that starts with the time. */
        private StringBuilder logAt() {
            String time = Long.toString(nowMs);
            for (int i = time.length(); i < 7; i++) {
                log.append(' ');
            }
            return log.append(time).append(" ms  ");
        }

        /** Moves virtual time ahead by {@code ms}, in 1 ms steps. */
        private void advance(long ms) {
            for (long i = 0; i < ms; i++) {
                step();
            }
            logAt().append("advance ").append(ms).append(" ms\n");
        }

        /**
         * One ms of virtual time: both clocks move, then each side runs what came due. Heartbeat's
         * worker runs a cycle every ms, more often than its tick, as a worker that keeps up would.
         */
        private void step() {
            nowMs++;
            netty.advanceTimeBy(1, TimeUnit.MILLISECONDS);
            if (checks.get((int) nowMs)) { // else no task is due: every one IdleStateHandler schedules is in checks
                netty.runPendingTasks(); // IdleStateHandler's timeout tasks that came due
            }
            ticker.advance(MS);
            if (monitor.runOnce() > 0) { // else the worker expired nothing, so handed over nothing
                heartbeat.runPendingTasks(); // the actions the worker handed to the event loop
            }
        }

        /** Null if the two sides agree; else what differs. */
        private String compare() {
            readerOnly = !STRICT_OUTPUT_ORDER && outputCheckOrderDiffers();
            StringBuilder diff = new StringBuilder();
            for (IdleState kind : readerOnly ? new IdleState[] {IdleState.READER_IDLE} : KINDS) {
                List<Fired> expected = ofKind(nettyEvents, kind);
                List<Fired> actual = ofKind(heartbeatEvents, kind);
                int n = Math.max(expected.size(), actual.size());
                for (int i = 0; i < n; i++) {
                    Fired e = i < expected.size() ? expected.get(i) : null;
                    Fired a = i < actual.size() ? actual.get(i) : null;
                    String problem = null;
                    if (a == null) {
                        if (e.atMs + MAX_LATE_MS <= nowMs) {
                            problem = "Heartbeat did not fire it (by " + (e.atMs + MAX_LATE_MS) + " ms)";
                        }
                    } else if (e == null) {
                        problem = "Heartbeat fired an event IdleStateHandler did not";
                    } else if (e.event != a.event) {
                        problem = "different event";
                    } else if (a.atMs < e.atMs) {
                        problem = "Heartbeat early by " + (e.atMs - a.atMs) + " ms (or an event is missing on the "
                                + "IdleStateHandler side)";
                    } else if (a.atMs - e.atMs > MAX_LATE_MS) {
                        problem = "Heartbeat late by " + (a.atMs - e.atMs) + " ms (or an event is missing on the "
                                + "Heartbeat side); at most " + MAX_LATE_MS + " ms: one tick of " + TICK_NANOS
                                + " ns, seen at the next 1 ms step";
                    }
                    if (problem != null) {
                        diff.append(String.format(Locale.ROOT, "  %s #%d: IdleStateHandler %s, Heartbeat %s: %s%n",
                                kind, i + 1, e == null ? "-" : e, a == null ? "-" : a, problem));
                        break; // the first difference of each kind
                    }
                }
            }
            return diff.length() == 0 ? null : diff.toString();
        }

        private static List<Fired> ofKind(List<Fired> all, IdleState kind) {
            List<Fired> some = new ArrayList<>();
            for (Fired f : all) {
                if (f.event.state() == kind) {
                    some.add(f);
                }
            }
            return some;
        }

        private String describe(String diff) {
            StringBuilder s = new StringBuilder();
            s.append(String.format(Locale.ROOT, "config at the end: readerIdle=%d ms, writerIdle=%d ms, allIdle=%d ms, "
                    + "observeOutput=%s (%d reconfigures, close on the first event: %s); Heartbeat ticker starts at "
                    + "%d + %d ns (tick %d ns); trace seed %d%n", readerMs, writerMs, allMs, observeOutput,
                    reconfigures, closeOnFirstEvent, tickerStart, tickPhase, TICK_NANOS, seed));
            s.append("first difference per kind:\n").append(diff);
            s.append("trace (virtual ms since the handlers were added):\n").append(log);
            s.append(String.format(Locale.ROOT, "%7d ms  end%n", nowMs));
            s.append("IdleStateHandler fired: ").append(nettyEvents).append('\n');
            s.append("Heartbeat fired:        ").append(heartbeatEvents).append('\n');
            List<Integer> times = new ArrayList<>();
            for (int t = checks.nextSetBit(0); t >= 0 && t <= nowMs + 1_000; t = checks.nextSetBit(t + 1)) {
                times.add(t);
            }
            s.append("IdleStateHandler check times (ms): ").append(times).append('\n');
            if (observeOutput) {
                s.append("IdleStateHandler idle writer/all checks, in order: ").append(idleOutputChecks).append('\n');
            }
            return s.toString();
        }
    }
}
