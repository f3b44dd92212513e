/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import io.netty.channel.Channel;

/**
 * Asked on the channel's event loop just before Heartbeat closes a channel (see
 * {@link HeartbeatConfig.Builder#beforeClose}): for every reason but {@link CloseReason#DRAIN} (the
 * operator's) and {@link CloseReason#PING_ABUSE} (the peer's). The answer can keep the channel open
 * for a while ({@link CloseDecision#extend}), as Armeria keeps a connection with requests in progress
 * and gRPC measures idleness from the last call; a bound ({@link HeartbeatConfig.Builder#maxCloseHold})
 * keeps a dead peer from being held forever. Must not block; may read the channel and the
 * application's state of it. A veto that throws lets the close go ahead (counted and logged as a
 * failed action).
 */
@FunctionalInterface
public interface CloseVeto {

    /**
     * Decides about a close Heartbeat is about to make.
     *
     * @param channel the channel, still open
     * @param reason why Heartbeat would close it
     * @return {@link CloseDecision#PROCEED}, {@link CloseDecision#CLOSE_NOW} or {@link CloseDecision#extend}
     */
    CloseDecision beforeClose(Channel channel, CloseReason reason);
}
