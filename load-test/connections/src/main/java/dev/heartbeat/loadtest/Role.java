/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.Locale;

/**
 * What one client connection does for the whole run; {@link Mix} decides how many of each.
 * The names are those of {@code --mix}.
 */
enum Role {
    /**
     * Sends a line at a fixed rate ({@code --active-rate}), each carrying its intended send time, and
     * measures the echo. Must stay open.
     */
    ACTIVE("active"),
    /** Never sends anything, not even an answer to a ping. Must be closed by the server. */
    SILENT("silent"),
    /**
     * Answers each server PING with a line and sends nothing else. Must stay open with the ping
     * policy; with the close policy there are no pings, so it is as silent as {@link #SILENT}.
     */
    PONG("pong"),
    /**
     * Alive until a moment drawn at random in the run, then silent. Alive means answering pings
     * (ping policy) or sending a keep-alive line every third of the idle timeout (close policy).
     * Must be closed by the server after it died.
     */
    DYING("dying");

    /** The name in {@code --mix} and in reports. */
    final String label;

    Role(String label) {
        this.label = label;
    }

    /**
     * The role named {@code label}, ignoring case.
     *
     * @throws IllegalArgumentException naming the label and the known ones
     */
    static Role of(String label) {
        for (Role r : values()) {
            if (r.label.equals(label.trim().toLowerCase(Locale.ROOT))) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown connection role '" + label + "': expected one of active, silent, "
                + "pong, dying");
    }

    @Override
    public String toString() {
        return label;
    }
}
