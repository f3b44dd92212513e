package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

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
    long pingsSent = -1;
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
     * Records what other processes took of the machine over the window, with a note when it is more
     * than a tenth of a core on average.
     */
    void otherCpu(double machineBusy, double ours, double windowSeconds) {
        otherCpuSeconds = Math.max(0, machineBusy - ours);
        if (otherCpuSeconds > 0.1 * windowSeconds) {
            notes.add(String.format(Locale.ROOT, "other processes on the machine used %.1f CPU seconds "
                    + "during the %.0f s run window (%.0f%% of a core): the measurements are disturbed",
                    otherCpuSeconds, windowSeconds, 100 * otherCpuSeconds / windowSeconds));
        }
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

    /** What fails a {@code --check}: premature, unexpected and missing closes, connections never opened. */
    List<String> checkFailures() {
        List<String> f = new ArrayList<>();
        String who = impl + "/" + transport + ": ";
        if (client.premature > 0) {
            f.add(who + client.premature + " premature closes (the earliest " + round(client.earliestPrematureNanos / 1e6)
                    + " ms before it was due)");
        }
        if (client.leftOpen > 0) {
            f.add(who + client.leftOpen + " silent or dying connections left open at the end");
        }
        if (client.unexpected > 0) {
            f.add(who + client.unexpected + " connections that should have stayed open were closed");
        }
        if (client.connectFailures > 0) {
            f.add(who + client.connectFailures + " of " + connections + " connections could not be opened: "
                    + client.connectFailureCauses);
        }
        if (client.connected + client.connectFailures < connections) {
            f.add(who + "only " + client.connected + " of " + connections + " connections were accounted for");
        }
        return f;
    }

    static Object round(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return null;
        }
        return Math.round(v * 1000) / 1000.0;
    }

    private static Object nullIfNegative(long v) {
        return v < 0 ? null : (Object) v;
    }

    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("connections", (long) connections);
        m.put("connected", client.connected);
        m.put("connect_failures", client.connectFailures);
        m.put("premature_closes", client.premature);
        m.put("expected_closes", client.expectedCloses);
        m.put("observed_closes", client.observedCloses);
        m.put("left_open", client.leftOpen);
        m.put("unexpected_closes", client.unexpected);
        Map<String, Object> lateness = new LinkedHashMap<>();
        lateness.put("p50", round(latenessMillis(50)));
        lateness.put("p99", round(latenessMillis(99)));
        lateness.put("max", round(Histograms.maxMillis(client.lateness)));
        lateness.put("count", client.lateness.getTotalCount());
        m.put("lateness_ms", lateness);
        m.put("earliest_premature_ms", client.premature == 0 ? null : round(client.earliestPrematureNanos / 1e6));
        Map<String, Object> echo = new LinkedHashMap<>();
        echo.put("p50", round(echoMicros(50)));
        echo.put("p99", round(echoMicros(99)));
        echo.put("p999", round(echoMicros(99.9)));
        echo.put("max", client.echoLatency.getTotalCount() == 0 ? null : (Object) client.echoLatency.getMaxValue());
        echo.put("count", client.echoLatency.getTotalCount());
        m.put("echo_latency_us", echo);
        m.put("heap_bytes_per_connection", round(heapBytesPerConnection()));
        m.put("server_cpu_seconds", round(serverCpuSeconds));
        m.put("worker_cpu_seconds", round(workerCpuSeconds));
        m.put("connect_seconds", round(connectSeconds()));
        m.put("connect_server_cpu_seconds", round(connectServerCpuSeconds));
        m.put("process_cpu_seconds", round(processCpuSeconds));
        m.put("other_processes_cpu_seconds", round(otherCpuSeconds));
        Map<String, Object> connect = new LinkedHashMap<>();
        connect.put("p50", round(Histograms.percentileMillis(client.connectTime, 50)));
        connect.put("p99", round(Histograms.percentileMillis(client.connectTime, 99)));
        connect.put("max", round(Histograms.maxMillis(client.connectTime)));
        m.put("connect_time_ms", connect);
        Map<String, Object> heap = new LinkedHashMap<>();
        heap.put("before_bytes", nullIfNegative(heapBeforeBytes));
        heap.put("after_bytes", nullIfNegative(heapAfterBytes));
        heap.put("connections_at_measurement", connectionsAtHeap);
        m.put("heap", heap);
        Map<String, Object> server = new LinkedHashMap<>();
        server.put("transport", serverTransport);
        server.put("processes", (long) serverProcesses);
        server.put("pings_sent", nullIfNegative(pingsSent));
        server.put("idle_closes", nullIfNegative(idleCloses));
        m.put("server", server);
        Map<String, Object> counters = new LinkedHashMap<>();
        serverCounters.forEach((k, v) -> counters.put(k, round(v)));
        m.put("server_counters_in_run", counters);
        m.put("client_processes", (long) clientProcesses);
        Map<String, Object> echoes = new LinkedHashMap<>();
        echoes.put("sent", client.echoesSent);
        echoes.put("received", client.echoesReceived);
        echoes.put("recorded", client.echoesRecorded);
        m.put("echoes", echoes);
        Map<String, Object> byRole = new LinkedHashMap<>();
        for (Role r : Role.values()) {
            Map<String, Object> role = new LinkedHashMap<>();
            role.put("connected", client.connectedByRole[r.ordinal()]);
            role.put("closed", client.closedByRole[r.ordinal()]);
            role.put("pings_received", client.pingsByRole[r.ordinal()]);
            byRole.put(r.label, role);
        }
        m.put("by_role", byRole);
        m.put("client_errors", client.errors);
        m.put("wall_seconds", round(wallSeconds));
        m.put("failure_samples", new ArrayList<Object>(client.failureSamples));
        m.put("connect_failure_causes", new LinkedHashMap<String, Object>(client.connectFailureCauses));
        m.put("notes", new ArrayList<Object>(notes));
        Map<String, Object> series = new LinkedHashMap<>();
        series.put("lateness_us", seriesJson(Histograms.percentileSeries(client.lateness)));
        series.put("echo_latency_us", seriesJson(Histograms.percentileSeries(client.echoLatency)));
        m.put("percentiles", series);
        Map<String, Object> hist = new LinkedHashMap<>();
        hist.put("lateness_us", Histograms.encode(client.lateness));
        hist.put("echo_latency_us", Histograms.encode(client.echoLatency));
        hist.put("connect_time_us", Histograms.encode(client.connectTime));
        m.put("histograms", hist);
        return m;
    }

    private static List<Object> seriesJson(List<double[]> series) {
        List<Object> out = new ArrayList<>();
        for (double[] p : series) {
            List<Object> pair = new ArrayList<>();
            pair.add(Math.round(p[0] * 1e5) / 1e5);
            pair.add(p[1]);
            out.add(pair);
        }
        return out;
    }
}
