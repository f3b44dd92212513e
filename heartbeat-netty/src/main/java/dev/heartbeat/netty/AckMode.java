/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

/**
 * What answers a ping, and what only proves the peer alive. Keep-alive implementations in the field
 * disagree; each mode below is one of them. In every mode, a ping is written after the configured
 * silence, each ping waits for its own timeout, and the channel is closed after the configured number
 * of pings in a row went unanswered.
 *
 * <table>
 * <caption>Ack modes</caption>
 * <tr><th>Mode</th><th>Answers a ping</th><th>Other traffic while a ping waits</th><th>As in</th></tr>
 * <tr><td>{@link #ANY_INBOUND}</td><td>any read</td><td>answers it</td>
 *     <td>gRPC-java's {@code KeepAliveManager}, Armeria</td></tr>
 * <tr><td>{@link #MATCHED_ONLY}</td><td>the matching answer</td><td>ignored</td>
 *     <td>Go's {@code x/net/http2} health check</td></tr>
 * <tr><td>{@link #MATCHED_EXTENDS}</td><td>the matching answer</td><td>pushes the ping's deadline out</td>
 *     <td>Envoy's HTTP/2 keepalive</td></tr>
 * </table>
 *
 * <p>The matched modes need a {@link Probe} that recognises its answers (any {@link Probe.Matching}
 * but {@code NONE}). Only a matched answer to the latest ping gives an RTT sample, in every mode.
 */
public enum AckMode {

    /**
     * Any inbound message answers the waiting ping. The cheapest and most forgiving: a peer that
     * streams data but never answers pings (a proxy that eats them, a handler placed where it cannot
     * see answers) stays open. gRPC-java's {@code KeepAliveManager} works this way (any frame read
     * counts as the ping's answer), and so does Armeria's keep-alive.
     */
    ANY_INBOUND,

    /**
     * Only the answer to one of our waiting pings settles it; a ping not answered within its timeout
     * is missed even while other traffic flows. The strictest: it detects a peer whose transport
     * still delivers data but whose protocol layer no longer answers (a wedged HTTP/2 connection
     * behind a buffering proxy). Go's {@code x/net/http2} health check works this way: it sends a
     * PING with random data and waits for the ACK carrying that data. An answer that comes after its
     * ping's timeout has passed settles nothing more: that ping is already counted missed.
     */
    MATCHED_ONLY,

    /**
     * Only the matching answer settles the ping, but any other inbound traffic pushes its deadline
     * out to a full timeout after that traffic: a peer whose answer is queued behind a large
     * transfer (head-of-line blocking) is not closed while bytes keep coming, and a silent one is
     * closed a timeout after it fell silent. Envoy's HTTP/2 keepalive works this way (its
     * {@code KeepaliveSettings.timeout} is extended when any frame arrives).
     */
    MATCHED_EXTENDS;

    /** Whether this mode needs a probe that recognises answers. */
    public boolean needsMatching() {
        return this != ANY_INBOUND;
    }
}
