/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.heartbeat.netty.CloseReason;
import org.HdrHistogram.Histogram;

// Over 500 lines (listed in checkstyle.xml): the unit of report.json: every measured field with its merge and JSON
// form.
/**
 * The outcome of one implementation on one transport: the clients' verdicts and histograms
 * ({@link ClientResult}, merged over every client process) and the servers' heap and CPU. The unit
 * of {@code report.json}. Filled in by a coordinator, then read-only; one thread at a time.
 */
final class RunResult {

    final String impl;
    final String transport;
    final int connections;
    ClientResult client = new ClientResult();

    /** Heap used after a full GC, summed over the servers, before connecting and with every connection up. */
    long heapBeforeBytes = -1;
    long heapAfterBytes = -1;
    /** Connections the servers held when the heap was measured. */
    long connectionsAtHeap;
    /** Server CPU time over the run window: whole processes (tcp) or the server's threads (local). */
    double serverCpuSeconds = Double.NaN;
    /** Heartbeat's worker thread over the run window; NaN for the other implementations. */
    double workerCpuSeconds = Double.NaN;
    /** Server CPU time while the connections were being opened. */
    double connectServerCpuSeconds = Double.NaN;
    /** Whole-process CPU over the run window (local runs: client, server, GC and JIT together). */
    double processCpuSeconds = Double.NaN;
    /**
     * CPU seconds that processes other than the load test's own used during the run window (another
     * build, a benchmark): NaN if unknown. Large values mean the comparison was disturbed.
     */
    double otherCpuSeconds = Double.NaN;
    /** The run window's length in seconds. */
    double windowSeconds = Double.NaN;
    /** Where the machine's CPU went over the run window, the server threads' split; null if not measured. */
    CpuSplit cpu;
    /** Pings the servers sent from their start to the end of the run window, first and re-sent; -1: unknown. */
    long pingsSent = -1;
    /**
     * Of {@link #pingsSent}, the ones sent within the run window (tcp; the connect phases of two
     * implementations differ in length, so only these compare); -1: unknown.
     */
    long pingsSentInWindow = -1;
    /** The connections the servers said they were draining ({@code --drain}), summed; null: no drain. */
    Long drainRequested;
    long idleCloses = -1;
    int serverProcesses;
    int clientProcesses;
    /** "epoll", "nio" or "local". */
    String serverTransport = "";
    double wallSeconds;
    final List<String> notes = new ArrayList<>();
    /**
     * What the servers counted over the run window, summed over them: GC time, and Heartbeat's worker
     * wake-ups, cycles, expirations and re-arms (what its CPU time pays for).
     */
    final Map<String, Double> serverCounters = new LinkedHashMap<>();
    /** The servers' closes per reason and ping round trips at the end of the window, summed over them. */
    final ServerMetrics serverMetrics = new ServerMetrics();
    /** The servers' event-loop lag in the window ({@code --loop-lag}; no samples without it). */
    final ServerLoopLag loopLag = new ServerLoopLag();
    /** Soak: the servers' heap after a full GC during the window, summed over them, oldest first. */
    final List<HeapSample> heapSamples = new ArrayList<>();

    /**
     * One soak sample: seconds into the run window, heap used after a full GC, connections held, and
     * the servers' CPU and Heartbeat's worker CPU since the window started (null: not measured),
     * summed over the servers.
     */
    record HeapSample(double seconds, long heapBytes, long connections, Double serverCpuSeconds,
            Double workerCpuSeconds) {
    }

    /**
     * The least-squares slope of {@link #heapSamples} in bytes per minute; NaN with fewer than two.
     * A leak shows as a slope that does not fall towards 0 as the soak gets longer.
     */
    double heapSlopeBytesPerMinute() {
        int n = heapSamples.size();
        if (n < 2) {
            return Double.NaN;
        }
        double mt = 0;
        double mh = 0;
        for (HeapSample h : heapSamples) {
            mt += h.seconds() / n;
            mh += (double) h.heapBytes() / n;
        }
        double cov = 0;
        double var = 0;
        for (HeapSample h : heapSamples) {
            cov += (h.seconds() - mt) * (h.heapBytes() - mh);
            var += (h.seconds() - mt) * (h.seconds() - mt);
        }
        return var == 0 ? Double.NaN : cov / var * 60;
    }

    /** The names of {@link #serverCounters}. */
    static final String GC_SECONDS = "gc_seconds";
    static final String WAKEUPS = "heartbeat_wakeups";
    static final String CYCLES = "heartbeat_cycles";
    static final String EXPIRATIONS = "heartbeat_expirations";
    static final String REARMS = "heartbeat_rearms";
    static final String STALL_RECHECKS = "heartbeat_stall_rechecks";

    RunResult(String impl, String transport, int connections) {
        this.impl = impl;
        this.transport = transport;
        this.connections = connections;
    }

    /**
     * Records where the machine's CPU went over the window (nothing where {@code /proc} could not be
     * read), with notes when other processes took more than a tenth of a core on average, or when an
     * earlier run's processes were still there.
     */
    void cpu(CpuSplit split) {
        cpu = split;
        if (split == null) {
            return;
        }
        double window = split.windowSeconds;
        otherCpuSeconds = Math.max(0, split.everythingElse);
        if (otherCpuSeconds > DISTURBED_CORE_SHARE * window) {
            notes.add(String.format(Locale.ROOT, "other processes on the machine used %.1f CPU seconds "
                    + "during the %.0f s run window (%.0f%% of a core): the measurements are disturbed",
                    otherCpuSeconds, window, 100 * otherCpuSeconds / window));
        }
        notes.add(String.format(Locale.ROOT, "everything else in the window (%.2f s): ksoftirqd %.2f s, steal %.2f s,"
                + " earlier runs' processes %.2f s, processes that exited in the window about %.2f s (their whole"
                + " lives); the busiest other processes: %s", split.everythingElse, split.ksoftirqd,
                CpuSplit.seconds(split.machine.steal()), split.previousRuns, split.exitedChildren,
                split.describeOthers()));
        if (Math.abs(split.missingSeconds) > 0.01 * split.machine.cores() * window) {
            notes.add(String.format(Locale.ROOT, "/proc/stat's states add up to %.1f s where the window has %.1f"
                    + " core-seconds: the kernel's tick-based accounting of busy time is off by %.1f s, and so are"
                    + " machine busy and everything else (a negative everything else is this); the per-process"
                    + " figures are the scheduler's own runtimes", split.machine.total() / MachineCpu.TICKS_PER_SECOND,
                    split.machine.cores() * window, split.missingSeconds));
        }
        if (split.previousLeft > 0) {
            notes.add(split.previousLeft + " processes of an earlier run had not exited when the window started");
        }
    }

    /** Other processes above this share of one core over the run window disturb the measurements. */
    static final double DISTURBED_CORE_SHARE = 0.1;

    /**
     * The CPU seconds other processes took in the run window if that disturbed the measurements (more
     * than {@link #DISTURBED_CORE_SHARE} of a core on average, as the notes say), else 0.
     */
    double disturbingCpuSeconds() {
        double window = cpu != null ? cpu.windowSeconds : windowSeconds;
        return otherCpuSeconds > DISTURBED_CORE_SHARE * window ? otherCpuSeconds : 0;
    }

    /** A server counter over the run window, or NaN if not measured. */
    double serverCounter(String name) {
        Double v = serverCounters.get(name);
        return v == null ? Double.NaN : v;
    }

    /** Heap per connection in bytes, or NaN if not measured. */
    double heapBytesPerConnection() {
        if (heapBeforeBytes < 0 || heapAfterBytes < 0 || connectionsAtHeap <= 0) {
            return Double.NaN;
        }
        return (double) (heapAfterBytes - heapBeforeBytes) / connectionsAtHeap;
    }

    /** The first connect attempt to the last connection up, in seconds. */
    double connectSeconds() {
        if (client.connectStartNanos == 0 || client.connectEndNanos == 0) {
            return Double.NaN;
        }
        return (client.connectEndNanos - client.connectStartNanos) / 1e9;
    }

    double latenessMillis(double percentile) {
        return Histograms.percentileMillis(client.lateness, percentile);
    }

    double echoMicros(double percentile) {
        return Histograms.percentileMicros(client.echoLatency, percentile);
    }

    /** Whether the implementation handles idleness at all (so closes are expected). */
    boolean handlesIdleness() {
        return !Scenario.NONE.equals(impl);
    }

    /**
     * What fails a {@code --check}: premature, unexpected, late and missing closes, connections never
     * opened.
     */
    List<String> checkFailures() {
        List<String> f = new ArrayList<>();
        String who = impl + "/" + transport + ": ";
        if (client.premature > 0) {
            f.add(who + client.premature + " premature closes (the earliest "
                    + round(client.earliestPrematureNanos / 1e6)
                    + " ms before it was due)");
        }
        if (client.leftOpen > 0) {
            f.add(who + client.leftOpen + " connections due to be closed (silent, dying, half-open, flooders, "
                    + "stalled, over-long lines, every one with --drain) left open");
        }
        if (client.unexpected > 0) {
            f.add(who + client.unexpected + " connections that should have stayed open were closed");
        }
        if (client.late > 0) {
            f.add(who + client.late + " max-age closes came later than the longest age the jitter allows, the grace "
                    + "and " + Scenario.format(Scenario.AGE_LATENESS_NANOS) + " after the connect");
        }
        if (client.wrongReason > 0) {
            f.add(who + client.wrongReason + " connections were closed on time but told another reason than their "
                    + "role's (the samples say which)");
        }
        long abuseOfOthers = client.goodbyes(CloseReason.PING_ABUSE)
                - client.goodbyesByRole[Role.FLOODER.ordinal()][ClientResult.goodbyeIndex(CloseReason.PING_ABUSE)];
        if (abuseOfOthers > 0) {
            f.add(who + abuseOfOthers + " connections of other roles than flooder were told " + CloseReason.PING_ABUSE);
        }
        // a stalled connection does not read: it cannot be told; a slowreader's close is judged by its reads
        long stallOfOthers = client.goodbyes(CloseReason.WRITE_STALL)
                - client.goodbyesByRole[Role.SLOWREADER.ordinal()][ClientResult.goodbyeIndex(CloseReason.WRITE_STALL)];
        if (stallOfOthers > 0) {
            f.add(who + stallOfOthers + " connections of other roles than stalled and slowreader were told "
                    + CloseReason.WRITE_STALL);
        }
        if (client.connectedByRole[Role.PINGFLOOD.ordinal()] > 0 && client.floodPongs == 0) {
            f.add(who + "the server answered none of the " + client.floodPingsSent + " PINGs of the ping flood");
        }
        if (client.connectedByRole[Role.JUNK.ordinal()] > 0 && client.junkEchoes == 0) {
            f.add(who + "none of the " + client.junkLinesSent + " junk lines came back");
        }
        long slow = client.connectedByRole[Role.SLOWREADER.ordinal()];
        if (slow > 0 && client.slowBackedUp == 0) { // its closes are unexpected ones: counted above
            f.add(who + "none of the " + slow + " slowreaders stayed unwritable for longer than the write stall "
                    + "(the longest: " + client.slowLongestUnwritableNanos / 1_000_000 + " ms): the servers' echoes "
                    + "never backed up behind one for that long");
        }
        if (client.connectFailures > 0) {
            f.add(who + client.connectFailures + " of " + connections + " connections could not be opened: "
                    + client.connectFailureCauses);
        }
        long aged = client.connectedByRole[Role.AGED.ordinal()];
        if (aged > 0 && client.ageReconnects == 0) {
            f.add(who + "none of the " + aged + " aged connections was closed for its max age and reconnected");
        }
        if (client.connected + client.connectFailures < connections) {
            f.add(who + "only " + client.connected + " of " + connections + " connections were accounted for");
        }
        return f;
    }

    /**
     * Storm with an action budget ({@link Scenario#actionBudget}): no server's budget may have handed over
     * more in a whole second of its clock than its bucket can ({@link Scenario#actionsPerSecondBoundPerServer},
     * the servers' own count), no whole second of the clients' may have seen more of the servers' pings and
     * closes than their buckets can hand over and a delivery skew can move
     * ({@link Scenario#clientSeenActionsPerSecondBound}),
     * and the last close may be no later than the budget makes it by design
     * ({@link Scenario#stormLatenessBoundNanos}). Nothing without a budget, or for another impl.
     */
    List<String> stormFailures(Scenario s) {
        if (s == null) {
            return new ArrayList<>();
        }
        List<String> f = new ArrayList<>();
        if (!s.storm || s.actionBudget <= 0 || !Scenario.HEARTBEAT.equals(impl) || serverProcesses < 1) {
            return f;
        }
        String who = impl + "/" + transport + ": ";
        long perServer = s.actionsPerSecondBoundPerServer(serverProcesses);
        if (serverMetrics.busiestBudgetSecond > perServer) {
            f.add(who + "storm: a server's budget handed over " + serverMetrics.busiestBudgetSecond
                    + " actions in one second of its clock, more than its bucket allows (" + perServer + ")");
        }
        PerSecond actions = stormActions();
        long allowed = s.clientSeenActionsPerSecondBound(serverProcesses);
        if (actions.peak() > allowed) {
            f.add(who + "storm: the clients saw " + actions.peak() + " pings and closes in one second, more than the "
                    + serverProcesses + " servers' buckets allow (" + s.actionsPerSecondBound(serverProcesses)
                    + ") and " + Scenario.STORM_DELIVERY_SKEW_NANOS / 1_000_000 + " ms of delivery (" + allowed + "): "
                    + actions);
        }
        long bound = s.stormLatenessBoundNanos(serverProcesses);
        long max = client.lateness.getTotalCount() == 0 ? 0 : client.lateness.getMaxValue() * 1000;
        if (max > bound) {
            f.add(who + "storm: a close came " + round(max / 1e6) + " ms late, more than the budget's bound of "
                    + round(bound / 1e6) + " ms");
        }
        return f;
    }

    /** Storm: the servers' pings and closes the clients saw, per second. */
    PerSecond stormActions() {
        return new PerSecond().add(client.closesPerSecond).add(client.pingsPerSecond);
    }

    /**
     * The servers' closes per reason against what the clients were told: every close a server counted
     * for a reason must be a close a client saw with a goodbye naming it, and no more. A protocol
     * without a goodbye (MQTT) has every server close counted for the scenario's idle reason, as many
     * as the clients saw of the other roles than flooder, and for {@code PING_ABUSE} as many as they saw
     * of flooders. Nothing if the servers' counts were not read.
     */
    List<String> closeReasonFailures(Scenario s) {
        List<String> f = new ArrayList<>();
        if (!serverMetrics.hasCloses()) {
            return f;
        }
        String who = impl + "/" + transport + ": ";
        // Connections go on ageing while the two counts are read, a few ms apart: max-age closes may differ by
        // the most the clients saw in any one second.
        long ageSlack = s.agesConnections() ? client.reconnectsPerSecond.peak() : 0;
        if (s.expectedGoodbye() != null) {
            // a stalled connection does not read: its close comes without the goodbye, for WRITE_STALL
            // from Heartbeat, for idleness from the others
            CloseReason stallReason = Scenario.HEARTBEAT.equals(impl) ? CloseReason.WRITE_STALL : s.idleCloseReason();
            // a slowreader closed for a write stall is rarely told: its goodbye waits behind the echoes it did not read
            long stallsUntold = client.goodbyesByRole[Role.STALLED.ordinal()][ClientResult.goodbyeIndex(null)]
                    + (Scenario.HEARTBEAT.equals(impl)
                    ? client.goodbyesByRole[Role.SLOWREADER.ordinal()][ClientResult.goodbyeIndex(null)] : 0);
            // Silent connections and dead dying ones told MAX_AGE and closed once their idle close was due, in their
            // grace or after it (ClientResult.idleClosesInGrace, idleDueAfterGrace): each may be counted by the
            // servers for the idle reason instead; as many as they counted so move between the two.
            CloseReason idle = s.idleCloseReason();
            long eitherReason = client.idleClosesInGrace + client.idleDueAfterGrace;
            long moved = Math.max(0, Math.min(eitherReason, serverMetrics.closes(idle) - client.goodbyes(idle)));
            for (CloseReason r : CloseReason.values()) {
                long server = serverMetrics.closes(r);
                long told = client.goodbyes(r);
                long expected = told + (r == stallReason ? stallsUntold : 0)
                        + (r == idle ? moved : r == CloseReason.MAX_AGE ? -moved : 0);
                if (Math.abs(server - expected) > (r == CloseReason.MAX_AGE ? ageSlack : 0)) {
                    f.add(who + "the servers counted " + server + " closes for " + r + ", the clients were told " + r
                            + " " + told + " times" + (r == stallReason && stallsUntold > 0 ? " and saw "
                            + stallsUntold + " stalled (and slowreader) connections closed untold" : "")
                            + (eitherReason > 0 && (r == idle || r == CloseReason.MAX_AGE)
                            ? " (" + eitherReason + " silent or dying connections told " + CloseReason.MAX_AGE
                            + " were closed once their idle close was due, " + client.idleClosesInGrace
                            + " of them in their grace)"
                            : ""));
                }
            }
            return f;
        }
        CloseReason r = s.idleCloseReason();
        long flooders = client.closedByRole[Role.FLOODER.ordinal()];
        long aged = client.ageCloses;
        long seen = -flooders - aged;
        for (long n : client.closedByRole) {
            seen += n;
        }
        long abuse = serverMetrics.closes(CloseReason.PING_ABUSE);
        long maxAge = serverMetrics.closes(CloseReason.MAX_AGE);
        long drain = serverMetrics.closes(CloseReason.DRAIN);
        long other = serverMetrics.closesTotal() - serverMetrics.closes(r) - abuse - maxAge - drain;
        if (other != 0) {
            f.add(who + "the servers counted " + other + " closes for other reasons than " + r
                    + (s.policesPings() ? " and " + CloseReason.PING_ABUSE : "")
                    + (s.agesConnections() ? " and " + CloseReason.MAX_AGE : "")
                    + (s.drains() ? " and " + CloseReason.DRAIN : "") + ": " + serverMetrics.closes);
        }
        if (Math.abs(maxAge - aged) > ageSlack) {
            f.add(who + "the servers counted " + maxAge + " closes for " + CloseReason.MAX_AGE + ", the clients saw "
                    + aged + " max-age closes");
        }
        if (s.drains()) { // no goodbye: a close after the drain started may be the drain's or the role's own
            if (serverMetrics.closes(r) + abuse + drain != seen + flooders) {
                f.add(who + "the servers counted " + (serverMetrics.closes(r) + abuse + drain) + " closes for " + r
                        + ", " + CloseReason.PING_ABUSE + " and " + CloseReason.DRAIN + ", the clients saw "
                        + (seen + flooders));
            }
            return f;
        }
        if (serverMetrics.closes(r) != seen) {
            f.add(who + "the servers counted " + serverMetrics.closes(r) + " closes for " + r + ", the clients saw "
                    + seen + " closes" + (flooders > 0 ? " of other roles than flooder" : "")
                    + (aged > 0 ? " and not for their max age" : ""));
        }
        if (abuse != flooders) {
            f.add(who + "the servers counted " + abuse + " closes for "
                    + CloseReason.PING_ABUSE + ", the clients saw " + flooders + " closes of flooders");
        }
        return f;
    }

    /**
     * {@code --drain}: the drain must have closed what the servers said they were draining, and spread:
     * no second of the clock with more than {@link #drainPeakLimit}. Nothing without a drain.
     */
    List<String> drainFailures(Scenario s) {
        List<String> f = new ArrayList<>();
        if (!s.drains()) {
            return f;
        }
        String who = impl + "/" + transport + ": ";
        if (drainRequested != null && drainRequested > 0 && client.drained == 0) {
            f.add(who + "the servers said they were draining " + drainRequested + " connections, the clients saw "
                    + "none closed by the drain");
        }
        long limit = drainPeakLimit(s);
        if (client.drainCloses.peak() > limit) {
            f.add(who + "the drain closed " + client.drainCloses.peak() + " connections in one second, more than "
                    + limit + " (1.5 x its mean over the " + Scenario.format(s.drainNanos) + " window, plus one): "
                    + client.drainCloses.series() + " a second");
        }
        return f;
    }

    /**
     * The most drain closes one second of the clock may see: 1.5 x the window's mean (drained over the
     * window in seconds), plus one. Channel i of n gets its slot (i + 1) / n of the way through the window,
     * so a whole second holds n / window of them, one more where a slot falls on its edge; the clients see
     * each close a dispatch after its slot, which can carry some into the next second. Half a second's
     * closes more allows for that, not for a herd: everything at once is window-in-seconds x the mean.
     */
    long drainPeakLimit(Scenario s) {
        return (long) Math.floor(1.5 * client.drained / (s.drainNanos / 1e9)) + 1;
    }

    /** The clients' goodbyes by reason ("none": closes without one) and the servers' closes by reason. */
    ReportJson.CloseReasons closeReasonsJson() {
        Map<String, Long> told = new LinkedHashMap<>();
        for (CloseReason r : CloseReason.values()) {
            if (client.goodbyes(r) > 0) {
                told.put(r.name(), client.goodbyes(r));
            }
        }
        if (client.goodbyes(null) > 0) {
            told.put("none", client.goodbyes(null));
        }
        Map<String, Long> counted = new LinkedHashMap<>();
        serverMetrics.closes.forEach((r, n) -> counted.put(r.name(), n));
        return new ReportJson.CloseReasons(told, serverMetrics.hasCloses() ? counted : null);
    }

    /** The close reasons of one role's connections, as the server's goodbyes named them ("none": no goodbye). */
    Map<String, Long> closeReasons(Role role) {
        Map<String, Long> out = new LinkedHashMap<>();
        long[] byReason = client.goodbyesByRole[role.ordinal()];
        CloseReason[] reasons = CloseReason.values();
        for (int i = 0; i < byReason.length; i++) {
            if (byReason[i] > 0) {
                out.put(i < reasons.length ? reasons[i].name() : "none", byReason[i]);
            }
        }
        return out;
    }

    /** The servers' ping round trips: p50, p99 (from the histogram's buckets) and max, in milliseconds. */
    ReportJson.Rtt rttJson() {
        long n = serverMetrics.rttCount();
        return new ReportJson.Rtt(round(serverMetrics.rttQuantileMillis(0.5)),
                round(serverMetrics.rttQuantileMillis(0.99)), n == 0 ? null : round(serverMetrics.rttMaxMillis()), n);
    }

    /** The servers' event-loop lag in the window, in microseconds; null if not measured ({@code --loop-lag}). */
    ReportJson.LoopLag loopLagJson() {
        long n = loopLag.count();
        return n == 0 ? null : new ReportJson.LoopLag(round(loopLag.quantileMicros(0.5)),
                round(loopLag.quantileMicros(0.99)), round(loopLag.quantileMicros(0.999)),
                round(loopLag.maxMicros()), n);
    }

    /** {@code v} to three decimals; null for NaN (not measured). */
    static Double round(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return null;
        }
        return Math.round(v * 1000) / 1000.0;
    }

    private static Long nullIfNegative(long v) {
        return v < 0 ? null : v;
    }

    /** The JSON of this run of {@code s}, with the objects of its max age, storm, stalled roles and drain. */
    ReportJson.Run toJson(Scenario s) {
        ClientResult c = client;
        Map<String, Double> counters = new LinkedHashMap<>();
        serverCounters.forEach((k, v) -> counters.put(k, round(v)));
        Map<String, ReportJson.RoleCounts> byRole = new LinkedHashMap<>();
        for (Role r : Role.values()) {
            int i = r.ordinal();
            byRole.put(r.label, new ReportJson.RoleCounts(c.connectedByRole[i], c.closedByRole[i], c.pingsByRole[i],
                    closeReasons(r)));
        }
        return new ReportJson.Run(connections, c.connected, c.connectFailures, c.premature, c.expectedCloses,
                c.observedCloses, c.leftOpen, c.unexpected, c.wrongReason, closeReasonsJson(), rttJson(),
                new ReportJson.Lateness(round(latenessMillis(50)), round(latenessMillis(99)),
                        round(Histograms.maxMillis(c.lateness)), c.lateness.getTotalCount()),
                c.premature == 0 ? null : round(c.earliestPrematureNanos / 1e6),
                new ReportJson.Echo(round(echoMicros(50)), round(echoMicros(99)), round(echoMicros(99.9)),
                        c.echoLatency.getTotalCount() == 0 ? null : c.echoLatency.getMaxValue(),
                        c.echoLatency.getTotalCount()),
                round(heapBytesPerConnection()), round(serverCpuSeconds), round(workerCpuSeconds),
                round(connectSeconds()), round(connectServerCpuSeconds), round(processCpuSeconds),
                round(otherCpuSeconds),
                new ReportJson.ConnectTime(round(Histograms.percentileMillis(c.connectTime, 50)),
                        round(Histograms.percentileMillis(c.connectTime, 99)),
                        round(Histograms.maxMillis(c.connectTime))),
                new ReportJson.Heap(nullIfNegative(heapBeforeBytes), nullIfNegative(heapAfterBytes), connectionsAtHeap),
                new ReportJson.Server(serverTransport, serverProcesses, nullIfNegative(pingsSent),
                        nullIfNegative(pingsSentInWindow), nullIfNegative(idleCloses)),
                counters, clientProcesses, new ReportJson.Echoes(c.echoesSent, c.echoesReceived, c.echoesRecorded),
                byRole, c.errors, round(wallSeconds), List.copyOf(c.failureSamples),
                new LinkedHashMap<>(c.connectFailureCauses), List.copyOf(notes),
                new ReportJson.Percentiles(series(Histograms.percentileSeries(c.lateness)),
                        series(Histograms.percentileSeries(c.echoLatency))),
                new ReportJson.Histograms(c.lateness, c.echoLatency, c.connectTime), machineCpuJson(),
                serverThreadsJson(), new ReportJson.Edge(c.overLongLines, c.lineCloses,
                        c.lineCloses == 0 ? null : round(c.lineCloseMaxNanos / 1e6), c.floodPingsSent, c.floodPongs,
                        c.junkLinesSent, c.junkEchoes),
                new ReportJson.Soak(c.churned, c.reopened, List.copyOf(heapSamples),
                        round(heapSlopeBytesPerMinute())), floodersJson(),
                s.agesConnections() ? agedJson(s) : null, s.storm ? stormJson(s) : null, stalledJson(s),
                slowReadersJson(s), drainJson(s), c.echoPerSecond.series(PerSecondHistograms.epochMinusNanoTime()),
                loopLagJson());
    }

    private ReportJson.Aged agedJson(Scenario s) {
        ClientResult c = client;
        Histogram age = c.ageAtGoodbye;
        boolean any = age.getTotalCount() > 0;
        return new ReportJson.Aged(c.connectedByRole[Role.AGED.ordinal()], round(s.minAgeNanos() / 1e9),
                round(s.maxDrawnAgeNanos() / 1e9), round(s.maxAgeGraceNanos / 1e9),
                round(Scenario.AGE_LATENESS_NANOS / 1e6), c.ageCloses, c.late, c.ageReconnects,
                c.idleClosesInGrace, c.idleDueAfterGrace, ReportJson.Rate.of(c.reconnectsPerSecond),
                any ? round(age.getMinValue() / 1e6) : null,
                any ? round(Histograms.percentileMillis(age, 50) / 1e3) : null,
                any ? round(Histograms.maxMillis(age) / 1e3) : null,
                new ReportJson.Lateness(round(Histograms.percentileMillis(c.ageCloseLateness, 50)),
                        round(Histograms.percentileMillis(c.ageCloseLateness, 99)),
                        round(Histograms.maxMillis(c.ageCloseLateness)), c.ageCloseLateness.getTotalCount()));
    }

    private ReportJson.Storm stormJson(Scenario s) {
        int servers = Math.max(1, serverProcesses);
        boolean budget = s.actionBudget > 0 && Scenario.HEARTBEAT.equals(impl);
        long bound = s.stormLatenessBoundNanos(servers);
        return new ReportJson.Storm(s.actionBudget, s.actionBudgetPerServer(servers), servers,
                budget ? s.actionsPerSecondBound(servers) : null, ReportJson.Rate.of(stormActions()),
                ReportJson.Rate.of(client.closesPerSecond), ReportJson.Rate.of(client.pingsPerSecond),
                serverMetrics.deferredActions < 0 ? null : serverMetrics.deferredActions,
                round(serverMetrics.worstDeferralSeconds * 1e3),
                serverMetrics.busiestBudgetSecond < 0 ? null : serverMetrics.busiestBudgetSecond,
                budget ? s.actionsPerSecondBoundPerServer(servers) : null, round(Histograms.maxMillis(client.lateness)),
                budget && bound > 0 ? round(bound / 1e6) : null);
    }

    /** The stalled connections' counts and times to their close; null without any. */
    private ReportJson.Stalled stalledJson(Scenario scenario) {
        ClientResult c = client;
        int i = Role.STALLED.ordinal();
        if (c.connectedByRole[i] == 0) {
            return null;
        }
        return new ReportJson.Stalled(c.connectedByRole[i], c.stalledBytes, c.closedByRole[i], c.stallCloses,
                c.stallsReadAgain, round(scenario.writeStallNanos() / 1e6), new ReportJson.Lateness(
                        round(Histograms.percentileMillis(c.stallCloseTime, 50)),
                        round(Histograms.percentileMillis(c.stallCloseTime, 99)),
                        round(Histograms.maxMillis(c.stallCloseTime)), c.stallCloseTime.getTotalCount()));
    }

    /** The slowreaders' counts, bytes and read rate; null without any. */
    private ReportJson.SlowReaders slowReadersJson(Scenario scenario) {
        ClientResult c = client;
        int i = Role.SLOWREADER.ordinal();
        if (c.connectedByRole[i] == 0) {
            return null;
        }
        return new ReportJson.SlowReaders(c.connectedByRole[i], c.closedByRole[i], c.slowStallCloses,
                c.slowBytesWritten,
                c.slowBytesRead, round(slowReadBytesPerSecond()), c.slowBackedUp, c.slowMaxBacklog,
                round(c.slowLongestUnwritableNanos / 1e6), round(scenario.slowReadPeriodNanos() / 1e6),
                round(scenario.writeStallNanos() / 1e6));
    }

    /** The slowreaders' mean read rate, bytes a second each: all they read over all the time they read for. */
    double slowReadBytesPerSecond() {
        return client.slowReadNanos == 0 ? Double.NaN : client.slowBytesRead / (client.slowReadNanos / 1e9);
    }

    /** The drain's window, start, counts and closes per second; null without a drain. */
    private ReportJson.Drain drainJson(Scenario scenario) {
        if (!scenario.drains()) {
            return null;
        }
        PerSecond p = client.drainCloses;
        return new ReportJson.Drain(round(scenario.drainNanos / 1e6), round(scenario.drainDelayNanos() / 1e6),
                drainRequested, client.drained, p.series(), p.peak(), round(p.mean()), round(p.peakOverMean()),
                drainPeakLimit(scenario));
    }

    /** The flooders' counts, and the time from each one's latest ping to its close. */
    private ReportJson.Flooders floodersJson() {
        ClientResult c = client;
        int i = Role.FLOODER.ordinal();
        return new ReportJson.Flooders(c.connectedByRole[i], c.flooderPings, c.closedByRole[i], c.abuseCloses,
                new ReportJson.Lateness(round(Histograms.percentileMillis(c.abuseCloseTime, 50)),
                        round(Histograms.percentileMillis(c.abuseCloseTime, 99)),
                        round(Histograms.maxMillis(c.abuseCloseTime)), c.abuseCloseTime.getTotalCount()));
    }

    /** Heartbeat's wake-up counter over the window, per second and server process; NaN if not counted. */
    double workerCounterWakeupsPerSecondPerProcess() {
        return serverCounter(WAKEUPS) / windowSeconds / serverProcesses;
    }

    private ReportJson.MachineCpu machineCpuJson() {
        if (cpu == null) {
            return null;
        }
        MachineCpu.Times m = cpu.machine;
        List<ReportJson.OtherProcess> others = new ArrayList<>();
        for (CpuSplit.Other o : cpu.busiestOthers) {
            others.add(new ReportJson.OtherProcess(o.pid(), o.name(), round(o.cpuSeconds())));
        }
        return new ReportJson.MachineCpu(round(cpu.windowSeconds), round(cpu.busy()), seconds(m.user()),
                seconds(m.nice()), seconds(m.system()), seconds(m.irq()), seconds(m.softirq()), seconds(m.steal()),
                seconds(m.idle()), seconds(m.iowait()), round(cpu.servers), round(cpu.clients), round(cpu.harness),
                round(cpu.everythingElse), round(cpu.ksoftirqd), round(cpu.previousRuns), cpu.previousLeft,
                round(cpu.exitedChildren), others, round(cpu.missingSeconds));
    }

    private ReportJson.ServerThreads serverThreadsJson() {
        if (cpu == null) {
            return null;
        }
        boolean worker = cpu.workerProcesses > 0;
        return new ReportJson.ServerThreads(round(cpu.serverTotal()), thread(MachineCpu.ThreadKind.EVENT_LOOP),
                thread(MachineCpu.ThreadKind.HEARTBEAT_WORKER), thread(MachineCpu.ThreadKind.GC),
                thread(MachineCpu.ThreadKind.JIT), thread(MachineCpu.ThreadKind.OTHER),
                thread(MachineCpu.ThreadKind.CLIENT_LOOP), cpu.eventLoopWakeups,
                round(cpu.eventLoopWakeupsPerSecond()), worker ? cpu.workerWakeups : null,
                round(cpu.workerWakeupsPerSecondPerProcess()), round(workerCounterWakeupsPerSecondPerProcess()));
    }

    private Double thread(MachineCpu.ThreadKind kind) {
        return round(cpu.thread(kind));
    }

    private static Double seconds(long ticks) {
        return round(CpuSplit.seconds(ticks));
    }

    private static List<double[]> series(List<double[]> series) {
        List<double[]> out = new ArrayList<>();
        for (double[] p : series) {
            out.add(new double[] {Math.round(p[0] * 1e5) / 1e5, p[1]});
        }
        return out;
    }
}
