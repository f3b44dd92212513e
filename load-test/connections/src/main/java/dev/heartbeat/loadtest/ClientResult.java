package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * What the client side saw of its connections: counts by {@link Verdict} and {@link Role}, and
 * histograms (microseconds) of close lateness, echo latency and connect time. One per event loop
 * while running ({@link ClientLoop}), merged per process, sent to the coordinator as JSON and merged
 * again there. Not thread-safe: one owner at a time.
 */
final class ClientResult {

    private static final int MAX_SAMPLES = 10;

    long assigned;
    long connected;
    long connectFailures;
    long expectedCloses;
    /** Closes of connections that were expected to close, at any moment. */
    long observedCloses;
    long onTime;
    long premature;
    long unexpected;
    long leftOpen;
    long errors;
    long echoesSent;
    long echoesReceived;
    /** Echoes whose intended send time fell in the measured window: those in {@link #echoLatency}. */
    long echoesRecorded;
    /** How early the earliest premature close was, in nanoseconds (0: none). */
    long earliestPrematureNanos;
    /** The first connect attempt and the last connect completion, on the shared clock (0: none). */
    long connectStartNanos;
    long connectEndNanos;
    final long[] connectedByRole = new long[Role.values().length];
    final long[] closedByRole = new long[Role.values().length];
    final long[] pingsByRole = new long[Role.values().length];
    final List<String> failureSamples = new ArrayList<>();
    final Map<String, Long> connectFailureCauses = new LinkedHashMap<>();
    Histogram lateness = Histograms.newMicros();
    Histogram echoLatency = Histograms.newMicros();
    Histogram connectTime = Histograms.newMicros();

    /** Adds another part's counts and histograms into this one. */
    ClientResult add(ClientResult o) {
        assigned += o.assigned;
        connected += o.connected;
        connectFailures += o.connectFailures;
        expectedCloses += o.expectedCloses;
        observedCloses += o.observedCloses;
        onTime += o.onTime;
        premature += o.premature;
        unexpected += o.unexpected;
        leftOpen += o.leftOpen;
        errors += o.errors;
        echoesSent += o.echoesSent;
        echoesReceived += o.echoesReceived;
        echoesRecorded += o.echoesRecorded;
        earliestPrematureNanos = Math.max(earliestPrematureNanos, o.earliestPrematureNanos);
        connectStartNanos = earliest(connectStartNanos, o.connectStartNanos);
        connectEndNanos = latest(connectEndNanos, o.connectEndNanos);
        for (int i = 0; i < connectedByRole.length; i++) {
            connectedByRole[i] += o.connectedByRole[i];
            closedByRole[i] += o.closedByRole[i];
            pingsByRole[i] += o.pingsByRole[i];
        }
        for (String s : o.failureSamples) {
            if (failureSamples.size() < MAX_SAMPLES) {
                failureSamples.add(s);
            }
        }
        o.connectFailureCauses.forEach((k, v) -> connectFailureCauses.merge(k, v, Long::sum));
        lateness.add(o.lateness);
        echoLatency.add(o.echoLatency);
        connectTime.add(o.connectTime);
        return this;
    }

    private static long earliest(long a, long b) {
        return a == 0 ? b : b == 0 ? a : (b - a < 0 ? b : a);
    }

    private static long latest(long a, long b) {
        return a == 0 ? b : b == 0 ? a : (b - a > 0 ? b : a);
    }

    /** Connections judged a failure: premature, unexpected or left open, plus those never opened. */
    long failures() {
        return premature + unexpected + leftOpen + connectFailures;
    }

    Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("assigned", assigned);
        m.put("connected", connected);
        m.put("connect_failures", connectFailures);
        m.put("expected_closes", expectedCloses);
        m.put("observed_closes", observedCloses);
        m.put("on_time", onTime);
        m.put("premature", premature);
        m.put("unexpected", unexpected);
        m.put("left_open", leftOpen);
        m.put("errors", errors);
        m.put("echoes_sent", echoesSent);
        m.put("echoes_received", echoesReceived);
        m.put("echoes_recorded", echoesRecorded);
        m.put("earliest_premature_ns", earliestPrematureNanos);
        m.put("connect_start_ns", connectStartNanos);
        m.put("connect_end_ns", connectEndNanos);
        m.put("connected_by_role", byRole(connectedByRole));
        m.put("closed_by_role", byRole(closedByRole));
        m.put("pings_by_role", byRole(pingsByRole));
        m.put("failure_samples", new ArrayList<Object>(failureSamples));
        m.put("connect_failure_causes", new LinkedHashMap<String, Object>(connectFailureCauses));
        m.put("lateness_us", Histograms.encode(lateness));
        m.put("echo_latency_us", Histograms.encode(echoLatency));
        m.put("connect_time_us", Histograms.encode(connectTime));
        return m;
    }

    private static Map<String, Object> byRole(long[] counts) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (Role r : Role.values()) {
            m.put(r.label, counts[r.ordinal()]);
        }
        return m;
    }

    static ClientResult fromJson(Map<String, Object> m) {
        ClientResult r = new ClientResult();
        r.assigned = Json.getLong(m, "assigned");
        r.connected = Json.getLong(m, "connected");
        r.connectFailures = Json.getLong(m, "connect_failures");
        r.expectedCloses = Json.getLong(m, "expected_closes");
        r.observedCloses = Json.getLong(m, "observed_closes");
        r.onTime = Json.getLong(m, "on_time");
        r.premature = Json.getLong(m, "premature");
        r.unexpected = Json.getLong(m, "unexpected");
        r.leftOpen = Json.getLong(m, "left_open");
        r.errors = Json.getLong(m, "errors");
        r.echoesSent = Json.getLong(m, "echoes_sent");
        r.echoesReceived = Json.getLong(m, "echoes_received");
        r.echoesRecorded = Json.getLong(m, "echoes_recorded");
        r.earliestPrematureNanos = Json.getLong(m, "earliest_premature_ns");
        r.connectStartNanos = Json.getLong(m, "connect_start_ns");
        r.connectEndNanos = Json.getLong(m, "connect_end_ns");
        readByRole(Json.getObject(m, "connected_by_role"), r.connectedByRole);
        readByRole(Json.getObject(m, "closed_by_role"), r.closedByRole);
        readByRole(Json.getObject(m, "pings_by_role"), r.pingsByRole);
        for (Object o : Json.getList(m, "failure_samples")) {
            r.failureSamples.add(String.valueOf(o));
        }
        Json.getObject(m, "connect_failure_causes").forEach((k, v) -> r.connectFailureCauses.put(k,
                ((Number) v).longValue()));
        r.lateness = Histograms.decode(Json.getString(m, "lateness_us"));
        r.echoLatency = Histograms.decode(Json.getString(m, "echo_latency_us"));
        r.connectTime = Histograms.decode(Json.getString(m, "connect_time_us"));
        return r;
    }

    private static void readByRole(Map<String, Object> m, long[] into) {
        for (Role r : Role.values()) {
            Object v = m.get(r.label);
            into[r.ordinal()] = v instanceof Number ? ((Number) v).longValue() : 0;
        }
    }
}
