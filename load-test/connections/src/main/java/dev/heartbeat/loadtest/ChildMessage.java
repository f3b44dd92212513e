/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;

/**
 * What a child process ({@link ClientWorker}, {@link LocalWorker}) tells the coordinator, one JSON
 * object per stdout line ({@link ParentLink#send}, read by {@link ChildProcess}); {@code type} names
 * the record.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
    @JsonSubTypes.Type(value = ChildMessage.ProgressUpdate.class, name = "progress"),
    @JsonSubTypes.Type(value = ChildMessage.Connected.class, name = "connected"),
    @JsonSubTypes.Type(value = ChildMessage.HeapMeasured.class, name = "heap"),
    @JsonSubTypes.Type(value = ChildMessage.Running.class, name = "running"),
    @JsonSubTypes.Type(value = ChildMessage.Result.class, name = "result"),
    @JsonSubTypes.Type(value = ChildMessage.Failed.class, name = "error")})
sealed interface ChildMessage {

    /** Running totals, every 500 ms ({@link ClientProgress}). */
    record ProgressUpdate(String phase, long attempted, long connected, long failed, long closed, long premature,
            long unexpected, long echoes) implements ChildMessage {

        /** The counts of several children added up (nulls, children not heard from yet, count as 0). */
        static ProgressUpdate sum(List<ProgressUpdate> updates) {
            ProgressUpdate t = new ProgressUpdate("total", 0, 0, 0, 0, 0, 0, 0);
            for (ProgressUpdate u : updates) {
                if (u != null) {
                    t = new ProgressUpdate(t.phase, t.attempted + u.attempted, t.connected + u.connected,
                            t.failed + u.failed, t.closed + u.closed, t.premature + u.premature,
                            t.unexpected + u.unexpected, t.echoes + u.echoes);
                }
            }
            return t;
        }
    }

    /** Every connection of the child is up or has failed; {@code transport} is epoll or nio (tcp clients). */
    record Connected(long connected, long failed, String transport) implements ChildMessage {
    }

    /** A local run's heap per connection, once measured. */
    record HeapMeasured(double bytesPerConnection) implements ChildMessage {
    }

    /** A local run's window on the shared clock. */
    record Running(long startNs, long endNs) implements ChildMessage {
    }

    /** The clients' verdicts and histograms; {@code server} only from a local run (null from tcp clients). */
    record Result(ClientResult result, LocalServer server) implements ChildMessage {
    }

    /** The child failed; it exits next. */
    record Failed(String message) implements ChildMessage {
    }

    /**
     * What a local run measured of its server: live heap before and after connecting, CPU
     * (nanoseconds) of the server's threads, Heartbeat's worker (null for the other implementations)
     * and the whole process over the run window, the server's counters over the window, and the
     * samples a TCP server's {@code /metrics} would have of its closes per reason and ping round trips
     * at the window's end ({@link ServerMetrics#of}), and the connections its drain took (null: no drain).
     */
    record LocalServer(long heapBeforeBytes, long heapAfterBytes, long connectionsAtHeap, long idleClosesAtHeap,
            long pingsAtHeap, long serverCpuNs, Long workerCpuNs, long processCpuNs, long connectServerCpuNs,
            Map<String, Double> counters, long pingsSent, long idleCloses, long openAtEnd,
            Map<String, Double> metricsAtEnd, Long drainRequested, Map<String, Double> loopLagInWindow) {
    }
}
