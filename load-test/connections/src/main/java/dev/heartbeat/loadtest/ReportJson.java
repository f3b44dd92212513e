/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import org.HdrHistogram.Histogram;

/**
 * {@code report.json}: every number of a load test, the encoded histograms and the goals as measured.
 * Records only; {@link JsonCodec} names their components in snake_case. Null stands for "not measured".
 */
record ReportJson(String tool, String command, String startedAt, Double wallSeconds, Machine machine,
        ScenarioPart scenario, SettingsPart settings, Map<String, Map<String, Run>> results,
        Map<String, List<Report.Goal>> goals, Map<String, MechanismCost> mechanismCost, Check check) {

    record Machine(int cores, Long memoryBytes, String os, String java, String netty, long openFileLimit) {
    }

    /** The scenario's settings, and what follows from them. */
    record ScenarioPart(@JsonUnwrapped Scenario.Settings settings, double closeWindowMs, double graceMs,
            double tickMs, double activeRatePerSecond, String description) {
    }

    record SettingsPart(String transport, List<String> compare, String serverHeap, String clientHeap,
            List<String> jvmArgs, int serverThreads, int clientThreads, double connectRatePerSecond,
            int maxConnectionsPerProcess, List<String> targets) {
    }

    record Check(boolean passed, List<String> failures) {
    }

    /**
     * Per transport, with {@code --compare heartbeat,netty,none}: each implementation's event loops + worker + GC
     * from {@code /proc}, their excess over none, Heartbeat's over {@code IdleStateHandler}'s, and the JIT threads'
     * excess over none apart ({@link dev.heartbeat.loadtest.MechanismCost}). Seconds; null: not measured.
     */
    record MechanismCost(Double heartbeatSeconds, Double nettySeconds, Double noneSeconds, Double heartbeatOverNone,
            Double nettyOverNone, Double heartbeatOverNettyRatio, Double heartbeatJitOverNone,
            Double nettyJitOverNone) {
    }

    /** One implementation on one transport ({@link RunResult}). */
    record Run(int connections, long connected, long connectFailures, long prematureCloses, long expectedCloses,
            long observedCloses, long leftOpen, long unexpectedCloses, long wrongReasonCloses,
            CloseReasons closeReasons, Rtt pingRttMs, Lateness latenessMs, Double earliestPrematureMs,
            Echo echoLatencyUs, Double heapBytesPerConnection, Double serverCpuSeconds, Double workerCpuSeconds,
            Double connectSeconds, Double connectServerCpuSeconds, Double processCpuSeconds,
            Double otherProcessesCpuSeconds, ConnectTime connectTimeMs, Heap heap, Server server,
            Map<String, Double> serverCountersInRun, int clientProcesses, Echoes echoes, Map<String, RoleCounts> byRole,
            long clientErrors, Double wallSeconds, List<String> failureSamples, Map<String, Long> connectFailureCauses,
            List<String> notes, Percentiles percentiles, Histograms histograms, MachineCpu machineCpu,
            ServerThreads serverThreads, Edge edge, Soak soak, Flooders flooders, Aged aged, Storm storm,
            Stalled stalled, SlowReaders slowReaders, Drain drain, List<PerSecondHistograms.Second> echoPerSecond,
            LoopLag loopLagUs) {
    }

    /**
     * The servers' event-loop lag in the window ({@code --loop-lag}; null without it): p50, p99, p99.9
     * from the buckets of the window's histogram and its max, in microseconds, and the samples.
     */
    record LoopLag(Double p50, Double p99, Double p999, Double max, long count) {
    }

    /**
     * A rate over time ({@link PerSecond}): the count of each second from the first with an event to the
     * last, the most in one second, the mean over those seconds and the peak over the mean (1: even).
     */
    record Rate(List<Long> series, long total, long peak, Double mean, Double peakOverMean) {

        static Rate of(PerSecond p) {
            return new Rate(p.series(), p.total(), p.peak(), RunResult.round(p.mean()),
                    RunResult.round(p.peakOverMean()));
        }
    }

    /**
     * Max age (null unless the servers aged connections): the ages the jitter allows and the grace, the
     * closes judged as max-age closes (every role), the late ones, the reconnects and their rate per
     * second (spread by the jitter, or a burst), the age at each goodbye (from the connect's completion,
     * in seconds), how far each close came after the longest age plus the grace (ms, 0 if before), and
     * the closes of silent and dead dying connections whose idle close was due, in the grace
     * ({@code idleClosesInGrace}) and at or after its end as the client counts it ({@code idleDueAfterGrace}).
     */
    record Aged(long connected, Double minAgeS, Double maxAgeS, Double graceS, Double latenessBoundMs, long closes,
            long late, long reconnects, long idleClosesInGrace, long idleDueAfterGrace, Rate reconnectsPerSecond,
            Double ageAtGoodbyeMinS, Double ageAtGoodbyeP50S,
            Double ageAtGoodbyeMaxS, Lateness closeAfterLongestAgeMs) {
    }

    /**
     * Storm (null unless {@code --storm}): the budget over the servers and each one's share, the most
     * actions their buckets allow in a whole second, the servers' pings and closes the clients saw per
     * second (together, and the closes), the servers' deferred actions and worst deferral, the busiest
     * second one server counted against what its bucket allows, and the last close's lateness against the
     * budget's bound (null without a budget).
     */
    record Storm(int budgetTotal, int budgetPerServer, int servers, Long allowedPerSecond, Rate actionsPerSecond,
            Rate closesPerSecond, Rate pingsPerSecond, Long deferredActions, Double worstDeferralMs,
            Long busiestServerSecond, Long busiestServerSecondAllowed, Double latenessMaxMs, Double latenessBoundMs) {
    }

    /**
     * The stalled connections' (never reading, writing until unwritable): connections, bytes they wrote
     * before stalling, closes seen, closes on time by servers that close write stalls (Heartbeat's), those
     * still open the close window after their last write (they read again then, see
     * {@code ClientLoop#wakeStalled}), and the time from each one's last write to the close it saw, in
     * milliseconds. Null without stalled connections.
     */
    record Stalled(long connected, long bytesWritten, long closed, long closedOnTime, long readAgain,
            double writeStallMs, Lateness closeAfterLastWriteMs) {
    }

    /**
     * The slowreaders' (writing as stalled ones, reading once every {@code readEveryMs}, a small fraction of
     * the write stall): connections, those closed (a failure unless they had read too little in a write stall
     * before the close to be sure to move the server's outbound buffer: {@code closedReadsStalled}), bytes written
     * and read back, the mean read rate of one (bytes a second: all they read over all the time they read for), how
     * many stayed unwritable for longer than the write stall, the most echoes
     * any had not read back at once, and the longest any stayed unwritable. Null without slowreaders.
     */
    record SlowReaders(long connected, long closed, long closedReadsStalled, long bytesWritten,
            long bytesRead, Double readBytesPerSecond, long backedUp, long maxEchoBacklogBytes,
            Double longestUnwritableMs, double readEveryMs, double writeStallMs) {
    }

    /**
     * {@code --drain}: its window, when it started after the window's start, the connections the servers
     * said they were draining (null: not known), the closes the clients saw as the drain's, those per
     * second of the shared clock from the first to the last, their peak and mean (over those seconds),
     * peak / mean, and the most a second may have for {@code --check} (1.5 x drained / window, plus one).
     * Null without a drain.
     */
    record Drain(double windowMs, double startMs, Long draining, long drained, List<Long> perSecond, long peak,
            Double mean, Double peakOverMean, long checkPeakLimit) {
    }

    /**
     * The flooders' (pinging too often, closed by the servers' ping policing): connections, pings
     * written (a burst of {@link Scenario#FLOOD_BURST} each, and another every
     * {@link Scenario#floodPeriodNanos} until the client sees the close), closes seen, closes after more
     * pings than the servers forgive with {@code PING_ABUSE} named (MQTT: none), and the time from each
     * one's latest burst to the close it saw, in milliseconds.
     */
    record Flooders(long connected, long pingsSent, long closed, long closedForPingAbuse,
            Lateness closeAfterLastPingMs) {
    }

    /**
     * Soak ({@code --churn-rate}): connections the clients closed and reopened, the servers' heap after
     * a full GC at moments of the window, and its least-squares slope in bytes per minute.
     */
    record Soak(long churned, long reopened, List<RunResult.HeapSample> heapSamples, Double heapSlopeBytesPerMinute) {
    }

    /**
     * The edge roles' own counts: over-long lines sent (longline, trickle) and the decoder's closes of
     * them with the longest delay after the line, the ping flood's PINGs and PONGs, junk lines sent and
     * echoed.
     */
    record Edge(long overLongLines, long lineCloses, Double lineCloseMaxMs, long floodPingsSent, long floodPongs,
            long junkLinesSent, long junkEchoes) {
    }

    /**
     * The machine's CPU over the run window ({@code /proc/stat}, summed over the cores), and busy split
     * into the servers, the clients, this coordinator (harness) and everything else; of everything else,
     * the kernel's ksoftirqd threads, processes of earlier runs, processes that exited in the window (whole
     * lives, from their parents' cutime and cstime) and the busiest other processes; and the cores times
 * the window less the states' sum (what the kernel's tick-based accounting missed, or over-counted
 * if negative). Seconds.
     */
    record MachineCpu(Double windowSeconds, Double busySeconds, Double userSeconds, Double niceSeconds,
            Double systemSeconds, Double irqSeconds, Double softirqSeconds, Double stealSeconds, Double idleSeconds,
            Double iowaitSeconds, Double serversSeconds, Double clientsSeconds, Double harnessSeconds,
            Double everythingElseSeconds, Double ksoftirqdSeconds, Double previousRunsSeconds,
            int previousRunsProcessesLeft, Double exitedInWindowSeconds, List<OtherProcess> busiestOtherProcesses,
            Double missingSeconds) {
    }

    record OtherProcess(long pid, String name, Double cpuSeconds) {
    }

    /**
     * The server processes' threads over the run window ({@code /proc/<pid>/task}), by kind, and the
     * wake-ups (voluntary context switches) of the event loops and of Heartbeat's worker, next to the
     * worker's own wake-up counter. Seconds; wake-ups per second.
     */
    record ServerThreads(Double cpuSeconds, Double eventLoopsSeconds, Double heartbeatWorkerSeconds,
            Double gcSeconds, Double jitSeconds, Double otherSeconds, Double clientLoopsSeconds, long eventLoopWakeups,
            Double eventLoopWakeupsPerSecond, Long heartbeatWorkerWakeups,
            Double heartbeatWorkerWakeupsPerSecondPerProcess, Double heartbeatWorkerCounterWakeupsPerSecondPerProcess) {
    }

    record Lateness(Double p50, Double p99, Double max, long count) {
    }

    record Echo(Double p50, Double p99, Double p999, Long max, long count) {
    }

    record ConnectTime(Double p50, Double p99, Double max) {
    }

    record Heap(Long beforeBytes, Long afterBytes, long connectionsAtMeasurement) {
    }

    record Server(String transport, int processes, Long pingsSent, Long pingsSentInWindow, Long idleCloses) {
    }

    record Echoes(long sent, long received, long recorded) {
    }

    /** A role's counts; {@code closeReasons}: its closes by the reason the server's goodbye named ("none": none). */
    record RoleCounts(long connected, long closed, long pingsReceived, Map<String, Long> closeReasons) {
    }

    /**
     * Server closes by reason: as the clients were told (their goodbyes; "none": closes without one) and
     * as the servers counted them ({@code null}: not read).
     */
    record CloseReasons(Map<String, Long> toldClients, Map<String, Long> countedByServers) {
    }

    /**
     * The servers' ping round trips in milliseconds: p50 and p99 read from their histograms (buckets
     * 19% wide, interpolated), the largest exactly; null without a sample.
     */
    record Rtt(Double p50, Double p99, Double max, long count) {
    }

    /** {@code [percentile, microseconds]} pairs, for charts. */
    record Percentiles(List<double[]> latenessUs, List<double[]> echoLatencyUs) {
    }

    /** The whole distributions, HdrHistogram's compressed encoding in base64. */
    record Histograms(Histogram latenessUs, Histogram echoLatencyUs, Histogram connectTimeUs) {
    }
}
