/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the connections of a TCP run go: how many server and client processes (each holds one file
 * descriptor per connection, under the per-process limit), which connections each client opens,
 * the servers' ports (below the ephemeral range, so no client socket can take them, and different in
 * every run of a comparison, so no TIME_WAIT of the previous run is in the way) and each client's
 * source addresses in 127.0.0.0/8 (a few thousand connections per address, far from the 28k
 * ephemeral ports an address offers). Immutable; any thread.
 */
final class TcpLayout {

    /** File descriptors a JVM needs besides its connections: jars, epoll, pipes, logs, with room to spare. */
    static final int RESERVED_FDS = 2_000;
    /** The first port of Linux's default ephemeral range: servers listen below it. */
    static final int EPHEMERAL_START = 32_768;
    /** Ports of one run: echo ports from the run's base, metrics ports 100 above. */
    static final int PORTS_PER_RUN = 200;
    /** Connections per source address, at most. */
    static final int PER_SOURCE_ADDRESS = 5_000;

    final int connections;
    final int perProcess;
    final int servers;
    final int clients;

    private TcpLayout(int connections, int perProcess) {
        this.connections = connections;
        this.perProcess = perProcess;
        this.servers = (connections + perProcess - 1) / perProcess;
        this.clients = servers;
    }

    /**
     * The layout for {@code connections} at most {@code perProcess} to a process.
     *
     * @throws IllegalArgumentException naming the values if it would need more than 100 servers
     */
    static TcpLayout plan(int connections, int perProcess) {
        if (perProcess < 1) {
            throw new IllegalArgumentException("--max-connections-per-process must be at least 1: " + perProcess);
        }
        TcpLayout layout = new TcpLayout(connections, perProcess);
        if (layout.servers > PORTS_PER_RUN / 2) {
            int max = PORTS_PER_RUN / 2;
            throw new IllegalArgumentException("--connections " + connections + " at --max-connections-per-process "
                    + perProcess + " need " + layout.servers + " server processes; at most " + max + " are supported: "
                    + "give a --max-connections-per-process of at least " + (connections + max - 1) / max);
        }
        return layout;
    }

    /** The largest number of connections one process can hold under this process's file limit. */
    static int defaultPerProcess() {
        long limit = fileLimit();
        return (int) Math.max(1_000, Math.min(Integer.MAX_VALUE, limit - RESERVED_FDS));
    }

    /** This process's open-file limit (children inherit it), or 20,000 if it cannot be read. */
    static long fileLimit() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.UnixOperatingSystemMXBean) {
            long max = ((com.sun.management.UnixOperatingSystemMXBean) os).getMaxFileDescriptorCount();
            if (max > 0) {
                return max;
            }
        }
        return 20_000;
    }

    /** The first global connection index of a client process. */
    int clientFrom(int client) {
        return (int) ((long) connections * client / clients);
    }

    /** One past the last global connection index of a client process. */
    int clientTo(int client) {
        return (int) ((long) connections * (client + 1) / clients);
    }

    /**
     * The echo port of a server in a run.
     *
     * @throws IllegalArgumentException if the run's ports would reach the ephemeral range
     */
    static int echoPort(int basePort, int run, int server) {
        int port = basePort + run * PORTS_PER_RUN + server;
        requireBelowEphemeral(basePort, run);
        return port;
    }

    static int metricsPort(int basePort, int run, int server) {
        requireBelowEphemeral(basePort, run);
        return basePort + run * PORTS_PER_RUN + PORTS_PER_RUN / 2 + server;
    }

    private static void requireBelowEphemeral(int basePort, int run) {
        int last = basePort + (run + 1) * PORTS_PER_RUN - 1;
        if (basePort < 1024 || last >= EPHEMERAL_START) {
            throw new IllegalArgumentException("--base-port " + basePort + " leaves no room for " + (run + 1)
                    + " runs of " + PORTS_PER_RUN + " ports between 1024 and " + (EPHEMERAL_START - 1)
                    + " (below the ephemeral range)");
        }
    }

    /**
     * The source addresses of a client process in a run: {@code 127.(16+run).(client+1).k}, one per
     * {@value #PER_SOURCE_ADDRESS} connections.
     */
    List<String> sources(int run, int client) {
        int count = clientTo(client) - clientFrom(client);
        int addresses = Math.max(1, (count + PER_SOURCE_ADDRESS - 1) / PER_SOURCE_ADDRESS);
        List<String> out = new ArrayList<>();
        for (int k = 1; k <= addresses; k++) {
            out.add("127." + (16 + run % 200) + "." + (client % 250 + 1) + "." + k);
        }
        return out;
    }

    /**
     * Parses {@code host:port} (an IPv6 host in brackets).
     *
     * @throws IllegalArgumentException naming the bad text
     */
    static InetSocketAddress parseHostPort(String text) {
        String t = text.trim();
        int colon = t.lastIndexOf(':');
        if (colon <= 0 || colon == t.length() - 1) {
            throw new IllegalArgumentException("'" + text + "' is not host:port");
        }
        String host = t.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(t.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + text + "' is not host:port: the port is not a number", e);
        }
        if (port < 1 || port > 65_535) {
            throw new IllegalArgumentException("'" + text + "': the port must be in 1-65535: " + port);
        }
        return InetSocketAddress.createUnresolved(host, port);
    }

    static String hostPort(InetSocketAddress a) {
        String host = a.getHostString();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }
}
