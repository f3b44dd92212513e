/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.heartbeat.netty.HeartbeatConfig;
import dev.heartbeat.netty.HeartbeatMonitor;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.DefaultEventLoopGroup;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import io.netty.handler.timeout.IdleStateHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Live heap per channel, with and without an idle handler: N connected channel pairs on Netty's
 * in-JVM local transport, the server side of each with one idle-handling setup, measured as the heap
 * used after a full GC with the N channels open, minus the same before they were opened, over N.
 * Every setup runs in the same JVM, one after another, each after the previous one's channels are
 * closed and collected.
 *
 * <p>Setups: {@code none} (no idle handler: the cost of the channel pair itself),
 * {@code noopHandler} (an empty handler: the pipeline context any handler costs),
 * {@code idleStateHandler-reader} ({@code new IdleStateHandler(60, 0, 0, SECONDS)}),
 * {@code idleStateHandler-all} ({@code (60, 60, 60)}), and the same two for Heartbeat's event policy
 * on one started monitor. Compare each with {@code none}.
 *
 * <pre>
 * java -cp load-test/target/benchmarks.jar dev.heartbeat.benchmarks.HeapPerChannel --channels 100000
 * </pre>
 * Prints one JSON object: {@code {"channels": N, "bytes_per_channel": {...}}}.
 */
@Command(name = "HeapPerChannel", mixinStandardHelpOptions = true,
        description = "Live heap per channel pair on Netty's local transport, for each idle-handling setup.")
public final class HeapPerChannel implements Callable<Integer> {

    private static int round;
    /**
     * The monitor of the Heartbeat setups. Its worker applies the cancels of closed channels at its
     * next wake-up, at most a second later; until then its queue holds them, so each measurement
     * first waits until the monitor has let go of the previous round's channels.
     */
    private static HeartbeatMonitor monitor;

    @Option(names = "--channels", paramLabel = "N", defaultValue = "100000",
            description = "Channel pairs per setup, at least 10000. Default: ${DEFAULT-VALUE}.")
    int channels;

    @Spec
    CommandSpec spec;

    public static void main(String[] args) {
        System.exit(new CommandLine(new HeapPerChannel()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        if (channels < 10_000) {
            throw new ParameterException(spec.commandLine(), "--channels must be at least 10000: " + channels);
        }
        monitor = HeartbeatMonitor.start();
        HeartbeatConfig reader = HeartbeatConfig.events(false, 60, 0, 0, TimeUnit.SECONDS);
        HeartbeatConfig all = HeartbeatConfig.events(false, 60, 60, 60, TimeUnit.SECONDS);

        Map<String, Supplier<ChannelHandler>> setups = new LinkedHashMap<>();
        setups.put("none", () -> null);
        setups.put("noopHandler", NoopHandler::new);
        setups.put("idleStateHandler-reader", () -> new IdleStateHandler(60, 0, 0, TimeUnit.SECONDS));
        setups.put("idleStateHandler-all", () -> new IdleStateHandler(60, 60, 60, TimeUnit.SECONDS));
        setups.put("heartbeat-reader", () -> monitor.newHandler(reader));
        setups.put("heartbeat-all", () -> monitor.newHandler(all));

        // One untimed round first, so class loading and one-off structures are not charged to a setup.
        measure(setups.get("heartbeat-all"), 10_000);
        Map<String, Double> bytes = new LinkedHashMap<>();
        for (Map.Entry<String, Supplier<ChannelHandler>> setup : setups.entrySet()) {
            bytes.put(setup.getKey(), measure(setup.getValue(), channels));
            System.err.printf("%-24s %8.1f B/channel%n", setup.getKey(), bytes.get(setup.getKey()));
        }
        monitor.close();

        StringBuilder json = new StringBuilder("{\"channels\": ").append(channels)
                .append(", \"bytes_per_channel\": {");
        String sep = "";
        for (Map.Entry<String, Double> e : bytes.entrySet()) {
            json.append(sep).append('"').append(e.getKey()).append("\": ")
                    .append(String.format("%.1f", e.getValue()));
            sep = ", ";
        }
        System.out.println(json.append("}}"));
        return 0;
    }

    /** Opens n channel pairs with the given server-side handler, and returns the heap they hold, per pair. */
    @SuppressWarnings("deprecation") // DefaultEventLoopGroup is deprecated in Netty 4.2, current in 4.1
    private static double measure(Supplier<ChannelHandler> handler, int n) throws Exception {
        LocalAddress address = new LocalAddress("heap-per-channel-" + round++);
        EventLoopGroup group = new DefaultEventLoopGroup(2);
        AtomicInteger active = new AtomicInteger();
        List<Channel> clients = new ArrayList<>(n);
        try {
            Channel server = new ServerBootstrap().group(group).channel(LocalServerChannel.class)
                    .childHandler(new ChannelInitializer<LocalChannel>() {
                        @Override
                        protected void initChannel(LocalChannel ch) {
                            ChannelHandler h = handler.get();
                            if (h != null) {
                                ch.pipeline().addLast(h);
                            }
                            active.incrementAndGet();
                            ch.closeFuture().addListener(f -> active.decrementAndGet());
                        }
                    }).bind(address).sync().channel();
            Bootstrap client = new Bootstrap().group(group).channel(LocalChannel.class)
                    .handler(ClientHandler.INSTANCE);
            awaitMonitorDrained();
            long before = liveHeap();
            List<ChannelFuture> pending = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                // An explicit local address: Netty's ephemeral local addresses are 32-bit hashes, and
                // tens of thousands of them collide ("address already in use").
                pending.add(client.connect(address, new LocalAddress(address.id() + "-client-" + i)));
                if (pending.size() == 1000) {
                    awaitAll(pending, clients);
                }
            }
            awaitAll(pending, clients);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (active.get() < n) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("only " + active.get() + " of " + n + " server channels came up");
                }
                Thread.sleep(10);
            }
            long after = liveHeap();
            closeAll(clients);
            while (active.get() > 0) {
                Thread.sleep(10); // the server sides close after their peers
            }
            server.close().sync();
            Thread.sleep(200); // let the last close tasks run before the group shuts down
            return (after - before) / (double) n;
        } finally {
            closeAll(clients);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    private static void closeAll(List<Channel> channels) throws InterruptedException {
        List<ChannelFuture> closing = new ArrayList<>(channels.size());
        for (Channel ch : channels) {
            closing.add(ch.close());
        }
        for (ChannelFuture f : closing) {
            f.await();
        }
        channels.clear();
    }

    private static void awaitAll(List<ChannelFuture> pending, List<Channel> into) throws InterruptedException {
        for (ChannelFuture f : pending) {
            f.sync();
            into.add(f.channel());
        }
        pending.clear();
    }

    /** Waits (bounded) until the monitor holds no channel: no entry in its wheel, no request queued. */
    private static void awaitMonitorDrained() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (monitor.stats().timer().entries() != 0 || monitor.stats().timer().queueDepth() != 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the monitor still holds channels: " + monitor.stats());
            }
            Thread.sleep(10);
        }
    }

    /** Heap in use after full collections, once two in a row agree to within 1 KiB. */
    private static long liveHeap() throws InterruptedException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long previous = Long.MAX_VALUE;
        for (int i = 0; i < 10; i++) {
            System.gc();
            Thread.sleep(100);
            long used = memory.getHeapMemoryUsage().getUsed();
            if (Math.abs(used - previous) < 1024) {
                return used;
            }
            previous = used;
        }
        return previous;
    }

    /** The clients' handler: one shared instance, the same in every setup. */
    @ChannelHandler.Sharable
    static final class ClientHandler extends ChannelInboundHandlerAdapter {
        static final ClientHandler INSTANCE = new ClientHandler();
    }

    /** A handler that does nothing: what any extra handler costs (its pipeline context and itself). */
    static final class NoopHandler extends ChannelDuplexHandler {
    }
}
