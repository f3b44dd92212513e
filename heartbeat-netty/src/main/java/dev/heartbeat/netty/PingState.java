/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The ping policy's per-channel state, the handler's side object for ping configurations only (see
 * {@link PingPolicy}): when the worker decided the pending ping and how many went unanswered in a
 * row (the worker's), and when the event loop wrote it (the event loop's). {@link ProbeState} adds
 * answer matching. 32 bytes ({@code HandlerLayoutTest}).
 */
class PingState {

    private static final VarHandle WRITTEN;
    private static final VarHandle ON_WIRE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            WRITTEN = lookup.findVarHandle(PingState.class, "written", long.class);
            ON_WIRE = lookup.findVarHandle(PingState.class, "onWire", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Worker only: ticker time the worker decided the pending ping at; meaningful while one is pending. */
    private long decidedAt;
    /**
     * Worker only: pings in a row whose timeout passed without an answer; at most
     * {@link HeartbeatConfig#MAX_MISSED_PINGS}, so a short holds it (and keeps this object at 32 bytes).
     */
    private short missed;
    /** Ticker time the event loop last wrote a ping; meaningful only while {@link #onWire}. Opaque. */
    @SuppressWarnings("unused") // accessed through WRITTEN
    private long written;
    /**
     * The event loop wrote the ping the worker decided last, and its write has not failed: set by
     * the event loop when it writes a ping, cleared by the worker when it decides one and by the
     * event loop when the write fails. Opaque. No ticker value doubles as "no ping": every ticker
     * value is valid.
     */
    @SuppressWarnings("unused") // accessed through ON_WIRE
    private boolean onWire;

    /** The state a ping configuration needs: with answer matching if its probe recognises answers. */
    static PingState of(HeartbeatConfig cfg) {
        return cfg.matchesAnswers ? new ProbeState() : new PingState();
    }

    // ---- worker

    /** Worker, when a configuration starts: no ping pending, none missed. */
    void reset() {
        missed = 0;
    }

    /** Worker: a new ping is decided at {@code now}; none is on the wire until the event loop writes it. */
    void decided(long now) {
        decidedAt = now;
        ON_WIRE.setOpaque(this, false); // before the hand-off, which orders it before the event loop's write
    }

    /** Worker: when the pending ping was decided. */
    long decidedAt() {
        return decidedAt;
    }

    /** Worker: counts a missed ping; returns how many are missed in a row now (saturating at the largest setting). */
    int countMiss() {
        if (missed < HeartbeatConfig.MAX_MISSED_PINGS) {
            missed++;
        }
        return missed;
    }

    /** Worker: the pending ping was answered: no pings missed in a row. */
    void answered() {
        missed = 0;
    }

    // ---- event loop

    /** Event loop: the token of the ping about to be made (meaningful to matching probes only). */
    long nextToken() {
        return 0;
    }

    /** Event loop: a ping is being written at {@code now}. */
    void wrote(long now) {
        WRITTEN.setOpaque(this, now);
        ON_WIRE.setOpaque(this, true);
    }

    /** Event loop: the latest ping's write failed. */
    void writeFailed() {
        ON_WIRE.setOpaque(this, false);
    }

    // ---- either

    /** Whether the ping the worker decided last was written, and its write has not failed. */
    boolean onWire() {
        return (boolean) ON_WIRE.getOpaque(this);
    }

    /** Ticker time the latest ping was written; meaningful while {@link #onWire}. */
    long written() {
        return (long) WRITTEN.getOpaque(this);
    }
}
