/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * A client process of a TCP run: opens its share of the connections to the demo servers, each bound
 * to one of its own source addresses, plays their roles, and reports to the coordinator
 * ({@link TcpCoordinator}) through {@link ParentLink}. Started by the coordinator as
 * {@code java -cp load-test.jar dev.heartbeat.loadtest.ClientWorker SPEC_JSON}; not meant
 * to be run by hand.
 *
 * <p>Protocol: prints {@code progress} every 500 ms, {@code connected} once its connections are up,
 * then waits for {@code run START END}; at END prints {@code result}, then waits for {@code exit}
 * and closes everything.
 */
public final class ClientWorker {

    private ClientWorker() {
    }

    /**
     * What the coordinator passes as the one argument, in JSON: connections {@code [from, to)} of the
     * scenario, to these servers (host:port) from these source addresses, on {@code threads} event
     * loops, opened at {@code connectRate} per second; the process ends by itself at {@code deadlineNs}.
     */
    record Spec(Scenario.Settings scenario, String impl, int from, int to, List<String> servers, List<String> sources,
            int threads, double connectRate, long deadlineNs) {
    }

    public static void main(String[] args) {
        ParentLink.runChild("ClientWorker", args, Spec.class, Spec::deadlineNs, ClientWorker::run);
    }

    private static void run(Spec spec, ParentLink link) throws Exception {
        Scenario scenario = spec.scenario().scenario();
        int from = spec.from();
        long deadline = spec.deadlineNs();
        List<InetSocketAddress> servers = new ArrayList<>();
        for (String s : spec.servers()) {
            servers.add(TcpLayout.parseHostPort(s));
        }
        List<InetSocketAddress> sources = new ArrayList<>();
        for (String s : spec.sources()) {
            sources.add(new InetSocketAddress(s, 0));
        }

        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = newGroup(epoll, spec.threads());
        Class<? extends Channel> channelClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        SocketAddress[] remotes = servers.toArray(new SocketAddress[0]);
        SocketAddress[] locals = sources.toArray(new SocketAddress[0]);
        ClientDriver driver = new ClientDriver(scenario, spec.impl(), from, spec.to(), group, channelClass,
                i -> remotes[i % remotes.length], locals.length == 0 ? null : i -> locals[(i - from) % locals.length],
                true);
        try {
            AtomicReference<String> phase = new AtomicReference<>("connecting");
            link.sendEvery(500, () -> driver.progress().update(phase.get()));
            driver.connectAll(spec.connectRate(), deadline);
            link.send(new ChildMessage.Connected(driver.progress().connected.sum(), driver.progress().failed.sum(),
                    epoll ? "epoll" : "nio"));
            phase.set("connected");

            String[] run = link.awaitCommand("run", Math.max(1, deadline - System.nanoTime())).split(" ", 3);
            long start = Long.parseLong(run[1]);
            long end = Long.parseLong(run[2]);
            driver.startRun(start, end);
            phase.set("running");
            ParentLink.sleepUntil(end);
            ClientResult result = driver.finish(TimeUnit.SECONDS.toNanos(30));
            phase.set("finished");
            link.send(new ChildMessage.Result(result, null));

            link.awaitCommand("exit", Math.max(1, deadline - System.nanoTime()));
            driver.closeAll(TimeUnit.SECONDS.toNanos(5));
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
        }
    }

    // EpollEventLoopGroup and NioEventLoopGroup are deprecated in Netty 4.2 (in favour of
    // MultiThreadIoEventLoopGroup, which 4.1 lacks); the load test builds against both, as the demo server.
    @SuppressWarnings("deprecation")
    private static EventLoopGroup newGroup(boolean epoll, int threads) {
        DefaultThreadFactory factory = new DefaultThreadFactory("client-loop", true);
        return epoll ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }
}
