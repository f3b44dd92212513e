/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.engine;

/**
 * The all-idle check time of an idle configuration that enables all three kinds (reader, writer and
 * all), the one check time the handler's two policy slots have no room for (see
 * {@link IdlePolicy}): a side object made only for such configurations. {@link OutputObserver}
 * extends it, so a configuration that also observes output keeps one side object. Worker only: the
 * event loop makes it before it publishes the configuration, and never touches the field.
 */
public class AllIdleCheck {

    /** Worker only: when the all-idle check is next due. */
    long due;
}
