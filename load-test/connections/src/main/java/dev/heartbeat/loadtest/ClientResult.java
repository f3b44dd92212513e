/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import dev.heartbeat.netty.CloseReason;
import org.HdrHistogram.Histogram;

/**
 * What the client side saw of its connections: counts by {@link Verdict} and {@link Role}, and
 * histograms (microseconds) of close lateness, echo latency and connect time. One per event loop
 * while running ({@link ClientLoop}), merged per process, sent to the coordinator as JSON and merged
 * again there. Not thread-safe: one owner at a time.
 *
 * <p>Its JSON is its fields (a mutable accumulator, not a record: {@link #add} merges in place).
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.ANY, getterVisibility = JsonAutoDetect.Visibility.NONE,
        isGetterVisibility = JsonAutoDetect.Visibility.NONE)
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
    /** Closes on time whose goodbye named another reason than the role's (see {@link Verdict#WRONG_REASON}). */
    long wrongReason;
    long leftOpen;
    long errors;
    long echoesSent;
    long echoesReceived;
    /** Echoes whose intended send time fell in the measured window: those in {@link #echoLatency}. */
    long echoesRecorded;
    /** Connections that sent more than {@code --max-line} bytes without a newline (longline, trickle). */
    long overLongLines;
    /** Of those, closed by the server's line decoder after {@code ERR line too long}. */
    long lineCloses;
    /** The longest time from an over-long line's last byte to the decoder's close, in nanoseconds. */
    long lineCloseMaxNanos;
    long floodPingsSent;
    long floodPongs;
    long junkLinesSent;
    long junkEchoes;
    /** Flooders: pings written, and closes after more pings than the servers forgive, with PING_ABUSE named. */
    long flooderPings;
    long abuseCloses;
    /**
     * Max age: closes judged as closes for it (of every role, whatever the verdict), those later than the
     * bound ({@link Verdict#LATE}), and new connections opened in their place.
     */
    long ageCloses;
    long late;
    long ageReconnects;
    /**
     * Max age: closes told {@code MAX_AGE} that came in the grace (as the client counts it, from the goodbye it
     * saw), of a silent connection, or a dying one dead by then, whose idle close had come due, or of any whose
     * last write came while its loop ran behind by more than the ping timeout ({@link Verdict#CLIENT_BEHIND}):
     * the server may have closed it for idleness without a way to say so (HTTP/2: Netty's codec drops a GOAWAY
     * whose last stream id the previous one already named). Judged against the idle due moment.
     */
    long idleClosesInGrace;
    /**
     * Max age: the same closes seen at or after the grace's end as the client counts it. The server may still
     * have closed them for idleness: its grace began before the client saw the goodbye, the close took a delay
     * of its own to reach the client, and a busy server's idle close may come as late as its age's. Judged as
     * max-age closes.
     */
    long idleDueAfterGrace;
    /** Stalled: bytes written before stalling, and closes on time by servers that close write stalls. */
    long stalledBytes;
    long stallCloses;
    /** Stalled connections still open the close window after their last write: they read again then. */
    long stallsReadAgain;
    /**
     * Slowreaders: bytes written and read back, the time they read for (from the connect to the close, or to
     * the end), how many had an echo backlog above {@link Scenario#SLOW_READER_BACKLOG_BYTES}, and the largest
     * backlog of any ({@link LineConnection#echoBacklog}).
     */
    long slowBytesWritten;
    long slowBytesRead;
    long slowReadNanos;
    long slowBackedUp;
    long slowMaxBacklog;
    /** Slowreader: the longest any one stayed unwritable (the server not reading it), in ns. */
    long slowLongestUnwritableNanos;
    /**
     * Slowreaders closed after they read too little in a write stall to be sure to move the server's outbound
     * buffer ({@link Verdict#READS_STALLED}), and a few of them described.
     */
    long slowStallCloses;
    final List<String> slowStallNotes = new ArrayList<>();
    /**
     * Closes the client could not judge ({@link Verdict#CLIENT_BEHIND}): its last write came while its loop ran
     * behind, after the close may have been made; the same by role; and a few of them described.
     */
    long closesWhileBehind;
    final long[] behindByRole = new long[Role.values().length];
    final List<String> behindNotes = new ArrayList<>();
    /** Closes by the servers' drain ({@link Verdict#DRAINED}), and the same per second of the shared clock. */
    long drained;
    PerSecond drainCloses = new PerSecond();
    /** Soak: connections the client closed on purpose, and connections opened again in their place. */
    long churned;
    long reopened;
    /** How early the earliest premature close was, in nanoseconds (0: none). */
    long earliestPrematureNanos;
    /** The first connect attempt and the last connect completion, on the shared clock (0: none). */
    long connectStartNanos;
    long connectEndNanos;
    final long[] connectedByRole = new long[Role.values().length];
    final long[] closedByRole = new long[Role.values().length];
    final long[] pingsByRole = new long[Role.values().length];
    /**
     * Server closes by role and by the reason the server's goodbye named: index
     * {@link #goodbyeIndex}, the reason's ordinal, or the last one for no goodbye.
     */
    final long[][] goodbyesByRole = new long[Role.values().length][CloseReason.values().length + 1];
    final List<String> failureSamples = new ArrayList<>();
    final Map<String, Long> connectFailureCauses = new LinkedHashMap<>();
    Histogram lateness = Histograms.newMicros();
    Histogram echoLatency = Histograms.newMicros();
    /** The same echoes by the second their lines were intended in: a timeline's echo latency. */
    PerSecondHistograms echoPerSecond = new PerSecondHistograms();
    Histogram connectTime = Histograms.newMicros();
    /** Flooders closed for ping abuse: from their latest ping (the clock read before its write) to the close. */
    Histogram abuseCloseTime = Histograms.newMicros();
    /** Max age: from the connect's completion to the goodbye (or the close, without one). */
    Histogram ageAtGoodbye = Histograms.newMicros();
    /** Max age: how far each close came after the longest age the jitter allows plus the grace (0 if before). */
    Histogram ageCloseLateness = Histograms.newMicros();
    /** Max age: new connections opened in place of aged-out ones, per second. */
    final PerSecond reconnectsPerSecond = new PerSecond();
    /** Every server close the clients saw, per second. */
    final PerSecond closesPerSecond = new PerSecond();
    /** Every server ping the clients saw, per second. */
    final PerSecond pingsPerSecond = new PerSecond();
    /** Stalled connections closed by write-stalling servers: from their last write to the close. */
    Histogram stallCloseTime = Histograms.newMicros();

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
        wrongReason += o.wrongReason;
        leftOpen += o.leftOpen;
        errors += o.errors;
        echoesSent += o.echoesSent;
        echoesReceived += o.echoesReceived;
        echoesRecorded += o.echoesRecorded;
        overLongLines += o.overLongLines;
        lineCloses += o.lineCloses;
        lineCloseMaxNanos = Math.max(lineCloseMaxNanos, o.lineCloseMaxNanos);
        floodPingsSent += o.floodPingsSent;
        floodPongs += o.floodPongs;
        junkLinesSent += o.junkLinesSent;
        junkEchoes += o.junkEchoes;
        flooderPings += o.flooderPings;
        abuseCloses += o.abuseCloses;
        ageCloses += o.ageCloses;
        late += o.late;
        ageReconnects += o.ageReconnects;
        idleClosesInGrace += o.idleClosesInGrace;
        idleDueAfterGrace += o.idleDueAfterGrace;
        stalledBytes += o.stalledBytes;
        stallCloses += o.stallCloses;
        stallsReadAgain += o.stallsReadAgain;
        slowBytesWritten += o.slowBytesWritten;
        slowBytesRead += o.slowBytesRead;
        slowReadNanos += o.slowReadNanos;
        slowBackedUp += o.slowBackedUp;
        slowMaxBacklog = Math.max(slowMaxBacklog, o.slowMaxBacklog);
        slowLongestUnwritableNanos = Math.max(slowLongestUnwritableNanos, o.slowLongestUnwritableNanos);
        slowStallCloses += o.slowStallCloses;
        for (String note : o.slowStallNotes) {
            if (slowStallNotes.size() < MAX_SAMPLES) {
                slowStallNotes.add(note);
            }
        }
        closesWhileBehind += o.closesWhileBehind;
        for (String note : o.behindNotes) {
            if (behindNotes.size() < MAX_SAMPLES) {
                behindNotes.add(note);
            }
        }
        drained += o.drained;
        drainCloses.add(o.drainCloses);
        churned += o.churned;
        reopened += o.reopened;
        earliestPrematureNanos = Math.max(earliestPrematureNanos, o.earliestPrematureNanos);
        connectStartNanos = earliest(connectStartNanos, o.connectStartNanos);
        connectEndNanos = latest(connectEndNanos, o.connectEndNanos);
        for (int i = 0; i < connectedByRole.length; i++) {
            connectedByRole[i] += o.connectedByRole[i];
            closedByRole[i] += o.closedByRole[i];
            pingsByRole[i] += o.pingsByRole[i];
            behindByRole[i] += o.behindByRole[i];
            for (int r = 0; r < goodbyesByRole[i].length; r++) {
                goodbyesByRole[i][r] += o.goodbyesByRole[i][r];
            }
        }
        for (String s : o.failureSamples) {
            if (failureSamples.size() < MAX_SAMPLES) {
                failureSamples.add(s);
            }
        }
        o.connectFailureCauses.forEach((k, v) -> connectFailureCauses.merge(k, v, Long::sum));
        lateness.add(o.lateness);
        echoLatency.add(o.echoLatency);
        echoPerSecond.add(o.echoPerSecond);
        connectTime.add(o.connectTime);
        abuseCloseTime.add(o.abuseCloseTime);
        ageAtGoodbye.add(o.ageAtGoodbye);
        ageCloseLateness.add(o.ageCloseLateness);
        reconnectsPerSecond.add(o.reconnectsPerSecond);
        closesPerSecond.add(o.closesPerSecond);
        pingsPerSecond.add(o.pingsPerSecond);
        stallCloseTime.add(o.stallCloseTime);
        return this;
    }

    private static long earliest(long a, long b) {
        return a == 0 ? b : b == 0 ? a : (b - a < 0 ? b : a);
    }

    private static long latest(long a, long b) {
        return a == 0 ? b : b == 0 ? a : (b - a > 0 ? b : a);
    }

    /**
     * Connections judged a failure: premature, unexpected, closed for a wrong reason, late or left open, plus
     * those never opened.
     */
    long failures() {
        return premature + unexpected + wrongReason + leftOpen + late + connectFailures;
    }

    /** The index in {@link #goodbyesByRole} of a goodbye's reason; null (no goodbye) is the last. */
    static int goodbyeIndex(CloseReason reason) {
        return reason == null ? CloseReason.values().length : reason.ordinal();
    }

    /** Server closes whose goodbye named {@code reason} (null: no goodbye), over every role. */
    long goodbyes(CloseReason reason) {
        long n = 0;
        for (long[] byReason : goodbyesByRole) {
            n += byReason[goodbyeIndex(reason)];
        }
        return n;
    }
}
