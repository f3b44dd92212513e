/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import java.lang.invoke.MethodHandles;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import org.jctools.queues.MessagePassingQueue;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

// Over 500 lines (listed in checkstyle.xml): the worker's lifecycle, request queue, parking and hosting protocol
// share one state machine and its memory-ordering argument; about half is Javadoc.
/**
 * One thread that owns a {@link TimingWheel}: any thread may {@linkplain #schedule schedule} or
 * {@linkplain #cancel cancel} an entry, without blocking or allocating; the worker applies the
 * requests, advances the wheel on its {@link Ticker} and hands expired entries to an
 * {@link ExpiryHandler}, then sleeps until the next occupied slot or the next request.
 *
 * <p>Built with {@link #builder(ExpiryHandler)}. {@link #start()} runs the worker on its own daemon
 * thread; a worker that is never started can be driven on the caller's thread with
 * {@link #doWork()}, which is how tests run it in virtual time.
 *
 * <h2>Contract</h2>
 * <ul>
 * <li>An armed entry's handler runs exactly once per arming (each {@code schedule} or
 *     {@link #rearm}), never before its deadline and, while the worker keeps up, at most one tick
 *     after it. A later request replaces an earlier one that has not been applied yet.</li>
 * <li>A {@code cancel} that returns {@code true} happened before the handler could start: it will
 *     not run for that arming. One that returns {@code false} found nothing armed, or a handler
 *     already running; that handler finishes, but cannot re-arm the entry.</li>
 * <li>A throwing handler is caught, counted and logged (at most once per second); the worker goes on.</li>
 * </ul>
 *
 * <h2>Implementation notes</h2>
 * <p>Requests carry no command object. A requester sets WRITING, writes the entry's requested
 * deadline, then CASes the entry's state word to the requested lifecycle with the QUEUED bit
 * (clearing WRITING), and offers the entry to the MPSC queue only if QUEUED was clear. The worker
 * clears QUEUED first and then reads the request, so a request made meanwhile either is seen now or
 * queues the entry again: the newest request always wins and an entry is in the queue at most once.
 * The worker fires an entry only from exactly ARMED, so never on a deadline read while WRITING was
 * set and not yet committed (which would fire that arming early and the committed one again).
 *
 * <p>The queue holds each entry at most once, so it is bounded by the number of entries; that is why
 * it is unbounded (JCTools' {@link MpscUnboundedXaddArrayQueue}, whose chunks are pooled so a steady
 * stream of requests allocates nothing): a bound could only reject a request for an entry that
 * already exists, and a lost cancel or register is worse than the memory it saves.
 * Requests are rejected, and counted, only once the worker is closed.
 *
 * <p>State word transitions (lifecycle | QUEUED):
 * <pre>
 *   schedule (owner thread): any            -> any|WRITING -> ARMED|QUEUED
 *   cancel   (owner thread): ARMED, FIRING  -> CANCELLED|QUEUED  (true only from ARMED)
 *   worker applies request:  x|QUEUED       -> x                 (then links or unlinks the entry)
 *   worker expires entry:    ARMED          -> FIRING            (any other state: a newer request wins)
 *                            (ARMED|WRITING, ARMED|QUEUED: skipped; the request re-queues and decides)
 *   worker after handler:    FIRING         -> ARMED if re-armed, else IDLE
 * </pre>
 *
 * <p>Wake-ups follow work, not requests. The worker parks until the wheel's next work, but at most
 * {@link #MAX_SLEEP_NANOS} while the wheel holds entries (until a request, if it is empty), and
 * publishes when it will wake. A schedule request wakes it only if its deadline is earlier than that
 * and the worker's {@code parked} flag is set (Dekker style: the worker publishes the wake time, sets
 * the flag, then re-checks the queue; a requester offers, then checks the flag and the wake time),
 * so one unpark serves every request queued behind it, a busy worker is never signalled, and a
 * steady stream of registrations for later deadlines costs no wake-up at all. A cancel never wakes
 * it: it is applied at the next wake-up, at most a second later. Entries may ask for timer slack
 * ({@link TimerEntry#coalesce}) so that nearby deadlines share one wake-up.
 *
 * <p>Hosted mode ({@link #startHosted}): the same cycles run on a {@link CycleHost}, a thread that
 * is awake anyway (a Netty event loop), which calls {@link #runHosted()}; the worker asks it, instead
 * of its own thread, to run at the wheel's next work ({@link CycleHost#plan}) or sooner for an earlier
 * request ({@link CycleHost#wake}, under the same {@code parked} handshake as an unpark). The worker's
 * own thread becomes a watchdog: it wakes once per watchdog period and, if the host has not run a
 * cycle it was asked for within a period (a blocked or shut-down event loop), runs the cycles itself
 * until the host runs one again. One thread at a time drives the wheel (a CAS on the driver), so the
 * two hand it over with a happens-before edge, as {@link #doWork()} callers do. A host's run is bounded
 * by time ({@link #HOSTED_RUN_BUDGET_NANOS}, the clock read once per chunk of up to {@link #HOSTED_CHUNK}
 * pieces of work, a cascade included through {@link TimingWheel#advance(long, int, int, ExpiryHandler)}'s place
 * limit): what is left is planned at once as the next run, so the host's own work interleaves.
 *
 * @param <E> the entry type
 */
public final class TimerWorker<E extends TimerEntry> implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TimerWorker.class);
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final boolean THREAD_CPU =
            THREADS.isCurrentThreadCpuTimeSupported() && THREADS.isThreadCpuTimeEnabled();
    private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * The longest the worker sleeps while the wheel holds entries: a request for a later deadline
     * does not wake it, so a cancel or a far deadline waits at most this long in the queue.
     */
    static final long MAX_SLEEP_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * One hosted cycle in this many (a power of two) is timed by its host thread's CPU clock; each
     * cycle is counted at the cost of the latest timed one, the first cycle being timed.
     */
    static final int TIMED_CYCLE_EVERY = 16;
    /**
     * The most one hosted run spends before it leaves the rest of its work to the next run, which it
     * asks its host for at once ({@link CycleHost#plan} with 0): half of the 200 µs that issue 29 allows
     * a task on an event loop, so that the overrun of one chunk ({@link #HOSTED_CHUNK}) still fits, unless
     * one piece alone is that long.
     * Requests get at most half of it, so a storm of registrations cannot starve the expiries. The
     * worker's own thread (and a watchdog take-over) runs whole cycles.
     */
    static final long HOSTED_RUN_BUDGET_NANOS = TimeUnit.MICROSECONDS.toNanos(100);
    /**
     * The most requests applied, entries placed by a cascade or entries expired between two reads of the
     * ticker in a hosted run: a chunk starts at one piece and doubles up to this while a chunk takes
     * under {@link #HOSTED_CHEAP_CHUNK_NANOS}, and is one piece again after a chunk that took longer. A
     * piece costs from tens of nanoseconds (warm) to more than 3 µs (an expiry and its judgement on cold
     * caches: at a million connections, the JFR events' CPU time put the first chunk of 64 over 200 µs in
     * about 50 runs), and 23 to 51 µs at the median in the hosted cycles that took over 200 µs of CPU at
     * 100k tcp connections on a slower VM ({@code load-test/docs/results.md}): so cheap pieces share a
     * clock read (21.7 ns for {@code System.nanoTime()} on this project's VM) by 16, and costly ones are
     * each followed by one. A run ends at most one chunk past its budget: one piece where the pieces are
     * costly from the start, up to a whole chunk where they turn costly within one (cheap requests, say,
     * and then expiries on cold caches; the chunk carries over from the requests to the expiries).
     */
    static final int HOSTED_CHUNK = 16;
    /** A chunk that took less than this is cheap: the next one is twice as long (see {@link #HOSTED_CHUNK}). */
    static final long HOSTED_CHEAP_CHUNK_NANOS = TimeUnit.MICROSECONDS.toNanos(4);
    /** {@link #wakeAt} of a worker parked with an empty wheel: every schedule request wakes it. */
    private static final long FOREVER = 1L << 62;

    private static final int NEW = 0;
    private static final int RUNNING = 1;
    private static final int CLOSING = 2;
    private static final int CLOSED = 3;

    private static final VarHandle LIFECYCLE;
    private static final VarHandle PARKED;
    private static final VarHandle DRIVER;
    private static final VarHandle HOSTED_RUNS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            LIFECYCLE = lookup.findVarHandle(TimerWorker.class, "lifecycle", int.class);
            PARKED = lookup.findVarHandle(TimerWorker.class, "parked", boolean.class);
            DRIVER = lookup.findVarHandle(TimerWorker.class, "driver", Thread.class);
            HOSTED_RUNS = lookup.findVarHandle(TimerWorker.class, "hostedRuns", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // ---- Immutable after construction. ----
    private final TimingWheel<E> wheel;
    private final MessagePassingQueue<TimerEntry> requests;
    private final ExpiryHandler<? super E> handler;
    private final Ticker ticker;
    private final int maxExpirationsPerCycle;
    private final int maxRequestsPerCycle;
    private final String threadName;
    private final Thread thread;
    private final MessagePassingQueue.Consumer<TimerEntry> applyRequest = this::apply;
    /**
     * The wheel's handler: a class whose {@code onExpired} is the dispatch itself, not a method reference to a
     * private method, so that the JIT sees one method between the wheel and the expiry handler, not two: each
     * frame on that path became a root that C2 compiled on its own with the whole judgement inlined (JFR
     * {@code jdk.Compilation}, issue 29).
     */
    private final ExpiryHandler<E> dispatch = new Dispatch();
    private final WorkerCounters counters = new WorkerCounters();

    // ---- Shared. ----
    /** NEW, RUNNING, CLOSING, CLOSED; volatile and CAS through {@link #LIFECYCLE}. */
    private volatile int lifecycle = NEW;
    /** Set by the worker before it parks; cleared by whoever wakes it. Volatile and CAS. */
    private volatile boolean parked;
    /**
     * While {@link #parked}: when the worker will wake by itself. Written by the worker before it sets
     * {@code parked}; a requester wakes it only for a deadline earlier than this. Volatile.
     */
    private volatile long wakeAt;
    /** The thread inside {@link #doWork} now, or null: CAS, so two threads never drive at once. */
    @SuppressWarnings("unused") // accessed through DRIVER
    private volatile Thread driver;
    /**
     * The host of a worker started with {@link #startHosted}, else null. Written before the thread
     * starts and before any request can see {@code parked} set; read by requesters that wake it.
     */
    private volatile CycleHost host;
    /**
     * Hosted cycles completed: written by the driving host thread (release), read by the watchdog
     * (acquire) through {@link #HOSTED_RUNS}.
     */
    @SuppressWarnings("unused") // accessed through HOSTED_RUNS
    private long hostedRuns;
    /**
     * Driver only: the host CPU time of the latest timed hosted cycle, counted for each cycle until
     * the next timed one (see {@link #hostClock}); 0 before the first.
     */
    private long lastTimedCycleNanos;
    /** How often the watchdog checks on the host; written before the thread starts. */
    private long watchdogNanos;

    // ---- Owned by the thread running the duty cycle (the worker thread, or the doWork caller). ----
    /**
     * The thread running the current cycle (the worker thread, or the caller of {@link #doWork} for
     * the length of that call), so {@link #rearm} can check it is called there.
     */
    private Thread cycleThread;
    /** The entry whose handler is running, the only one {@link #rearm} accepts. */
    private E firing;
    private boolean expiredThisCycle;
    private long lastFailureLog;
    private long suppressedFailures;

    private TimerWorker(Builder<E> builder) {
        this.ticker = builder.ticker;
        this.wheel = new TimingWheel<>(builder.tickNanos, builder.levels, ticker.nanoTime());
        this.handler = builder.handler;
        this.maxExpirationsPerCycle = builder.maxExpirationsPerCycle;
        this.maxRequestsPerCycle = builder.maxRequestsPerCycle;
        this.threadName = builder.threadName;
        // Up to 4 spare chunks are pooled: a burst of requests (a reconnect storm) reuses them instead of
        // allocating new chunks every time the queue grows past one chunk.
        this.requests = new MpscUnboundedXaddArrayQueue<>(builder.queueChunkSize, 4);
        this.thread = new Thread(this::run, threadName);
        this.thread.setDaemon(true);
        this.lastFailureLog = System.nanoTime() - LOG_INTERVAL_NANOS;
    }

    /**
     * A builder for a worker that hands expired entries to {@code handler}.
     *
     * @param <E> the entry type
     */
    public static <E extends TimerEntry> Builder<E> builder(ExpiryHandler<? super E> handler) {
        return new Builder<>(handler);
    }

    /**
     * Starts the worker thread.
     *
     * @throws IllegalStateException if the worker was started or closed
     */
    public void start() {
        if (!LIFECYCLE.compareAndSet(this, NEW, RUNNING)) {
            throw new IllegalStateException("worker '" + threadName + "' cannot start: it is "
                    + lifecycleName((int) LIFECYCLE.getVolatile(this)));
        }
        thread.start();
    }

    /**
     * Starts the worker in hosted mode: its cycles run on {@code host} (which calls
     * {@link #runHosted()} when the worker asks it to, see {@link CycleHost}), and the worker's own
     * thread only checks, once per {@code watchdog} period, that the host runs the cycles it was asked
     * for. If the host has not run a cycle within a period after the cycle was due (the host is
     * blocked, or can no longer run tasks), the worker's thread runs them itself, waking at least once
     * a period, until the host runs one again: expiries are then late by up to about a period, and
     * requests made meanwhile wait up to a period.
     *
     * @param host where the cycles run
     * @param watchdog the watchdog period, in [1 ms, 1 min]
     * @throws IllegalStateException if the worker was started or closed
     * @throws IllegalArgumentException if the watchdog period is out of range
     */
    public void startHosted(CycleHost host, Duration watchdog) {
        Objects.requireNonNull(host, "host");
        long period = checkWatchdog(watchdog);
        if (!LIFECYCLE.compareAndSet(this, NEW, RUNNING)) {
            throw new IllegalStateException("worker '" + threadName + "' cannot start: it is "
                    + lifecycleName((int) LIFECYCLE.getVolatile(this)));
        }
        this.watchdogNanos = period;
        this.host = host;
        thread.start();
        host.wake(); // the first cycle: there may be requests already
    }

    /**
     * Checks a watchdog period for {@link #startHosted}.
     *
     * @return the period in nanoseconds
     * @throws IllegalArgumentException if not in [1 ms, 1 min]
     */
    public static long checkWatchdog(Duration watchdog) {
        Objects.requireNonNull(watchdog, "watchdog");
        if (watchdog.compareTo(Duration.ofMillis(1)) < 0 || watchdog.compareTo(Duration.ofMinutes(1)) > 0) {
            throw new IllegalArgumentException("watchdog period must be in [1ms, 1min]: " + watchdog);
        }
        return watchdog.toNanos();
    }

    /**
     * Runs one duty cycle on the calling thread, for the {@link CycleHost} of a worker started with
     * {@link #startHosted}, then asks the host for the next one ({@link CycleHost#plan}). Call it
     * only from the host, when the worker asked for it; a call while the worker's own thread is
     * running a cycle (after a take-over) asks the host to try again one tick later. Does nothing
     * once the worker is closed.
     *
     * <p>One call is bounded: it stops after about {@link #HOSTED_RUN_BUDGET_NANOS} of work by the
     * worker's ticker (requests applied, cascaded entries placed, entries expired), and if work is
     * left it plans the next run at once ({@code plan(0)}), so the host interleaves its own tasks and
     * I/O with a burst of expiries. No entry is handed out twice: the entries not handed out stay due
     * in the wheel for the next run.
     *
     * @return the requests applied plus entries expired by this run (0 if it ran no cycle)
     * @throws IllegalStateException if the worker was not started with {@link #startHosted}
     */
    public int runHosted() {
        CycleHost h = host;
        if (h == null) {
            throw new IllegalStateException("runHosted() is for a worker started with startHosted(): '"
                    + threadName + "' is " + lifecycleName(lifecycle) + " without a host");
        }
        if (lifecycle != RUNNING) {
            return 0;
        }
        Thread self = Thread.currentThread();
        if (!DRIVER.compareAndSet(this, null, self)) {
            h.plan(wheel.tickNanos()); // the watchdog thread is in a cycle: hand back soon
            return 0;
        }
        long runs = (long) HOSTED_RUNS.get(this); // one writer at a time: the driver
        boolean timed = (runs & (TIMED_CYCLE_EVERY - 1)) == 0;
        long began = timed ? hostClock() : 0;
        try {
            if (lifecycle != RUNNING) {
                return 0; // closed meanwhile: the watchdog cleared the wheel before we got it
            }
            cycleThread = self;
            counters.wakeup();
            long now = ticker.nanoTime();
            int work = boundedCycle(now);
            planNext(h, now);
            HOSTED_RUNS.setRelease(this, runs + 1);
            return work;
        } finally {
            cycleThread = null;
            if (timed) {
                lastTimedCycleNanos = Math.max(1, hostClock() - began);
            }
            counters.hosted(lastTimedCycleNanos);
            driver = null;
        }
    }

    /**
     * The clock hosted cycles are timed with: the calling thread's CPU time where the JVM measures it,
     * so that a cycle's cost does not count the time its host spent descheduled; else wall time. Only
     * one cycle in {@link #TIMED_CYCLE_EVERY} is timed: reading a thread's CPU clock is a system call
     * (no vDSO path for it); read twice in every cycle, it took about a quarter of a hosted cycle's
     * CPU on this project's VM (async-profiler, 100k tcp run).
     */
    private static long hostClock() {
        return THREAD_CPU ? THREADS.getCurrentThreadCpuTime() : System.nanoTime();
    }

    /** Host, at the end of a hosted cycle: publishes when the host runs next and asks it to. */
    private void planNext(CycleHost h, long cycleStart) {
        if (!requests.isEmpty() || wheel.hasDue()) {
            h.plan(0); // more is waiting; parked stays false, so requests do not wake the host again
            return;
        }
        long delay = wheel.isEmpty() ? FOREVER : Math.min(wheel.nanosToNextWork(), MAX_SLEEP_NANOS);
        wakeAt = cycleStart + delay;
        parked = true; // volatile: ordered after wakeAt and before the re-check below (Dekker with schedule)
        if (!requests.isEmpty()) {
            if (PARKED.compareAndSet(this, true, false)) {
                h.plan(0);
            } // else a requester cleared it and called wake()
            return;
        }
        if (delay != FOREVER) {
            h.plan(Math.max(0, delay - (ticker.nanoTime() - cycleStart)));
        }
    }

    /**
     * Asks the worker to arm {@code entry} for {@code deadline} (in the ticker's time base), or to move
     * it there if it is armed. Never blocks; allocates nothing. Any thread, with one rule: requests
     * for the same entry come from one thread at a time (its owner, such as a channel's event loop);
     * different entries may be requested from any number of threads at once.
     *
     * @return {@code false} if the worker is closed and the request was rejected
     */
    public boolean schedule(E entry, long deadline) {
        if (lifecycle >= CLOSING) {
            counters.rejected();
            return false;
        }
        // WRITING keeps the worker from firing the entry on a deadline it may read before this
        // request is committed by the CAS below (which clears WRITING and sets QUEUED).
        entry.beginRequest();
        entry.requestDeadline(deadline);
        int state;
        do {
            state = entry.state();
        } while (!entry.casState(state, TimerEntry.ARMED | TimerEntry.QUEUED));
        if ((state & TimerEntry.QUEUED) == 0) {
            requests.offer(entry);
        }
        // Wake a parked worker only if it would otherwise wake too late for this deadline: a request
        // for later waits in the queue until the worker's next wake-up, at most MAX_SLEEP_NANOS away.
        if (parked && deadline - wakeAt < 0) {
            wakeParked();
        }
        return true;
    }

    /** Wakes the parked worker (its thread, or its host), unless another requester has already. */
    private void wakeParked() {
        if (PARKED.compareAndSet(this, true, false)) {
            CycleHost h = host;
            if (h == null) {
                LockSupport.unpark(thread);
            } else {
                h.wake();
            }
        }
    }

    /**
     * Runs {@code task} on the worker's cycle thread at its next cycle, in order with the schedule and
     * cancel requests made before it, and wakes a parked worker for it. For rare whole-wheel work
     * (such as a drain, which re-times every entry through {@link #forEachScheduled} and
     * {@link #move}); allocates one small object per call. A task that throws is counted and logged
     * as a handler failure; the worker goes on.
     *
     * @return {@code false} if the worker is closed and the task will never run
     */
    public boolean execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        if (lifecycle >= CLOSING) {
            counters.rejected();
            return false;
        }
        requests.offer(new Task(task));
        if (parked) {
            wakeParked();
        }
        return true;
    }

    /**
     * The number of entries scheduled in the wheel now (an entry whose expiry is being handled is not
     * among them). Only from a task run by {@link #execute} or from an {@link ExpiryHandler}, on the
     * cycle thread.
     *
     * @throws IllegalStateException on any other thread
     */
    public int scheduledCount() {
        requireCycleThread("scheduledCount");
        return wheel.size();
    }

    /**
     * Hands every entry scheduled in the wheel to {@code action} (see {@link TimingWheel#forEach}).
     * Only from a task run by {@link #execute} or from an {@link ExpiryHandler}, on the cycle thread.
     *
     * @throws IllegalStateException on any other thread
     */
    public void forEachScheduled(Consumer<? super E> action) {
        requireCycleThread("forEachScheduled");
        wheel.forEach(action);
    }

    /**
     * Moves a scheduled {@code entry} to {@code deadline} (coalesced, as every deadline is), outside
     * its own expiry. Only on the cycle thread, as {@link #forEachScheduled}; an entry that is not
     * scheduled (cancelled or firing) is left alone.
     *
     * @return whether the entry was scheduled and has been moved
     * @throws IllegalStateException on any other thread
     */
    public boolean move(E entry, long deadline) {
        requireCycleThread("move");
        if (!entry.isScheduled() || entry == firing) {
            return false;
        }
        wheel.schedule(entry, entry.coalesce(deadline));
        counters.rearmed();
        return true;
    }

    /**
     * Arms {@code entry} for {@code deadline} (coalesced) directly in the wheel, without a queued
     * request, if it is idle: never armed, or expired and not re-armed. For entries that only the
     * worker's own handler arms (a pacer, a follow-up check): the cycle that arms one this way needs
     * no extra cycle to apply a request. Only on the cycle thread, as {@link #forEachScheduled}.
     * Allocates nothing.
     *
     * @return whether the entry was idle and is now armed; {@code false} leaves it as it was (armed,
     *     firing, queued or cancelled)
     * @throws IllegalStateException on any other thread
     */
    public boolean arm(E entry, long deadline) {
        requireCycleThread("arm");
        if (!entry.casState(TimerEntry.IDLE, TimerEntry.ARMED)) {
            return false;
        }
        wheel.schedule(entry, entry.coalesce(deadline));
        counters.scheduled();
        return true;
    }

    private void requireCycleThread(String what) {
        if (Thread.currentThread() != cycleThread) {
            throw new IllegalStateException(what + " is only allowed on the worker's cycle (a task given to "
                    + "execute, or an expiry handler)");
        }
    }

    /** A task queued among the requests (see {@link #execute}): never scheduled in the wheel. */
    private static final class Task extends TimerEntry {
        final Runnable task;

        Task(Runnable task) {
            this.task = task;
        }

        @Override
        public String toString() {
            return "task " + task;
        }
    }

    /**
     * Asks the worker to disarm {@code entry}. Never blocks; allocates nothing. Any thread, under the
     * same one-owner-per-entry rule as {@link #schedule}.
     *
     * @return {@code true} if the entry was armed and its handler can no longer run for that arming;
     *     {@code false} if it was not armed, or its handler is already running (it will not be
     *     re-armed), or the worker is closed
     */
    public boolean cancel(E entry) {
        int state;
        do {
            state = entry.state();
            int lifecycle = state & TimerEntry.LIFECYCLE;
            if (lifecycle == TimerEntry.IDLE || lifecycle == TimerEntry.CANCELLED) {
                return false;
            }
        } while (!entry.casState(state, TimerEntry.CANCELLED | TimerEntry.QUEUED));
        if (this.lifecycle >= CLOSING) {
            counters.rejected();
            return false;
        }
        if ((state & TimerEntry.QUEUED) == 0) {
            requests.offer(entry); // no wake-up: a cancel never needs the worker sooner (see MAX_SLEEP_NANOS)
        }
        return (state & TimerEntry.LIFECYCLE) == TimerEntry.ARMED;
    }

    /**
     * Arms {@code entry} again, from inside its own {@link ExpiryHandler#onExpired} call, without a
     * queued request: the lazy re-arm. Allocates nothing.
     *
     * @throws IllegalStateException if not called on the worker's cycle, from the handler of this entry
     */
    public void rearm(E entry, long deadline) {
        if (Thread.currentThread() != cycleThread || entry != firing) {
            throw new IllegalStateException("rearm is only allowed from the expiry handler of the same entry");
        }
        wheel.schedule(entry, entry.coalesce(deadline));
        counters.rearmed();
    }

    /**
     * Runs one duty cycle on the calling thread: applies at most the per-cycle limit of requests,
     * advances the wheel to the ticker's time and expires at most the per-cycle limit of entries.
     * For tests in virtual time, and for callers that run the worker's loop themselves: any thread,
     * one at a time (each call hands the wheel over to its thread, with the happens-before of the
     * hand-over), and never once the worker is started.
     *
     * @return the number of requests applied plus entries expired
     * @throws IllegalStateException if the worker thread was started, the worker is closed, or
     *     another thread is inside {@code doWork} now
     */
    public int doWork() {
        if (lifecycle != NEW) {
            throw new IllegalStateException("doWork() drives only a worker that was never started: '"
                    + threadName + "' is " + lifecycleName(lifecycle));
        }
        Thread self = Thread.currentThread();
        // (Not parked while driven this way, so requests never try to wake a thread.)
        Thread other = (Thread) DRIVER.compareAndExchange(this, null, self);
        if (other != null) {
            throw new IllegalStateException("doWork() of '" + threadName + "' is running on " + other
                    + " already: one thread at a time");
        }
        try {
            cycleThread = self;
            return cycle(ticker.nanoTime());
        } finally {
            cycleThread = null;
            driver = null;
        }
    }

    /** Whether the worker has announced that it parks (and no requester has woken it yet): for tests. */
    boolean isParked() {
        return parked;
    }

    private int cycle(long now) {
        counters.cycle();
        int applied = requests.drain(applyRequest, maxRequestsPerCycle);
        expiredThisCycle = false;
        int expired = wheel.advance(now, maxExpirationsPerCycle, dispatch);
        return endCycle(applied, expired);
    }

    /**
     * A hosted run's cycle: as {@link #cycle}, but in chunks (see {@link #HOSTED_CHUNK}), stopping once
     * {@link #HOSTED_RUN_BUDGET_NANOS} has passed since {@code now} (requests: half of it). Whatever is
     * left stays queued or due, and the caller plans the next run at once.
     */
    private int boundedCycle(long now) {
        counters.cycle();
        int chunk = 1;
        long read = now; // the latest clock reading
        int applied = 0;
        while (applied < maxRequestsPerCycle) {
            int n = requests.drain(applyRequest, Math.min(chunk, maxRequestsPerCycle - applied));
            applied += n;
            if (n == 0) {
                break;
            }
            long t = ticker.nanoTime();
            if (t - now >= HOSTED_RUN_BUDGET_NANOS / 2) {
                break;
            }
            chunk = nextChunk(chunk, t - read);
            read = t;
        }
        expiredThisCycle = false;
        int expired = 0;
        while (true) {
            expired += wheel.advance(now, Math.min(chunk, maxExpirationsPerCycle - expired), chunk, dispatch);
            if (!wheel.hasDue() || expired >= maxExpirationsPerCycle) {
                break;
            }
            long t = ticker.nanoTime();
            if (t - now >= HOSTED_RUN_BUDGET_NANOS) {
                break;
            }
            chunk = nextChunk(chunk, t - read);
            read = t;
        }
        return endCycle(applied, expired);
    }

    /** A hosted run's next chunk after one of {@code chunk} pieces that took {@code nanos} ({@link #HOSTED_CHUNK}). */
    static int nextChunk(int chunk, long nanos) {
        return nanos < HOSTED_CHEAP_CHUNK_NANOS ? Math.min(chunk << 1, HOSTED_CHUNK) : 1;
    }

    /** The end of a cycle, whole or bounded: the handler's batch hand-off, then the counters; the work done. */
    private int endCycle(int applied, int expired) {
        if (expiredThisCycle) {
            try {
                handler.onCycleEnd();
            } catch (Throwable t) {
                failed(null, t);
            }
        }
        counters.publish(applied, wheel.size());
        return applied + expired;
    }

    /** Applies the latest request of an entry. A drain consumer: must not throw. */
    @SuppressWarnings("unchecked")
    private void apply(TimerEntry request) {
        if (request instanceof Task t) {
            try {
                t.task.run();
            } catch (Throwable e) {
                failed(t, e);
            }
            return;
        }
        E entry = (E) request;
        int state = entry.takeRequest();
        switch (state & TimerEntry.LIFECYCLE) {
            case TimerEntry.ARMED:
                entry.requestApplied();
                wheel.schedule(entry, entry.coalesce(entry.requestedDeadline()));
                counters.scheduled();
                break;
            case TimerEntry.CANCELLED:
                if (wheel.cancel(entry)) {
                    counters.cancelled();
                }
                break;
            default:
                break; // only QUEUED-less states reach here, and only as duplicates: nothing to do
        }
    }

    /** The wheel's handler on the cycle thread: fires an armed entry, isolated, and settles its state. */
    private final class Dispatch implements ExpiryHandler<E> {
        @Override
        public void onExpired(E entry, long now) {
            if (!entry.casState(TimerEntry.ARMED, TimerEntry.FIRING)) {
                return; // cancelled, or a newer request is queued and will decide
            }
            counters.expired(now - entry.deadline());
            expiredThisCycle = true;
            firing = entry;
            try {
                handler.onExpired(entry, now);
            } catch (Throwable t) {
                failed(entry, t);
            } finally {
                firing = null;
            }
            boolean rearmed = entry.isScheduled();
            if (!entry.casState(TimerEntry.FIRING, rearmed ? TimerEntry.ARMED : TimerEntry.IDLE)
                    && rearmed && (entry.state() & TimerEntry.LIFECYCLE) == TimerEntry.CANCELLED) {
                wheel.cancel(entry); // cancelled while its handler ran: the re-arm does not stand
            }
        }
    }

    private void failed(TimerEntry entry, Throwable t) {
        counters.failure();
        long now = System.nanoTime();
        if (now - lastFailureLog >= LOG_INTERVAL_NANOS) {
            lastFailureLog = now;
            long suppressed = suppressedFailures;
            suppressedFailures = 0;
            LOG.warn("{}: expiry handler failed{} ({} similar failures suppressed in the last second)",
                    threadName, entry == null ? " at cycle end" : " for " + entry, suppressed, t);
        } else {
            suppressedFailures++;
        }
    }

    private void run() {
        CycleHost h = host;
        if (h != null) {
            try {
                watch();
            } catch (Throwable t) {
                LOG.error("{}: watchdog loop failed; the watchdog stops", threadName, t);
                throw t;
            } finally {
                closeHosted();
            }
            return;
        }
        cycleThread = Thread.currentThread();
        try {
            while (lifecycle == RUNNING) {
                long now = ticker.nanoTime();
                cycle(now);
                if (!requests.isEmpty() || wheel.hasDue()) {
                    continue; // more is waiting: no sleep
                }
                idle(now);
            }
        } catch (Throwable t) {
            LOG.error("{}: worker loop failed; the worker stops", threadName, t);
            throw t;
        } finally {
            wheel.clear();
            counters.publish(0, 0);
            lifecycle = CLOSED;
        }
    }

    /**
     * The watchdog of a hosted worker: wakes once a period; if no hosted cycle finished in the last
     * period although one was due (asked for, or planned more than a period ago), runs the cycles
     * itself until the host runs one again.
     */
    private void watch() {
        long seen = hostedRuns();
        while (lifecycle == RUNNING) {
            LockSupport.parkNanos(this, watchdogNanos);
            if (lifecycle != RUNNING) {
                return;
            }
            long runs = hostedRuns();
            if (runs == seen && (!parked || ticker.nanoTime() - wakeAt > watchdogNanos)) {
                takeOver(runs);
            }
            seen = hostedRuns();
        }
    }

    private long hostedRuns() {
        return (long) HOSTED_RUNS.getAcquire(this);
    }

    /** Watchdog: runs the cycles while the host runs none, waking at least once a period. */
    private void takeOver(long runs) {
        boolean first = true;
        while (lifecycle == RUNNING && hostedRuns() == runs) {
            Thread self = Thread.currentThread();
            if (!DRIVER.compareAndSet(this, null, self)) {
                return; // the host is in a cycle: it is alive
            }
            long delay;
            try {
                cycleThread = self;
                if (first) {
                    first = false;
                    counters.takeover();
                    logTakeover();
                }
                counters.wakeup();
                long now = ticker.nanoTime();
                cycle(now);
                delay = !requests.isEmpty() || wheel.hasDue() ? 0
                        : wheel.isEmpty() ? watchdogNanos : Math.min(wheel.nanosToNextWork(), watchdogNanos);
            } finally {
                cycleThread = null;
                driver = null;
            }
            if (delay > 0) {
                LockSupport.parkNanos(this, delay);
            }
        }
    }

    /** Driver only (counts as a failure log for the rate limit). */
    private void logTakeover() {
        long now = System.nanoTime();
        if (now - lastFailureLog >= LOG_INTERVAL_NANOS) {
            lastFailureLog = now;
            LOG.warn("{}: its host did not run a due cycle for more than {} ms; the worker's own thread runs"
                    + " the cycles until the host runs one again", threadName, watchdogNanos / 1_000_000);
        }
    }

    /** The watchdog thread, ending: takes the wheel from the host (waiting out a running cycle) and clears it. */
    private void closeHosted() {
        Thread self = Thread.currentThread();
        while (!DRIVER.compareAndSet(this, null, self)) {
            LockSupport.parkNanos(this, 10_000); // a host cycle is running: bounded by its per-cycle limits
        }
        try {
            wheel.clear();
            counters.publish(0, 0);
            lifecycle = CLOSED;
        } finally {
            driver = null;
        }
    }

    private void idle(long cycleStart) {
        long delay = wheel.isEmpty() ? FOREVER : Math.min(wheel.nanosToNextWork(), MAX_SLEEP_NANOS);
        wakeAt = cycleStart + delay;
        parked = true; // volatile: ordered after wakeAt and before the re-check below (Dekker with schedule)
        if (!requests.isEmpty() || lifecycle != RUNNING) {
            parked = false;
            return;
        }
        if (delay == FOREVER) {
            LockSupport.park(this);
        } else {
            long remaining = delay - (ticker.nanoTime() - cycleStart);
            if (remaining > 0) {
                LockSupport.parkNanos(this, remaining);
            }
        }
        parked = false;
        counters.wakeup();
    }

    /**
     * Stops the worker thread and waits up to 5 seconds for it. Idempotent. Entries still scheduled
     * are dropped without their handler running; requests made after close are rejected.
     */
    @Override
    public void close() {
        close(Duration.ofSeconds(5));
    }

    /**
     * Stops the worker thread and waits up to {@code timeout} for it to end. Idempotent; safe to call
     * from the worker's own handler (it then does not wait).
     *
     * @return whether the worker thread has ended (always {@code true} for a worker never started)
     */
    public boolean close(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        while (true) {
            int state = lifecycle;
            if (state == NEW) {
                if (LIFECYCLE.compareAndSet(this, NEW, CLOSED)) {
                    wheel.clear();
                    counters.publish(0, 0);
                    return true;
                }
            } else if (state == RUNNING) {
                if (LIFECYCLE.compareAndSet(this, RUNNING, CLOSING)) {
                    break;
                }
            } else {
                break;
            }
        }
        if (!thread.isAlive() && thread.getState() != Thread.State.NEW) {
            return true;
        }
        LockSupport.unpark(thread);
        if (Thread.currentThread() == thread || Thread.currentThread() == (Thread) DRIVER.getVolatile(this)) {
            return false; // called from inside a cycle: the thread ends once that cycle ends
        }
        try {
            thread.join(Math.max(1, timeout.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    /** Whether {@link #close} was called. */
    public boolean isClosed() {
        return lifecycle >= CLOSING;
    }

    /** The ticker this worker reads time from. */
    public Ticker ticker() {
        return ticker;
    }

    /** The wheel's tick in nanoseconds: the most an expiry is late while the worker keeps up. */
    public long tickNanos() {
        return wheel.tickNanos();
    }

    /** The worker thread's name. */
    public String threadName() {
        return threadName;
    }

    /**
     * CPU time the worker thread has used, in nanoseconds, or -1 if it is not running or the JVM
     * cannot measure thread CPU time. Any thread.
     */
    public long cpuTimeNanos() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        if (!thread.isAlive() || !threads.isThreadCpuTimeSupported()) {
            return -1;
        }
        return threads.getThreadCpuTime(thread.getId());
    }

    /** The worker thread: for tests in this package. */
    Thread thread() {
        return thread;
    }

    /** A snapshot of the counters; any thread. Each value is current, the set is not atomic. */
    public TimerStats stats() {
        return counters.snapshot(requests.size());
    }

    private static String lifecycleName(int state) {
        switch (state) {
            case NEW: return "new";
            case RUNNING: return "running";
            case CLOSING: return "closing";
            default: return "closed";
        }
    }

    @Override
    public String toString() {
        return "TimerWorker[" + threadName + ", " + lifecycleName(lifecycle) + "]";
    }

    /**
     * Checks a tick for {@link Builder#tick}: the one home of that rule, for callers that validate
     * before they build.
     *
     * @return the tick in nanoseconds
     * @throws IllegalArgumentException if not in [1 ns, {@link TimingWheel#MAX_TICK_NANOS}]
     */
    public static long checkTick(Duration tick) {
        Objects.requireNonNull(tick, "tick");
        long nanos = Builder.saturatedNanos(tick);
        if (nanos < 1 || nanos > TimingWheel.MAX_TICK_NANOS) {
            throw new IllegalArgumentException("tick must be in [1ns, " + TimingWheel.MAX_TICK_NANOS + "ns]: " + tick);
        }
        return nanos;
    }

    /**
     * Checks a worker thread name for {@link Builder#threadName}.
     *
     * @throws IllegalArgumentException if blank
     */
    public static String checkThreadName(String name) {
        Objects.requireNonNull(name, "threadName");
        if (name.isBlank()) {
            throw new IllegalArgumentException("threadName must not be blank");
        }
        return name;
    }

    /**
     * Configures a {@link TimerWorker}. Each setter validates its value and names it in the
     * exception if it is wrong.
     *
     * @param <E> the entry type
     */
    public static final class Builder<E extends TimerEntry> {
        private final ExpiryHandler<? super E> handler;
        private Ticker ticker = Ticker.system();
        private long tickNanos = TimingWheel.DEFAULT_TICK_NANOS;
        private int levels = TimingWheel.DEFAULT_LEVELS;
        private int maxExpirationsPerCycle = 65_536;
        private int maxRequestsPerCycle = 65_536;
        private int queueChunkSize = 4096;
        private String threadName = "heartbeat-timer";

        private Builder(ExpiryHandler<? super E> handler) {
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /** The time source; {@link Ticker#system()} by default. A started worker assumes it moves with real time. */
        public Builder<E> ticker(Ticker ticker) {
            this.ticker = Objects.requireNonNull(ticker, "ticker");
            return this;
        }

        /**
         * The wheel's tick, rounded up to a power of two nanoseconds; 2^20 ns (1.05 ms) by default.
         *
         * @throws IllegalArgumentException if not in [1 ns, 2^30 ns]
         */
        public Builder<E> tick(Duration tick) {
            this.tickNanos = checkTick(tick);
            return this;
        }

        /**
         * The wheel's number of levels of 64 slots; 5 by default.
         *
         * @throws IllegalArgumentException if not in [1, {@link TimingWheel#maxLevels(long)}] for the tick
         */
        public Builder<E> levels(int levels) {
            TimingWheel.checkLevels(tickNanos, levels);
            this.levels = levels;
            return this;
        }

        /**
         * At most this many expirations per cycle; the rest run in the next cycle, without sleeping
         * in between. 65,536 by default.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder<E> maxExpirationsPerCycle(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("maxExpirationsPerCycle must be positive: " + max);
            }
            this.maxExpirationsPerCycle = max;
            return this;
        }

        /**
         * At most this many requests applied per cycle; 65,536 by default.
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder<E> maxRequestsPerCycle(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("maxRequestsPerCycle must be positive: " + max);
            }
            this.maxRequestsPerCycle = max;
            return this;
        }

        /**
         * The request queue's chunk size; the queue grows and shrinks by chunks. 4096 by default.
         *
         * @throws IllegalArgumentException if not a power of two of at least 2
         */
        public Builder<E> queueChunkSize(int size) {
            if (size < 2 || Integer.bitCount(size) != 1) {
                throw new IllegalArgumentException("queueChunkSize must be a power of two >= 2: " + size);
            }
            this.queueChunkSize = size;
            return this;
        }

        /** The worker thread's name; "heartbeat-timer" by default. */
        public Builder<E> threadName(String name) {
            this.threadName = checkThreadName(name);
            return this;
        }

        /**
         * Builds the worker, not yet started.
         *
         * @throws IllegalArgumentException if the levels do not fit the tick
         */
        public TimerWorker<E> build() {
            TimingWheel.checkLevels(tickNanos, levels); // again: a later tick may have lowered the maximum
            return new TimerWorker<>(this);
        }

        private static long saturatedNanos(Duration d) {
            try {
                return d.toNanos();
            } catch (ArithmeticException e) {
                return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
            }
        }
    }
}
