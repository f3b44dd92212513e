/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * Idle detection and keep-alive for Netty channels: replace {@code IdleStateHandler}, {@code ReadTimeoutHandler}
 * and hand-written ping logic with one handler per channel on one shared timing wheel.
 *
 * <h2>Using it</h2>
 * <ol>
 * <li>Start one {@link dev.heartbeat.netty.HeartbeatMonitor} per process
 *     ({@link dev.heartbeat.netty.HeartbeatMonitor#start()}, or its
 *     {@link dev.heartbeat.netty.HeartbeatMonitor#builder() builder} to tune it) and close it at shutdown.</li>
 * <li>Build a {@link dev.heartbeat.netty.HeartbeatConfig} per kind of connection: idle events as
 *     {@code IdleStateHandler} fires them ({@link dev.heartbeat.netty.HeartbeatConfig#events()}), closing idle
 *     channels ({@link dev.heartbeat.netty.HeartbeatConfig#closeWhenIdle()}), or pinging silent peers and
 *     closing those that do not answer ({@link dev.heartbeat.netty.HeartbeatConfig#ping(Probe)}, with a
 *     protocol's {@link dev.heartbeat.netty.probe.Probes probe}); add lifecycle guards (maximum age, write stall,
 *     time unwritable) to any of them.</li>
 * <li>Add {@code monitor.newHandler(config)} to each channel's pipeline where {@code IdleStateHandler} was.
 *     React to {@code IdleStateEvent}s and {@link dev.heartbeat.netty.HeartbeatCloseEvent}s in your own
 *     handler; switch a channel's configuration from any thread with
 *     {@link dev.heartbeat.netty.HeartbeatMonitor#reconfigure(io.netty.channel.Channel, HeartbeatConfig)}.</li>
 * <li>Optionally: police the peers' pings ({@link dev.heartbeat.netty.PingPolicing}), learn a NAT's keep-alive
 *     interval ({@link dev.heartbeat.netty.AdaptiveKeepAlive}), follow MQTT's Keep Alive
 *     ({@link dev.heartbeat.netty.MqttKeepAlive}), and bind the counters to Micrometer
 *     ({@link dev.heartbeat.netty.micrometer.HeartbeatMetrics}).</li>
 * </ol>
 * The user guide, one page per topic with tested examples, is in {@code heartbeat-netty/docs/} of the
 * project.
 *
 * <h2>Threads, for users</h2>
 * Handlers run on their channel's event loop; the monitor's worker judges idleness off the event loops (on
 * its own thread, or on an event loop that hosts it) and hands the actions back to each channel's event
 * loop, which checks again before it acts. Configurations are immutable and shared; the monitor's methods
 * may be called from any thread.
 *
 * <h2>Implementation notes</h2>
 * For maintainers: who holds what, and the orderings of the hand-offs.
 *
 * <h3>Three threads</h3>
 * <ul>
 * <li><b>The channel's event loop</b> (the handler's executor) owns the pipeline. It stamps activity
 *     on the hot path (one ticker read and an opaque store per read batch and per flush of completed
 *     writes, or one for a read batch and the answers flushed as it ends; no allocation, no queue),
 *     requests the channel's wheel entry when the handler starts, is reconfigured or stops, and
 *     carries out the actions the worker hands it, checking each again from the current stamps
 *     before it acts.</li>
 * <li><b>The monitor's worker</b> owns the wheel. When a channel's entry comes due the
 *     configuration's policy judges idleness from the stamps (opaque loads), moves the same entry to
 *     its next check (the lazy re-arm: activity never sends a message), and returns the actions,
 *     which the worker tags with the configuration serial they were judged under. Its cycles run on
 *     its own thread by default, or on an event loop that hosts them
 *     ({@link dev.heartbeat.netty.HeartbeatMonitor.Builder#hostedBy}), the worker's thread then only
 *     watching that the loop runs them; either way one thread at a time owns the wheel.</li>
 * <li><b>Any thread</b> may call {@code reconfigure}, {@code resetReadTimeout} and
 *     {@code resetWriteTimeout}; they run on the handler's executor.</li>
 * </ul>
 *
 * <h3>Who holds what</h3>
 * <ul>
 * <li>{@code HeartbeatHandler}: the channel's one object and wheel entry: its fields, lifecycle, hot
 *     path and hand-off. It never asks which policy it runs.</li>
 * <li>{@code Rule}: everything that decides about a channel, behind one contract: {@code judge} on
 *     the worker returns the rule's action bits and asks for its next look (the entry comes due at
 *     the earliest look any rule asked for), {@code perform} on the event loop checks again and acts.
 *     A configuration compiles once into its ordered rule list: {@code DrainRule},
 *     {@code UnwritableRule}, {@code WriteStallRule}, {@code MaxAgeRule}, {@code OverloadRule} and
 *     the main policy ({@code HandlerPolicy}: {@code EventPolicy} and {@code ClosePolicy} on
 *     {@code IdlePolicy}'s judging, {@code PingPolicy}). Rules reach the handler's state through its
 *     named accessors, which say the thread and the access mode once; their bits are laid out in
 *     {@code ActionBits}; no rule names another ({@code ArchitectureTest}). Adding a policy is adding
 *     a rule.</li>
 * <li>{@code CloseSequence}: every close, whichever rule asks: the veto and its bounded holds, the
 *     close event and its count, the goodbye (once per channel), the capped wait for its write.</li>
 * <li>Side objects, made only for the configurations that need them: {@code AllIdleCheck} (the
 *     third check time of an idle configuration with all three kinds; the handler's two policy slots
 *     hold the others, and the ping policy's own state), {@code OutputObserver} (observeOutput; it
 *     carries that third check time too) and {@code ProbeState} (pings whose answers a probe
 *     recognises, with the channel's round-trip estimate); {@code GuardState} (the guard rules' and
 *     the close veto's state) wraps whichever of those the policy has. {@code Guards} holds the
 *     guards' settings.</li>
 * <li>{@code ActionBudget}: storm control on the worker's hand-offs, a token bucket with a FIFO of
 *     the waiting handlers, paced by one extra wheel entry.</li>
 * </ul>
 *
 * <h3>Hand-offs, and the orderings that make them safe</h3>
 * <ul>
 * <li>Event loop to worker: the entry's state word (CAS) and its request deadline
 *     ({@code dev.heartbeat.core.TimerWorker}); no command objects.</li>
 * <li>Worker to event loop: the handler's action word (CAS of tagged bits, taken by the event loop
 *     with an atomic AND that keeps the ping's on-the-wire bit) and one {@code EventLoopBatch} per
 *     event loop (a lock-free queue, submitted as one task per worker cycle).</li>
 * <li>Configuration: a sequence lock (a CHANGING bit in the event loop's word while changing, release
 *     stores, acquire loads), so the worker judges a configuration together with its serial, and a
 *     verdict of an older serial is dropped on the event loop. The worker starts a configuration at
 *     the first expiry after it applied the schedule request that came with it
 *     ({@code TimerEntry.requestApplied}), and leaves an expiry to a request still queued.</li>
 * </ul>
 * Each field says, where it is declared, which thread writes it and with which access mode.
 */
package dev.heartbeat.netty;
