/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * The connection load test: N connections against the demo server, Heartbeat and Netty's
 * {@code IdleStateHandler} side by side, with the report that shows which is better. The
 * microbenchmarks are in the parent package (JMH, {@code benchmarks.jar}); this package is
 * {@code load-test.jar}:
 *
 * <pre>
 * ./mvnw -B package
 * java -jar load-test/target/load-test.jar --help
 * java -jar load-test/target/load-test.jar --out reports/100k      # 100,000 tcp connections, heartbeat vs netty
 * </pre>
 *
 * <h2>Shape</h2>
 * {@link dev.heartbeat.loadtest.LoadTest} (the command line) runs each implementation
 * through a coordinator: {@code TcpCoordinator} starts demo-server processes and
 * {@link dev.heartbeat.loadtest.ClientWorker} processes (as many as the open-file limit
 * needs); {@code LocalCoordinator} starts one {@link dev.heartbeat.loadtest.LocalWorker}
 * JVM holding the server pipeline and the clients on Netty's local transport. Every child talks to
 * the coordinator in JSON lines on stdout and takes commands on stdin ({@code ChildProcess} and
 * {@code ParentLink}); the client side of both transports is the same {@code ClientDriver}, one
 * {@code ClientLoop} per event loop and one small {@code ClientConnection} handler per connection.
 * {@code Report}, {@code HtmlReport} and {@code SvgChart} write the results.
 *
 * <h2>Threads</h2>
 * The coordinator is one thread (plus a stdout reader per child). In a client process, connecting is
 * done by the main thread; everything about a connection after that runs on its event loop, in plain
 * fields ({@code ClientLoop}); progress counters are {@code LongAdder}s read by a reporting thread;
 * the run window is published once through volatile fields ({@code RunWindow}); totals are handed
 * over by a task run on each loop and awaited.
 *
 * <h2>Clocks</h2>
 * Every process reads {@link java.lang.System#nanoTime()}, which on Linux is the machine-wide
 * CLOCK_MONOTONIC, so the coordinator hands absolute moments to the clients, and a close seen by a
 * client compares with the moment the client itself computed from what it did.
 */
package dev.heartbeat.loadtest;
