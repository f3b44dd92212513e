/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * The timer underneath Heartbeat, usable on its own: extend {@link dev.heartbeat.core.TimerEntry} (one
 * reusable entry per thing to time), start a {@link dev.heartbeat.core.TimerWorker} with an
 * {@link dev.heartbeat.core.ExpiryHandler}, and {@code schedule} or {@code cancel} entries from any thread;
 * the worker calls the handler when an entry comes due, never before. Give it a
 * {@link dev.heartbeat.core.Ticker} ({@link dev.heartbeat.core.ManualTicker} in tests) and, to run its cycles
 * on a thread you own, a {@link dev.heartbeat.core.CycleHost}. {@link dev.heartbeat.core.TimingWheel} is the
 * single-threaded wheel itself, for callers that bring their own thread and clock. Netty users want
 * {@code dev.heartbeat.netty} instead, which drives all of this.
 *
 * <h2>Implementation notes</h2>
 * A hierarchical timing wheel of intrusive entries ({@link dev.heartbeat.core.TimingWheel},
 * {@link dev.heartbeat.core.TimerEntry}) and the one worker thread that owns it
 * ({@link dev.heartbeat.core.TimerWorker}).
 *
 * <h3>Threads</h3>
 * A wheel is confined to one thread. A worker's wheel is confined to the worker's duty cycle; other
 * threads talk to it only through {@code schedule} and {@code cancel}, which never block.
 *
 * <h3>Memory-ordering vocabulary</h3>
 * Every field that crosses threads says, where it is declared, who writes it and which access it
 * uses, in these words:
 * <ul>
 * <li><b>plain</b>: an ordinary field access; the field is confined to one thread.</li>
 * <li><b>opaque</b>: {@code VarHandle.setOpaque/getOpaque}: no tearing and eventual visibility, no
 *     ordering with other fields. Used for counters and activity stamps that a reader may see late
 *     but never torn.</li>
 * <li><b>release / acquire</b>: {@code setRelease/getAcquire}: writes before the release are visible
 *     after the acquire that sees it.</li>
 * <li><b>volatile</b>: sequentially consistent; used where two threads must each see the other's
 *     write (the park/unpark handshake).</li>
 * <li><b>CAS</b>: {@code compareAndSet} and the atomic read-modify-writes, volatile strength.</li>
 * </ul>
 *
 * <h3>Time</h3>
 * Times are {@code long} nanoseconds from a {@link dev.heartbeat.core.Ticker}, compared only as
 * {@code a - b > 0} because they may wrap. The wheel takes time as an argument; only the worker reads
 * its ticker.
 */
package dev.heartbeat.core;
