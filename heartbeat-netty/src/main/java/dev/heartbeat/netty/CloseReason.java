/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

/** Why Heartbeat closed a channel: carried by the {@link HeartbeatCloseEvent} fired just before the close. */
public enum CloseReason {
    /** Nothing was read for the reader idle timeout (close policies). */
    READER_IDLE,
    /** Nothing was written for the writer idle timeout (close policies). */
    WRITER_IDLE,
    /** Neither read nor written for the all-idle timeout (close policies). */
    ALL_IDLE,
    /** The peer left {@code maxMissedPings} pings unanswered (ping policy). */
    PING_TIMEOUT,
    /** The connection reached its maximum age (and its grace, if it did not close itself in it). */
    MAX_AGE,
    /** Bytes were pending in the outbound buffer and none left for the write-stall timeout. */
    WRITE_STALL,
    /** The channel stayed unwritable for the maximum unwritable time. */
    UNWRITABLE,
    /** The peer pinged more often than the ping policing allows. */
    PING_ABUSE,
    /** The monitor drained its channels ({@code HeartbeatMonitor.drain}). */
    DRAIN
}
