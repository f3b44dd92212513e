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
     * measures the echo; answers a ping, should a stall have made it silent long enough to get one.
     * Must stay open.
     */
    ACTIVE("active", true),
    /**
     * Never sends anything, not even an answer to a ping (the protocol's set-up aside: the WebSocket
     * upgrade, MQTT's CONNECT, HTTP/2's preface and SETTINGS ack). Must be closed by the server.
     */
    SILENT("silent", true),
    /**
     * Answers each server ping (a line, a Pong, a PING ACK) and sends nothing else. Must stay open with
     * the ping policy; with the close policy there are no pings, so it is as silent as {@link #SILENT}.
     * With MQTT, whose servers never ping, it sends PINGREQ every Keep Alive instead, and must stay open.
     */
    PONG("pong", true),
    /**
     * Alive until a moment drawn at random in the run, then silent. Alive means answering pings
     * (ping policy) or sending a keep-alive every third of the idle timeout (close policy; with MQTT,
     * PINGREQ every Keep Alive).
     * Must be closed by the server after it died.
     */
    DYING("dying", true),
    /**
     * A slow-loris: one byte (never a newline) every three quarters of the quiet limit (the idle
     * timeout, or the ping interval), from the connect on. Heartbeat must not close it: a byte is
     * input. The server's line decoder closes it (answering {@code ERR line too long}) once more than
     * {@code --max-line} bytes have come without a newline, which happens in the run only when the run
     * is long enough or {@code --max-line} small; until then it must stay open.
     */
    TRICKLE("trickle", false),
    /**
     * Sends {@code --flood-lines} PING lines every millisecond, from the connect on, and counts the
     * server's PONGs. Must stay open; the check fails if the server answered none.
     */
    PINGFLOOD("pingflood", false),
    /**
     * A peer that vanished without a FIN: right after connecting it stops reading (auto-read off) and
     * never writes. Must be closed by the idle policy, as {@link #SILENT}. It reads again from a little
     * before the earliest moment a correct server may close it, so that the client sees the close.
     */
    HALFOPEN("halfopen", false),
    /**
     * Sends one line of {@code --max-line} + 1 bytes at a moment drawn in the first half of its close
     * window after connecting, and nothing else. Must be closed by the server's line decoder, after the
     * line and with {@code ERR line too long}, never for idleness.
     */
    LONGLINE("longline", false),
    /**
     * Sends lines of random binary bytes (invalid UTF-8, each starting with 0xFF, shorter than
     * {@code --max-line}) at {@code --active-rate}. The demo server echoes bytes as they came, so it
     * must stay open and get its lines back; the check fails if no junk line came back.
     */
    JUNK("junk", false),
    /**
     * Pings the server in its protocol's own words (a {@code PING} line, a WebSocket Ping, an HTTP/2
     * PING, an MQTT PINGREQ): {@link Scenario#FLOOD_BURST} of them at once, back to back, once set up
     * and then every {@link Scenario#floodPeriodNanos} while open ({@link ClientConnection#floodBurst});
     * nothing else. The servers police pings when the mix has flooders ({@code --police-pings}), so each
     * must be closed for {@code PING_ABUSE}, told so in the protocol's goodbye (MQTT: none), and not
     * before it sent more pings than the servers forgive ({@link Scenario#PEER_PING_MAX_STRIKES}).
     */
    FLOODER("flooder", true),
    /**
     * A live connection that the servers close at their maximum age ({@code --max-age}): it answers pings
     * and keeps alive as {@link #PONG} does (with the close policy, a keep-alive every third of the idle
     * timeout), so it is never idle. On the servers' {@code MAX_AGE} goodbye (MQTT: the close) it opens a
     * new connection with the same index and role; the old one is closed by the server at the end of its
     * grace. Each close must name {@code MAX_AGE} and come between the shortest age the jitter allows and
     * the longest plus the grace and {@link Scenario#AGE_LATENESS_NANOS}. The servers age every connection
     * when the mix has aged ones (Heartbeat only).
     */
    AGED("aged", true),
    /**
     * A peer that stops reading but not the server's writing: it never reads (auto-read off from the
     * connect), and writes lines from the connect on until its own channel is unwritable, which it
     * becomes only once the server has stopped reading it (the demo server does when its echoes back up,
     * {@code EchoHandler}); then it writes nothing more, for good. Its socket buffers are small, so that
     * little backs up ({@link LineConnection#shrinkBuffers}). Heartbeat servers get
     * {@code --write-stall} ({@link Scenario#writeStallNanos}) when the mix has stalled connections and
     * must close each for {@code WRITE_STALL}, never before that long after its first line, and within
     * {@link Scenario#stallDeadlineNanos} after its last; the goodbye cannot reach a peer that does not
     * read, so the servers' counts are checked instead. Needs real sockets ({@code --transport tcp}).
     */
    STALLED("stalled", false),
    /**
     * The stalled peer's counterpart: a slow reader that still drains. It writes lines as {@link #STALLED}
     * does, with the same small buffers and auto-read off from the connect, so the server's echoes back up,
     * but reads once every {@link Scenario#slowReadPeriodNanos} (a small fraction of the write stall), so that
     * some of them leave the server's outbound buffer well inside every write-stall timeout. It must never be
     * closed (the servers get {@code --write-stall} as with stalled connections), unless its own reads show that it
     * read too little in a write stall before the close to move the server's buffer ({@link Verdict#READS_STALLED},
     * reported, not a failure); the check also fails unless
     * one of them was seen backed up: its own channel unwritable for longer than the write stall, which means
     * the server did not read it for that long, which the demo server does only while its outbound buffer
     * to it is over the high water mark, so bytes were pending there all along. Needs real sockets
     * ({@code --transport tcp}).
     */
    SLOWREADER("slowreader", false);

    /** The name in {@code --mix} and in reports. */
    final String label;
    /** Whether every protocol can play this role; else it speaks the line protocol only (raw bytes and lines). */
    private final boolean everyProtocol;

    Role(String label, boolean everyProtocol) {
        this.label = label;
        this.everyProtocol = everyProtocol;
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
        throw new IllegalArgumentException("unknown connection role '" + label + "': expected one of " + names());
    }

    /** Every role's name, comma-separated, in declaration order. */
    static String names() {
        StringBuilder s = new StringBuilder();
        for (Role r : values()) {
            s.append(s.length() == 0 ? "" : ", ").append(r.label);
        }
        return s.toString();
    }

    /**
     * Whether this role is one of the misbehaving peers (issue 12's, the flooder, the stalled and the slow
     * reader) or the aged one, listed by {@link Mix} only when present.
     */
    boolean isEdge() {
        return ordinal() > DYING.ordinal();
    }

    /** Whether this role speaks the line protocol only (issue 12's edge roles): other probes refuse it. */
    boolean speaksLinesOnly() {
        return !everyProtocol;
    }

    /**
     * Whether the server's line decoder may close this role (it sends bytes without a newline): its
     * closes are judged by {@link Verdict#ofLineLimitedClose}.
     */
    boolean isLineLimited() {
        return this == TRICKLE || this == LONGLINE;
    }

    /**
     * Whether this role backs the server's echoes up on purpose (stalled, slowreader): small socket buffers
     * ({@link LineConnection#shrinkBuffers}), reading under its own control, writing lines whenever its
     * channel is writable; the servers get {@code --write-stall} when the mix has one.
     */
    boolean backsUpEchoes() {
        return this == STALLED || this == SLOWREADER;
    }

    @Override
    public String toString() {
        return label;
    }
}
