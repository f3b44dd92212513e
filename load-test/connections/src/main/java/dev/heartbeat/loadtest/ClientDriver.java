/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;

/**
 * The client side of one process: opens its share of the connections at a limited rate (each with
 * its {@link Role}), lets them play their roles through the run window, and collects the verdicts.
 * Works on any Netty transport: TCP sockets bound to chosen source addresses, or the in-JVM local
 * transport. The event loop group is the caller's, and so is shutting it down.
 *
 * <p>One thread drives it: {@link #connectAll}, then {@link #startRun}, {@link #finish},
 * {@link #closeAll}. Its {@link #progress()} may be read from any thread meanwhile.
 */
final class ClientDriver {

    /**
     * Connects started and not yet settled, at most. When the servers or this process fall behind the
     * connect rate, connecting slows down instead of queueing: a queued connect would only measure
     * the queue, and its late completion blurs the due moment of a silent connection.
     */
    private static final int MAX_IN_FLIGHT = 256;
    /** Attempts per connection; refused or timed out attempts are retried after 200 ms, 400 ms. */
    private static final int MAX_ATTEMPTS = 3;

    private final Scenario scenario;
    private final String impl;
    private final int from;
    private final int to;
    private final byte[] roles;
    private final ClientLoop[] loops;
    private final Bootstrap bootstrap;
    private final IntFunction<SocketAddress> remote;
    private final IntFunction<SocketAddress> local;
    private final boolean tcp;
    private final RunWindow window = new RunWindow();
    private final ClientProgress progress = new ClientProgress();
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile long connectStartNanos;
    private volatile long connectEndNanos;

    /**
     * @param from the first global connection index of this process (inclusive)
     * @param to the last (exclusive)
     * @param remote the server address for a global index
     * @param local the source address to bind for a global index, or null to let the OS choose
     * @param tcp whether the channels are TCP sockets (options, and a reset on the final close)
     */
    ClientDriver(Scenario scenario, String impl, int from, int to, EventLoopGroup group,
            Class<? extends Channel> channelClass, IntFunction<SocketAddress> remote, IntFunction<SocketAddress> local,
            boolean tcp) {
        if (from < 0 || to > scenario.connections || from > to) {
            throw new IllegalArgumentException("connection range [" + from + ", " + to + ") is not within [0, "
                    + scenario.connections + ")");
        }
        this.scenario = scenario;
        this.impl = impl;
        this.from = from;
        this.to = to;
        this.roles = scenario.mix.assign(scenario.connections, scenario.seed);
        this.remote = remote;
        this.local = local;
        this.tcp = tcp;
        List<ClientLoop> list = new ArrayList<>();
        for (EventExecutor e : group) {
            list.add(new ClientLoop((EventLoop) e, scenario, window, progress, impl));
        }
        this.loops = list.toArray(new ClientLoop[0]);
        double churnPerLoop = scenario.churnPerSecond * count() / scenario.connections / loops.length;
        for (ClientLoop loop : loops) {
            loop.churn(churnPerLoop, this::reopen);
        }
        Bootstrap b = new Bootstrap().group(group).channel(channelClass)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000);
        if (tcp) {
            b.option(ChannelOption.TCP_NODELAY, true).option(ChannelOption.SO_REUSEADDR, true);
        }
        this.bootstrap = b;
    }

    ClientProgress progress() {
        return progress;
    }

    RunWindow window() {
        return window;
    }

    /** Connections this process opens. */
    int count() {
        return to - from;
    }

    /**
     * Opens every connection of this process at about {@code perSecond}, and waits until each has
     * connected or failed for good (or the deadline passes: the rest count as failed).
     *
     * @return how long it took, in nanoseconds
     */
    long connectAll(double perSecond, long deadlineNanos) {
        long start = System.nanoTime();
        connectStartNanos = start;
        long burst = Math.max(1, (long) (perSecond / 200)); // 5 ms worth
        int issued = 0;
        int n = count();
        while (issued < n && System.nanoTime() - deadlineNanos < 0) {
            long now = System.nanoTime();
            long allowed = Math.min(n, (long) ((now - start) / 1e9 * perSecond) + burst);
            while (issued < allowed && inFlight.get() < MAX_IN_FLIGHT) {
                int index = from + issued;
                Role role = Role.values()[roles[index]];
                ClientConnection c = ClientConnection.create(scenario, index, role, scenario.expectsClose(impl, role));
                c.loop = loops[issued % loops.length];
                inFlight.incrementAndGet();
                progress.attempted.increment();
                connect(c);
                issued++;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        while (inFlight.get() > 0 && System.nanoTime() - deadlineNanos < 0) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        long missing = (long) n - issued + inFlight.get();
        for (long i = 0; i < missing; i++) {
            progress.connectFailed(new TimeoutException("the connect phase ran out of time"));
        }
        connectEndNanos = System.nanoTime();
        return connectEndNanos - start;
    }

    private void connect(ClientConnection c) {
        c.attempts++;
        c.connectStart = System.nanoTime();
        Bootstrap b = bootstrap.clone(c.loop.executor()).handler(c);
        ChannelFuture f = local == null ? b.connect(remote.apply(c.index))
                : b.connect(remote.apply(c.index), local.apply(c.index));
        f.addListener(done -> {
            if (done.isSuccess()) {
                inFlight.decrementAndGet();
            } else if (c.attempts < MAX_ATTEMPTS) {
                // A handler joins one pipeline only: the retry gets a fresh one with the same identity.
                ClientConnection again = c.again(scenario);
                again.loop = c.loop;
                again.reopened = c.reopened;
                again.attempts = c.attempts;
                c.loop.executor().schedule(() -> connect(again), 200L * c.attempts, TimeUnit.MILLISECONDS);
            } else {
                progress.connectFailed(done.cause());
                inFlight.decrementAndGet();
            }
        });
    }

    /** Soak: opens a connection again in place of one the client closed; on its loop. */
    private void reopen(ClientConnection closed) {
        ClientConnection c = closed.again(scenario);
        c.loop = closed.loop;
        c.reopened = true;
        inFlight.incrementAndGet();
        connect(c);
    }

    /** Opens the measured window: active connections are measured in it, dying ones die in it. */
    void startRun(long startNanos, long endNanos) {
        window.open(startNanos, endNanos);
    }

    /**
     * Ends the run: every loop judges its open connections and hands over its totals, merged here.
     *
     * @throws TimeoutException if a loop did not answer within the timeout
     */
    ClientResult finish(long timeoutNanos) throws InterruptedException, TimeoutException {
        List<Future<ClientResult>> parts = new ArrayList<>();
        for (ClientLoop loop : loops) {
            parts.add(loop.executor().submit(loop::finish));
        }
        ClientResult total = new ClientResult();
        long deadline = System.nanoTime() + timeoutNanos;
        for (Future<ClientResult> part : parts) {
            try {
                total.add(part.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (ExecutionException e) {
                throw new IllegalStateException("a client event loop failed to finish", e.getCause());
            }
        }
        total.assigned = count();
        total.connectFailures = progress.failed.sum();
        total.connectFailureCauses.putAll(progress.failureCauses());
        total.connectStartNanos = connectStartNanos;
        total.connectEndNanos = connectEndNanos;
        return total;
    }

    /**
     * Closes every connection still open, TCP ones with a reset (SO_LINGER 0: no TIME_WAIT left for
     * the next run), and waits up to the timeout. Only after {@link #finish}.
     */
    void closeAll(long timeoutNanos) throws InterruptedException {
        List<Future<?>> closing = new ArrayList<>();
        for (ClientLoop loop : loops) {
            closing.add(loop.executor().submit(() -> {
                for (ClientConnection c : loop.openConnections()) {
                    if (tcp) {
                        c.channel().config().setOption(ChannelOption.SO_LINGER, 0);
                    }
                    c.channel().close();
                }
            }));
        }
        long deadline = System.nanoTime() + timeoutNanos;
        for (Future<?> f : closing) {
            try {
                f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                return; // best effort: the process is about to exit anyway
            }
        }
    }
}
