/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * Internal: the engine behind {@link dev.heartbeat.netty.HeartbeatMonitor}, which is its facade. Not exported by
 * the module and not an API: its public members are public for the API package's sake, and change without notice.
 *
 * <ul>
 * <li>{@link dev.heartbeat.netty.engine.MonitorEngine}: the wheel and its worker, the judgement of expired
 *     entries and their hand-off to event loops ({@link dev.heartbeat.netty.engine.EventLoopBatch}), the
 *     counters, the drain, the overload mode and the action budget
 *     ({@link dev.heartbeat.netty.engine.ActionBudget}).</li>
 * <li>{@link dev.heartbeat.netty.engine.HeartbeatHandler}: one per channel, also its wheel entry; it stamps
 *     activity and carries out what its rules decide.</li>
 * <li>{@link dev.heartbeat.netty.engine.Plan}: a configuration as the engine runs it, compiled into its ordered
 *     {@link dev.heartbeat.netty.engine.Rule}s: the idle policies, drain, maximum age, write stall,
 *     unwritable and overload; every close goes through the {@link dev.heartbeat.netty.engine.CloseSequence}.</li>
 * <li>{@link dev.heartbeat.netty.engine.ApiAccess}: the engine's one way to the API package's members that
 *     are not public.</li>
 * </ul>
 *
 * <p>The engine never depends on the facade, and a rule never on another rule ({@code ArchitectureTest}).
 */
package dev.heartbeat.netty.engine;
