/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.Objects;

/**
 * Fired down the pipeline, on the channel's event loop, when Heartbeat is about to end a healthy
 * connection: at its maximum age ({@link CloseReason#MAX_AGE}) or in a drain
 * ({@link CloseReason#DRAIN}). It is the hook for protocols Heartbeat has no goodbye for (a line
 * protocol, a custom framing): write your own goodbye in reaction, and finish or refuse new work.
 * Heartbeat writes the protocol goodbye of the configuration's {@link Probe}, if it has one, right
 * after this event, and closes the channel {@link #grace()} later if the peer has not closed it by
 * then (at once, once the goodbye is written, when the grace is zero).
 *
 * <pre>{@code
 * public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
 *     if (evt instanceof HeartbeatGoodbyeEvent bye) {
 *         ctx.writeAndFlush("BYE " + bye.reason() + "\n");
 *     }
 *     ctx.fireUserEventTriggered(evt);
 * }
 * }</pre>
 */
public final class HeartbeatGoodbyeEvent {

    private final CloseReason reason;
    private final Duration grace;

    HeartbeatGoodbyeEvent(CloseReason reason, Duration grace) {
        this.reason = Objects.requireNonNull(reason, "reason");
        this.grace = Objects.requireNonNull(grace, "grace");
    }

    /** Why the connection is ending: {@link CloseReason#MAX_AGE} or {@link CloseReason#DRAIN}. */
    public CloseReason reason() {
        return reason;
    }

    /** How long the peer has to finish before Heartbeat closes the channel; zero for at once. */
    public Duration grace() {
        return grace;
    }

    @Override
    public String toString() {
        return "HeartbeatGoodbyeEvent(" + reason + ", grace " + grace + ")";
    }
}
