/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

/**
 * What became of one connection, judged on the client from what the client itself did (see
 * {@link Scenario} for the due moment). Pure functions; any thread.
 */
enum Verdict {
    /** Closed by the server at or after the due moment, as expected. */
    ON_TIME,
    /** Closed before the due moment: the server acted on a connection that was not yet idle. */
    PREMATURE,
    /** Closed, not early, but the connection should have stayed open (an active or answering one). */
    UNEXPECTED,
    /**
     * Expected to be closed and closed on time, but the server's goodbye named another reason than
     * the one the role is closed for (a silent WebSocket client told {@code READER_IDLE} rather than
     * {@code PING_TIMEOUT}, say), or none where the protocol has one.
     */
    WRONG_REASON,
    /** Expected to be closed, still open when the run ended. */
    LEFT_OPEN,
    /** Not expected to be closed, and open at the end. */
    STAYED_OPEN,
    /**
     * Closed by the server's line decoder ({@code ERR line too long} came first) after the connection
     * sent more than {@code --max-line} bytes without a newline, as expected.
     */
    LINE_CLOSED,
    /**
     * Closed for its maximum age later than the longest age the jitter allows plus the grace and
     * {@link Scenario#AGE_LATENESS_NANOS}.
     */
    LATE,
    /**
     * Closed by the servers' drain ({@code --drain}): told {@code DRAIN} (or, for MQTT, which has no
     * goodbye, any close after the drain started), after the drain started. The expected end of every
     * connection still open then, whatever its role.
     */
    DRAINED,
    /**
     * A {@link Role#SLOWREADER} closed by a server that closes write stalls after its own reads show that it read
     * fewer than {@link Scenario#SERVER_NOTSENT_LOWAT_BYTES} in a write stall just before the close
     * ({@link #ofSlowReaderClose}): too little to wake the server's writer, so no byte need have left the
     * server's outbound buffer for it that long, and the close is the write-stall guard's to make (the reader
     * read late: its client loop was late, or the server sent late). Counted and reported, not a failure.
     */
    READS_STALLED,
    /**
     * Closed before the due moment of the client's last write, or closed though it should have stayed open, when
     * that write came after the earliest moment the close may have been made: the client's loop ran behind (it
     * saw the close that much after it came), so the write may have been made after the server had closed, and
     * never read by it. The client cannot judge such a close ({@link ClientLoop#mayHaveCrossedTheClose}): counted
     * and described, not a failure.
     */
    CLIENT_BEHIND;

    /**
     * The verdict on a close the client saw at {@code closedAt}.
     *
     * @param expectsClose whether the server should close this connection in the run
     * @param dueNanos the earliest moment a correct server may close it
     */
    static Verdict ofClose(boolean expectsClose, long dueNanos, long closedAt) {
        return ofClose(expectsClose, dueNanos, closedAt, true);
    }

    /**
     * The verdict on a close the client saw at {@code closedAt}, after a goodbye that named the
     * expected reason, or not.
     *
     * @param expectsClose whether the server should close this connection in the run
     * @param dueNanos the earliest moment a correct server may close it
     * @param expectedReason whether the server's goodbye named the reason this role is closed for
     */
    static Verdict ofClose(boolean expectsClose, long dueNanos, long closedAt, boolean expectedReason) {
        if (closedAt - dueNanos < 0) {
            return PREMATURE;
        }
        return !expectsClose ? UNEXPECTED : expectedReason ? ON_TIME : WRONG_REASON;
    }

    /**
     * The verdict on a close of a {@link Role#FLOODER}: premature unless it had written a ping past the
     * servers' strikes before the client saw the close (the server cannot have read that ping sooner);
     * then on time if the goodbye named {@code PING_ABUSE} (none for MQTT), else a wrong reason.
     *
     * @param abusive whether the flooder had written more pings than the servers forgive
     * @param expectedReason whether the server's goodbye named the reason a flooder is closed for
     */
    static Verdict ofAbuseClose(boolean abusive, boolean expectedReason) {
        return !abusive ? PREMATURE : expectedReason ? ON_TIME : WRONG_REASON;
    }

    /**
     * The verdict on a close for the maximum age ({@code MAX_AGE}): premature if the goodbye came before
     * the shortest age the jitter allows after the connect started ({@code goodbyeAt}: the close itself
     * when the protocol has no goodbye), or the close before that plus the grace; late if the close came
     * after the longest age plus the grace plus {@code lateNanos} after the connect completed; else on time
     * if the goodbye named {@code MAX_AGE} (MQTT: none), a wrong reason if not.
     *
     * @param s the scenario: the age, its jitter and grace
     * @param connectStart the clock read before the connect started: the server's age counts from later
     * @param connectedAt the connect's completion as the client saw it
     * @param goodbyeAt when the goodbye came (or the close, without one)
     * @param closedAt when the client saw the close
     */
    static Verdict ofAgeClose(Scenario s, long connectStart, long connectedAt, long goodbyeAt, long closedAt,
            boolean expectedReason) {
        if (goodbyeAt - (connectStart + s.minAgeNanos()) < 0
                || closedAt - (connectStart + s.minAgeNanos() + s.maxAgeGraceNanos) < 0) {
            return PREMATURE;
        }
        if (closedAt - (connectedAt + s.maxDrawnAgeNanos() + s.maxAgeGraceNanos + Scenario.AGE_LATENESS_NANOS) > 0) {
            return LATE;
        }
        return expectedReason ? ON_TIME : WRONG_REASON;
    }

    /**
     * The verdict on a close by the drain: drained if the drain had started ({@code started}) when the
     * client saw it, else premature (no correct server drains before it is asked to).
     */
    static Verdict ofDrainClose(boolean started) {
        return started ? DRAINED : PREMATURE;
    }

    /**
     * The verdict on a close of a {@link Role#SLOWREADER}: reads stalled if the servers close write stalls and the
     * client read fewer than {@link Scenario#SERVER_NOTSENT_LOWAT_BYTES} in some write stall of the span before the
     * close in which the guard's timeout ran ({@link ReadLog#leastRead}), else unexpected (it drained, so it was
     * neither stalled nor idle).
     *
     * @param leastBytes the fewest bytes it read in a write stall of that span, as the client saw them
     * @param guarded whether the servers close write stalls (Heartbeat's): the others may never close it
     */
    static Verdict ofSlowReaderClose(long leastBytes, boolean guarded) {
        return guarded && leastBytes < Scenario.SERVER_NOTSENT_LOWAT_BYTES ? READS_STALLED : UNEXPECTED;
    }

    /** The verdict on a connection still open at the end of the run. */
    static Verdict ofOpenAtEnd(boolean expectsClose) {
        return expectsClose ? LEFT_OPEN : STAYED_OPEN;
    }

    /**
     * The verdict on a close of a line-limited role ({@link Role#isLineLimited}): a decoder close is
     * right once the line was over-long; any other close is premature before the idle due moment
     * ({@code dueNanos}) and unexpected after it (such a role must never be closed for idleness).
     *
     * @param overLong whether the connection had sent more than {@code --max-line} bytes without a newline
     * @param refused whether the server answered {@code ERR line too long} before the close
     */
    static Verdict ofLineLimitedClose(boolean overLong, boolean refused, long dueNanos, long closedAt) {
        if (overLong && refused) {
            return LINE_CLOSED;
        }
        return ofClose(false, dueNanos, closedAt);
    }

    /**
     * The verdict on a line-limited connection open at the end: left open if it sent its over-long
     * line at least a grace before the end ({@code overLongBeforeGrace}), else it stayed open rightly.
     */
    static Verdict ofLineLimitedOpenAtEnd(boolean overLongBeforeGrace) {
        return ofOpenAtEnd(overLongBeforeGrace);
    }

    /** Whether this verdict fails a {@code --check} run. */
    boolean isFailure() {
        return this == PREMATURE || this == UNEXPECTED || this == LEFT_OPEN || this == WRONG_REASON || this == LATE;
    }
}
