/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;

import dev.heartbeat.netty.engine.ApiAccess;
import org.junit.jupiter.api.Test;

/** The engine's way to the API package's members that are not public is installed once, by the API itself. */
class EngineAccessTest {

    @Test
    void theApiInstallsItsAccessOnceAndASecondIsRefused() {
        HeartbeatConfig config = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).build();
        EngineAccess another = new EngineAccess();
        assertThrows(IllegalStateException.class, () -> ApiAccess.install(another),
                "HeartbeatConfig installed its access when it was initialised; nothing may replace it");
        assertSame(config, config.plan.owner, "the plan the engine runs leads back to its configuration");
    }
}
