/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.DefaultEventLoop;
import io.netty.channel.EventLoop;
import io.netty.channel.local.LocalAddress;
import io.netty.channel.local.LocalChannel;
import io.netty.channel.local.LocalServerChannel;
import org.junit.jupiter.api.Test;

/**
 * Churn against one running monitor (real worker thread, real time) on Netty's local transport: a
 * long stream of connections, a few thousand open at any time, each ending one of five ways: closed
 * by the peer, closed by idleness (Heartbeat's close policy), its Heartbeat handler removed from the
 * pipeline while it stays open, migrated to another event loop and then closed, or reconfigured and
 * then closed. At the end the wheel and the channel count are back to 0, live heap after GC did not
 * grow with the number of connections (the slope is printed and bounded), and the worker thread is
 * gone after {@code close()}.
 *
 * <p>{@code -Dheartbeat.churn=N} sets the number of connections (default 30,000 in the test suite;
 * the README gives the figures of a 1,000,000-connection run:
 * {@code ./mvnw -B -pl heartbeat-core,heartbeat-netty test -Dtest=ChurnTest -Dheartbeat.churn=1000000}).
 */
class ChurnTest {

    private static final int CONNECTIONS = Integer.getInteger("heartbeat.churn", 30_000);
    private static final int MAX_OPEN = 2_000;
    private static final long WAIT_SECONDS = 30;

    @Test
    void churnLeavesNothingBehind() throws Exception {
        HeartbeatMonitor monitor = HeartbeatMonitor.builder().threadName("heartbeat-churn-test").build()
                .startWorker();
        DefaultEventLoop serverA = new DefaultEventLoop();
        DefaultEventLoop serverB = new DefaultEventLoop();
        DefaultEventLoop client = new DefaultEventLoop();
        HeartbeatConfig close = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMillis(20)).build();
        HeartbeatConfig longer = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofMinutes(5)).build();
        ArrayDeque<Channel> accepted = new ArrayDeque<>();
        Channel server = new ServerBootstrap().group(serverA, serverA).channel(LocalServerChannel.class)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast("heartbeat", monitor.newHandler(close));
                        synchronized (accepted) {
                            accepted.add(ch);
                        }
                    }
                }).bind(LocalAddress.ANY).syncUninterruptibly().channel();
        Bootstrap connector = new Bootstrap().group(client).channel(LocalChannel.class).handler(new Sink());
        SplittableRandom random = new SplittableRandom(Long.getLong("heartbeat.seed", System.nanoTime()));
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        List<long[]> heap = new ArrayList<>(); // {connections so far, live heap after GC}
        ArrayDeque<Channel> open = new ArrayDeque<>();
        int[] fates = new int[5];
        long started = System.nanoTime();
        try {
            String clientPrefix = "churn-client-" + System.nanoTime() + "-";
            for (int i = 0; i < CONNECTIONS; i++) {
                // A local address of its own: the ephemeral one Netty makes is a 32-bit hash of the
                // channel, which can equal one still open (it did once in CI: "address already in use").
                connector.connect(server.localAddress(), new LocalAddress(clientPrefix + i)).syncUninterruptibly();
                Channel child = takeAccepted(accepted);
                int fate = random.nextInt(5);
                fates[fate]++;
                switch (fate) {
                    case 0: // the peer closes (closing the child closes both ends of a local pair)
                        child.close();
                        break;
                    case 1: // left silent: Heartbeat closes it after 20 ms
                        open.add(child);
                        break;
                    case 2: // the handler is removed; the channel stays open (for a while)
                        child.eventLoop().execute(() -> {
                            if (child.pipeline().get("heartbeat") != null) {
                                child.pipeline().remove("heartbeat");
                            }
                        });
                        open.add(child);
                        break;
                    case 3: // migrated to the other event loop, then closed
                        migrate(child, serverB).addListener(f -> child.close());
                        break;
                    default: // reconfigured to a long timeout, then closed by the peer later
                        monitor.reconfigure(child, longer);
                        open.add(child);
                        break;
                }
                while (open.size() > MAX_OPEN) {
                    open.poll().close();
                }
                if (i % (CONNECTIONS / 20) == 0) {
                    heap.add(new long[] {i, liveHeap(memory)});
                }
            }
            for (Channel ch : open) {
                ch.close().syncUninterruptibly();
            }
            awaitZero(monitor);
            heap.add(new long[] {CONNECTIONS, liveHeap(memory)});
        } finally {
            server.close().syncUninterruptibly();
            for (EventLoop loop : List.of(serverA, serverB, client)) {
                loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            }
        }
        HeartbeatStats stats = monitor.stats();
        // The slope over the steady part: from a fifth of the run on, the open window is full and the
        // JIT has settled; the last sample, after everything closed, is left out too.
        double slope = slope(heap.subList(heap.size() / 5, heap.size() - 1));
        System.out.printf(Locale.ROOT, "ChurnTest: %,d connections in %,d ms (peer %d, idle %d, removed %d, "
                + "migrated %d, reconfigured %d); %,d idle closes; live heap slope %.2f bytes per connection "
                + "(%s); %s%n", CONNECTIONS, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), fates[0],
                fates[1], fates[2], fates[3], fates[4], stats.closedReaderIdle(), slope, heapSamples(heap), stats);
        assertEquals(0, stats.channels(), "channel count back to 0");
        assertEquals(0, stats.timer().entries(), "wheel back to 0");
        assertTrue(stats.closedReaderIdle() > 0, "some were closed by idleness");
        assertTrue(slope < 16, "live heap grows by " + slope + " bytes per connection: a leak");
        assertTrue(monitor.close(Duration.ofSeconds(5)));
        assertFalse(threadAlive("heartbeat-churn-test"), "no thread left behind after close()");
    }

    /** The clients' handler: one for all of them. */
    @ChannelHandler.Sharable
    static final class Sink extends ChannelInboundHandlerAdapter {
    }

    private static Channel takeAccepted(ArrayDeque<Channel> accepted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            synchronized (accepted) {
                Channel ch = accepted.poll();
                if (ch != null) {
                    return ch;
                }
            }
            if (System.nanoTime() - deadline > 0) {
                fail("the server did not accept a connection within " + WAIT_SECONDS + " s");
            }
            Thread.onSpinWait();
        }
    }

    private static io.netty.util.concurrent.Future<?> migrate(Channel ch, EventLoop target) {
        io.netty.util.concurrent.Promise<Void> done = target.newPromise();
        ch.deregister().addListener(f -> {
            if (!f.isSuccess() || !ch.isOpen()) {
                done.setSuccess(null);
                return;
            }
            target.register(ch).addListener(g -> done.setSuccess(null));
        });
        return done;
    }

    /** Waits (bounded) until every connection has left the monitor: the worker applies cancels lazily. */
    private static void awaitZero(HeartbeatMonitor monitor) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (monitor.stats().channels() != 0 || monitor.stats().timer().entries() != 0) {
            if (System.nanoTime() - deadline > 0) {
                fail("not back to 0 within " + WAIT_SECONDS + " s: " + monitor.stats());
            }
            Thread.sleep(10); // polls (bounded) for the real worker, which applies cancels when it next wakes (<= 1 s)
        }
    }

    private static long liveHeap(MemoryMXBean memory) {
        System.gc();
        System.gc();
        return memory.getHeapMemoryUsage().getUsed();
    }

    private static boolean threadAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }

    /** Least-squares slope of live heap over connections. */
    private static double slope(List<long[]> samples) {
        double n = samples.size();
        double sx = 0;
        double sy = 0;
        double sxx = 0;
        double sxy = 0;
        for (long[] s : samples) {
            sx += s[0];
            sy += s[1];
            sxx += (double) s[0] * s[0];
            sxy += (double) s[0] * s[1];
        }
        return (n * sxy - sx * sy) / (n * sxx - sx * sx);
    }

    private static String heapSamples(List<long[]> heap) {
        StringBuilder s = new StringBuilder();
        for (long[] h : heap) {
            s.append(s.length() == 0 ? "" : ", ").append(h[0]).append(':').append(h[1] / 1024).append(" KiB");
        }
        return s.toString();
    }
}
