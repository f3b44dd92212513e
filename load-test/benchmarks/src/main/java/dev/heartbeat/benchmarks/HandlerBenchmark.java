/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ChannelPromise;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateHandler;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The channel hot path: what an idle handler costs the event loop per read batch and per write.
 *
 * <p>Each {@link #impl} is one pipeline {@code [idle handler?, sink]} on an {@code EmbeddedChannel},
 * driven from the benchmark thread (the embedded event loop's thread):
 * <ul>
 * <li>{@code heartbeat}: {@code monitor.newHandler(events: readerIdle 60 s, writerIdle 60 s)}, with a
 *     started monitor (a real worker thread on {@code System.nanoTime()}).</li>
 * <li>{@code idleStateHandler}: {@code new IdleStateHandler(60, 60, 0, SECONDS)}.</li>
 * <li>{@code heartbeatReader}, {@code idleStateHandlerReader}: the same with reader idleness only
 *     ({@code readerIdle 60 s}; {@code IdleStateHandler(60, 0, 0)}), a common configuration
 *     and the one of the load test's ping policy. Heartbeat's handler is then inbound-only, so the
 *     pipeline skips it on the write path; {@code IdleStateHandler} still passes every write on.</li>
 * <li>{@code heartbeatAll}, {@code idleStateHandlerAll}: all three idle kinds, 60 s each
 *     ({@code events(60, 60, 60)}; {@code IdleStateHandler(60, 60, 60)}).</li>
 * <li>{@code heartbeatCoarse}, {@code heartbeatAllCoarse}: {@code heartbeat} and {@code heartbeatAll} on a
 *     monitor with a coarse write clock of 16 ms ({@code HeartbeatMonitor.builder().coarseWriteClock(16 ms)}):
 *     completed writes stamped with the time the worker publishes, no clock read per write.</li>
 * <li>{@code none}: no idle handler; the baseline.</li>
 * <li>{@code noopHandler}: an empty {@code ChannelDuplexHandler}. Netty skips it on every path (its
 *     methods are {@code @Skip}), so it costs next to nothing: not a floor for a handler that tracks
 *     writes.</li>
 * <li>{@code passWrite}: a handler that overrides {@code write} only and passes it on, as
 *     {@code IdleStateHandler} does (Netty skips it on {@code flush}).</li>
 * <li>{@code passThrough}: a handler that overrides {@code write} and {@code flush} and only passes them
 *     on, as Heartbeat's write-tracking handler does: what being on both paths costs.</li>
 * <li>{@code clockPerWrite}: the same, storing {@code System.nanoTime()} after each write it passes on:
 *     the floor for a handler that reads the clock once per write ({@code IdleStateHandler} does, in its
 *     listener; Heartbeat does once per flush).</li>
 * </ul>
 * In the first two, both idle handlers track reads and writes, so both pay for both paths.
 *
 * <ul>
 * <li>{@link #read}: {@code fireChannelRead(msg)} + {@code fireChannelReadComplete()}: one read
 *     batch of one message. The sink swallows the message.</li>
 * <li>{@link #writeAndFlush}: {@code write(msg, newPromise())} + {@code flush()}: the outbound sink
 *     at the head of the pipeline completes the promise at once, as a socket write that fits the
 *     buffer would. The promise is allocated by the benchmark in every impl (both idle handlers need
 *     a non-void promise to see completion), so its bytes are in every impl's B/op.</li>
 * <li>{@link #writeCompletedByFlush}: the same, but the sink completes the write when the flush
 *     reaches it, as a socket does (its write happens at the flush).</li>
 * <li>{@link #echo}: a request and its answer: one read batch of one message, which the application
 *     (the read sink) answers with {@code ctx.write(answer)} while reading and flushes when the batch
 *     completes; the write completes at the flush, as on a socket. Heartbeat stamps the read and the
 *     answer with one clock read; {@code IdleStateHandler} reads the clock for each and adds a listener
 *     to the answer's promise.</li>
 * </ul>
 *
 * <pre>
 * java -jar load-test/target/benchmarks.jar HandlerBenchmark -prof gc
 * java -jar load-test/target/benchmarks.jar HandlerBenchmark -f 1 -wi 3 -i 5 -prof gc   # quicker
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class HandlerBenchmark {

    @Param({"heartbeat", "idleStateHandler", "heartbeatReader", "idleStateHandlerReader", "heartbeatAll",
        "idleStateHandlerAll", "heartbeatCoarse", "heartbeatAllCoarse", "none", "noopHandler", "passWrite",
        "passThrough", "clockPerWrite"})
    public String impl;

    private static final Object MESSAGE = "a line";
    /** A message the sink completes at the next flush, not at once. */
    private static final Object FLUSHED_MESSAGE = "a flushed line";
    /** A message the read sink answers (see {@link #echo}). */
    private static final Object REQUEST = "a request";

    private HeartbeatMonitor monitor;
    private EmbeddedChannel channel;
    private ChannelPipeline pipeline;

    @Setup(Level.Trial)
    public void setUp() {
        ChannelHandler idle;
        switch (impl) {
            case "heartbeat":
                idle = heartbeat(60);
                break;
            case "idleStateHandler":
                idle = new IdleStateHandler(60, 60, 0, TimeUnit.SECONDS);
                break;
            case "heartbeatReader":
                idle = heartbeat(0);
                break;
            case "heartbeatAll":
                monitor = HeartbeatMonitor.start();
                idle = monitor.newHandler(HeartbeatConfig.events(false, 60, 60, 60, TimeUnit.SECONDS));
                break;
            case "heartbeatCoarse":
                monitor = coarseMonitor();
                idle = monitor.newHandler(HeartbeatConfig.events(false, 60, 60, 0, TimeUnit.SECONDS));
                break;
            case "heartbeatAllCoarse":
                monitor = coarseMonitor();
                idle = monitor.newHandler(HeartbeatConfig.events(false, 60, 60, 60, TimeUnit.SECONDS));
                break;
            case "idleStateHandlerAll":
                idle = new IdleStateHandler(60, 60, 60, TimeUnit.SECONDS);
                break;
            case "idleStateHandlerReader":
                idle = new IdleStateHandler(60, 0, 0, TimeUnit.SECONDS);
                break;
            case "none":
                idle = null;
                break;
            case "noopHandler":
                idle = new ChannelDuplexHandler();
                break;
            case "passWrite":
                idle = new PassWrite();
                break;
            case "passThrough":
                idle = new PassThrough(false);
                break;
            case "clockPerWrite":
                idle = new PassThrough(true);
                break;
            default:
                throw new IllegalArgumentException("unknown impl: " + impl);
        }
        channel = new EmbeddedChannel();
        pipeline = channel.pipeline();
        pipeline.addLast(new WriteSink());
        if (idle != null) {
            pipeline.addLast(idle);
        }
        pipeline.addLast(new ReadSink());
    }

    /** Starts the monitor and makes its handler: reader idle 60 s, writer idle {@code writerSeconds} (0: off). */
    private ChannelHandler heartbeat(long writerSeconds) {
        monitor = HeartbeatMonitor.start();
        return monitor.newHandler(HeartbeatConfig.events(false, 60, writerSeconds, 0, TimeUnit.SECONDS));
    }

    /** A started monitor whose writes are stamped by a coarse write clock of 16 ms. */
    static HeartbeatMonitor coarseMonitor() {
        HeartbeatMonitor m = HeartbeatMonitor.builder().coarseWriteClock(Duration.ofMillis(16)).build();
        m.startWorker();
        return m;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        channel.finishAndReleaseAll();
        if (monitor != null) {
            monitor.close();
        }
    }

    /** One read batch of one message. */
    @Benchmark
    public void read() {
        pipeline.fireChannelRead(MESSAGE);
        pipeline.fireChannelReadComplete();
    }

    /** One write, completed at once, and a flush. */
    @Benchmark
    public void writeAndFlush() {
        pipeline.write(MESSAGE, channel.newPromise());
        pipeline.flush();
    }

    /** One write, completed by the flush that follows, as on a socket. */
    @Benchmark
    public void writeCompletedByFlush() {
        pipeline.write(FLUSHED_MESSAGE, channel.newPromise());
        pipeline.flush();
    }

    /** A request read, answered while reading, the answer flushed as the batch completes. */
    @Benchmark
    public void echo() {
        pipeline.fireChannelRead(REQUEST);
        pipeline.fireChannelReadComplete();
    }

    /** The end of the inbound path: swallows reads; answers a {@link #REQUEST}, flushed as its batch completes. */
    static final class ReadSink extends ChannelInboundHandlerAdapter {
        private boolean answered;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg == REQUEST) {
                ctx.write(FLUSHED_MESSAGE); // a promise of its own, as an application's ctx.write(msg)
                answered = true;
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            if (answered) {
                answered = false;
                ctx.flush();
            }
        }
    }

    /** On the write path only, doing nothing there: see {@link #impl}. */
    static final class PassWrite extends ChannelDuplexHandler {
        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ctx.write(msg, promise);
        }
    }

    /**
     * On the write and flush paths, doing nothing there but (if {@code clock}) a clock read per write: see
     * {@link #impl}.
     */
    static final class PassThrough extends ChannelDuplexHandler {
        private final boolean clock;
        /** The latest stamp, kept so the clock read is not dead code. */
        long lastWrite;

        PassThrough(boolean clock) {
            this.clock = clock;
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            ctx.write(msg, promise);
            if (clock) {
                lastWrite = System.nanoTime();
            }
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    /**
     * The head of the outbound path: completes every write, as a socket with room would: at once, or
     * at the next flush for {@link #FLUSHED_MESSAGE}.
     */
    static final class WriteSink extends ChannelDuplexHandler {
        private ChannelPromise unflushed;

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
            if (msg == FLUSHED_MESSAGE) {
                unflushed = promise;
            } else {
                promise.trySuccess();
            }
        }

        @Override
        public void flush(ChannelHandlerContext ctx) {
            ChannelPromise p = unflushed;
            if (p != null) {
                unflushed = null;
                p.trySuccess();
            }
        }
    }
}
