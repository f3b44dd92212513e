/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Everything the coordinator needs besides the {@link Scenario}: which implementations on which
 * transport, the child processes' JVMs and threads, the connect rate, ports, jars and output folder.
 * Built from the command line by {@link LoadTest}; immutable.
 */
final class RunPlan {

    static final String TCP = "tcp";
    static final String LOCAL = "local";

    final Scenario scenario;
    final String transport;
    final List<String> impls;
    final Path out;
    /** -Xmx of each demo server (tcp) or of the one JVM of a local run. */
    final String serverHeap;
    /** -Xmx of each client worker (tcp). */
    final String clientHeap;
    /** Given to every child JVM, the same for every implementation. */
    final List<String> jvmArgs;
    final int serverThreads;
    final int clientThreads;
    /** Connections opened per second, over all client processes. */
    final double connectRate;
    final int maxPerProcess;
    final int basePort;
    /** host:port of running demo servers to use instead of starting them; empty to start them. */
    final List<String> targets;
    /** host:port of the targets' HTTP endpoints, in the same order; may be empty. */
    final List<String> targetMetrics;
    final Path demoServerJar;
    final Path loadTestJar;

    RunPlan(Scenario scenario, String transport, List<String> impls, Path out, String serverHeap, String clientHeap,
            List<String> jvmArgs, int serverThreads, int clientThreads, double connectRate, int maxPerProcess,
            int basePort, List<String> targets, List<String> targetMetrics, Path demoServerJar, Path loadTestJar) {
        this.scenario = scenario;
        this.transport = transport;
        this.impls = List.copyOf(impls);
        this.out = out;
        this.serverHeap = serverHeap;
        this.clientHeap = clientHeap;
        this.jvmArgs = List.copyOf(jvmArgs);
        this.serverThreads = serverThreads;
        this.clientThreads = clientThreads;
        this.connectRate = connectRate;
        this.maxPerProcess = maxPerProcess;
        this.basePort = basePort;
        this.targets = List.copyOf(targets);
        this.targetMetrics = List.copyOf(targetMetrics);
        this.demoServerJar = demoServerJar;
        this.loadTestJar = loadTestJar;
    }

    /** The java launcher of this JVM: children run on the same JDK. */
    static String javaCommand() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** A child JVM of this plan up to its main class: java, -Xmx, the --jvm-arg flags, the load test's jar. */
    List<String> childJvm(String heap) {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaCommand());
        cmd.add("-Xmx" + heap);
        cmd.addAll(jvmArgs);
        cmd.add("-cp");
        cmd.add(loadTestJar.toString());
        return cmd;
    }

    /** How long the connect phase may take before the run is abandoned: twice the planned time plus a minute. */
    long connectBudgetNanos() {
        return (long) (scenario.connections / connectRate * 2e9) + 60_000_000_000L;
    }
}
