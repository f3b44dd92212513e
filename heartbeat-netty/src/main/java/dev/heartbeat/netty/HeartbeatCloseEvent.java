/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * The user event Heartbeat fires through the pipeline, on the channel's event loop, just before it
 * closes the channel: handlers after Heartbeat's see why (to log it, count it, or write a goodbye
 * message first). One preallocated instance per {@link CloseReason}, so firing it allocates nothing;
 * compare with {@link #reason()} or by identity with {@link #of(CloseReason)}.
 *
 * <pre>{@code
 * public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
 *     if (evt instanceof HeartbeatCloseEvent close) {
 *         log.info("{} closed by Heartbeat: {}", ctx.channel(), close.reason());
 *     }
 *     ctx.fireUserEventTriggered(evt);
 * }
 * }</pre>
 */
public final class HeartbeatCloseEvent {

    private static final Map<CloseReason, HeartbeatCloseEvent> EVENTS = new EnumMap<>(CloseReason.class);

    static {
        for (CloseReason reason : CloseReason.values()) {
            EVENTS.put(reason, new HeartbeatCloseEvent(reason));
        }
    }

    private final CloseReason reason;

    private HeartbeatCloseEvent(CloseReason reason) {
        this.reason = reason;
    }

    /** The one event for {@code reason}. */
    public static HeartbeatCloseEvent of(CloseReason reason) {
        return EVENTS.get(Objects.requireNonNull(reason, "reason"));
    }

    /** Why the channel is being closed. */
    public CloseReason reason() {
        return reason;
    }

    @Override
    public String toString() {
        return "HeartbeatCloseEvent(" + reason + ")";
    }
}
