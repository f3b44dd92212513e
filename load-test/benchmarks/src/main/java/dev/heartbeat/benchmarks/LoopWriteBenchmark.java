/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.util.concurrent.TimeUnit;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.timeout.IdleStateHandler;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A tracked write on a real event loop (a {@code DefaultEventLoop}), where the loop runs its own tasks between
 * turns, unlike {@link HandlerBenchmark}'s {@code EmbeddedChannel}. It measured a write clock that stamped
 * all the writes of a turn with one clock read, from a task queued once per turn (results.md: it cut the cost
 * at 8 and 64 channels a turn, and was reverted because the task's queueing is an enqueue, and on this loop an
 * allocation, on the write path). Kept to measure any other such change the same way.
 *
 * <p>An event loop turn here: each of {@link #channels} channels writes one message, completed at once by
 * the sink at the head of its pipeline ({@link HandlerBenchmark.WriteSink}), and flushes; then the loop
 * runs its queued tasks, as a transport's loop does after the I/O of one select. An invocation is
 * {@link #WRITES} writes, run as one task on the loop (so the hand-off to the loop's thread is shared by
 * 4,096 writes in every impl).
 * Pipelines as in {@link HandlerBenchmark}: {@code [sink, idle handler?, read sink]}.
 * <ul>
 * <li>{@code heartbeat}: events, reader and writer idle 60 s (writes tracked), on a started monitor;</li>
 * <li>{@code heartbeatCoarse}: the same on a monitor with a coarse write clock of 16 ms (no clock read per
 *     write);</li>
 * <li>{@code idleStateHandler}: {@code new IdleStateHandler(60, 60, 0, SECONDS)};</li>
 * <li>{@code none}: no idle handler, the baseline: an impl's cost is its time minus this one's.</li>
 * </ul>
 *
 * <pre>
 * java -jar load-test/target/benchmarks.jar LoopWriteBenchmark -f 2 -wi 5 -i 5 -prof gc
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
public class LoopWriteBenchmark {

    /** Writes per invocation (a multiple of every channel count). */
    static final int WRITES = 4096;

    @Param({"heartbeat", "heartbeatCoarse", "idleStateHandler", "none"})
    public String impl;

    /** Channels that write in one turn of the loop. */
    @Param({"1", "8", "64"})
    public int channels;

    private static final Object MESSAGE = "a line";

    private BenchLoop loop;
    private HeartbeatMonitor monitor;
    private Channel server;
    private ChannelPipeline[] pipelines;
    private Runnable invocation;

    /** A {@code DefaultEventLoop} whose queued tasks a task of its own can run, as a transport's loop does. */
    static final class BenchLoop extends DefaultEventLoop {
        void runQueuedTasks() {
            runAllTasks();
        }
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        loop = new BenchLoop();
        if (impl.equals("heartbeat")) {
            monitor = HeartbeatMonitor.start();
        } else if (impl.equals("heartbeatCoarse")) {
            monitor = HandlerBenchmark.coarseMonitor();
        }
        server = new ServerBootstrap().group(loop, loop).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel c) {
                        c.pipeline().addLast(new HandlerBenchmark.ReadSink()); // not sharable: one per channel
                    }
                }).bind(LocalAddress.ANY).sync().channel();
        pipelines = new ChannelPipeline[channels];
        for (int i = 0; i < channels; i++) {
            Channel ch = new Bootstrap().group(loop).channel(LocalChannel.class)
                    .handler(new ChannelInitializer<Channel>() {
                        @Override
                        protected void initChannel(Channel c) {
                            c.pipeline().addLast(new HandlerBenchmark.WriteSink());
                            ChannelHandler idle = idleHandler();
                            if (idle != null) {
                                c.pipeline().addLast(idle);
                            }
                            c.pipeline().addLast(new HandlerBenchmark.ReadSink());
                        }
                    }).connect(server.localAddress()).sync().channel();
            pipelines[i] = ch.pipeline();
        }
        int turns = WRITES / channels;
        invocation = () -> {
            for (int t = 0; t < turns; t++) {
                for (ChannelPipeline p : pipelines) {
                    p.write(MESSAGE, p.channel().newPromise());
                    p.flush();
                }
                loop.runQueuedTasks();
            }
        };
    }

    private ChannelHandler idleHandler() {
        switch (impl) {
            case "heartbeat":
            case "heartbeatCoarse":
                return monitor.newHandler(HeartbeatConfig.events(false, 60, 60, 0, TimeUnit.SECONDS));
            case "idleStateHandler":
                return new IdleStateHandler(60, 60, 0, TimeUnit.SECONDS);
            case "none":
                return null;
            default:
                throw new IllegalArgumentException("unknown impl: " + impl);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        for (ChannelPipeline p : pipelines) {
            p.channel().close().sync();
        }
        server.close().sync();
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        if (monitor != null) {
            monitor.close();
        }
    }

    /** {@link #WRITES} tracked writes on the loop, in turns of {@link #channels} channels. */
    @Benchmark
    @OperationsPerInvocation(WRITES)
    public void write() throws Exception {
        loop.submit(invocation).get();
    }
}
