/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Running totals of one client process for the live progress line: bumped by event loops and the
 * connecting thread (LongAdder: no contention), read by the reporting thread. Approximate while
 * counting; the exact figures of a run come from {@link ClientResult}.
 */
final class ClientProgress {

    /** Causes of failed connects kept by message, at most this many different ones. */
    private static final int MAX_CAUSES = 10;

    final LongAdder attempted = new LongAdder();
    final LongAdder connected = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder closed = new LongAdder();
    final LongAdder premature = new LongAdder();
    final LongAdder unexpected = new LongAdder();
    final LongAdder echoes = new LongAdder();
    private final Map<String, LongAdder> failureCauses = new ConcurrentHashMap<>();

    /** Counts a connection that could not be opened, by the first line of its cause. */
    void connectFailed(Throwable cause) {
        failed.increment();
        String message = cause == null ? "unknown" : cause.getClass().getSimpleName() + ": " + cause.getMessage();
        int nl = message.indexOf('\n');
        if (nl >= 0) {
            message = message.substring(0, nl);
        }
        LongAdder count = failureCauses.get(message);
        if (count == null && failureCauses.size() < MAX_CAUSES) {
            count = failureCauses.computeIfAbsent(message, k -> new LongAdder());
        }
        if (count != null) {
            count.increment();
        }
    }

    /** The failure causes and their counts. */
    Map<String, Long> failureCauses() {
        Map<String, Long> out = new LinkedHashMap<>();
        failureCauses.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    /** The progress message a child process prints. */
    ChildMessage.ProgressUpdate update(String phase) {
        return new ChildMessage.ProgressUpdate(phase, attempted.sum(), connected.sum(), failed.sum(), closed.sum(),
                premature.sum(), unexpected.sum(), echoes.sum());
    }
}
