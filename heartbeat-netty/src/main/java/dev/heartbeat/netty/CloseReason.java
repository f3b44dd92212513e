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
    PING_TIMEOUT
}
