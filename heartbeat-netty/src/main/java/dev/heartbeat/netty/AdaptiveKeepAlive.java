/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Finds, per peer, the longest keep-alive interval that its path still carries: for clients behind
 * NATs and mobile networks, which drop a connection idle longer than a timeout nobody publishes
 * (30 s to 30 min in the field). Pinging at a safe short interval wastes battery and radio time;
 * pinging just under the NAT's timeout costs the least. This is the "smart heartbeat" scheme mobile
 * push clients use: start at a safe minimum, lengthen the interval by a step after a run of
 * successes, back off to the last good interval after consecutive failures and settle there, and
 * re-probe rarely in case the path changed; if what worked stops working, start again from the
 * safe minimum. Thread-safe; keeps at most {@code capacity} peers (the
 * least recently used are forgotten); allocates only when it meets a new peer.
 *
 * <p>Wired to Heartbeat's handler, each channel pings at the interval learned for its remote address,
 * reports each of its own keep-alives, and moves to the new interval after each, so a connection that
 * stays up for days learns as well as one that reconnects:
 * <pre>{@code
 * AdaptiveKeepAlive<SocketAddress> tuner = AdaptiveKeepAlive.builder().build();  // for all of a client's channels
 * HeartbeatConfig cfg = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(30))
 *         .whenWriterIdle().adaptiveInterval(tuner).build();
 * ch.pipeline().addLast(http2FrameCodec, monitor.newHandler(cfg), ...);
 * store(tuner.states());  ...  tuner.restore(remote, saved);    // persist what was learned across restarts
 * }</pre>
 *
 * <p>By hand, in a keep-alive loop of one's own, the interval is read again after every result, not
 * once per connection; a keep-alive counts when nothing but the previous keep-alive and its answer
 * crossed the path for the interval before it:
 * <pre>{@code
 * Duration interval = tuner.interval(remote);                   // the ping interval to use now
 * ...                                                           // a keep-alive after an idle gap of interval
 * tuner.succeeded(remote, interval);                            // it was answered: the path carried that gap
 * tuner.failed(remote, interval);                               // no answer, or a reset: the path dropped it
 * interval = tuner.interval(remote);                            // after each: ping at this, on this connection too
 * tuner.tooManyPings(remote);                                   // the server said calm down (GOAWAY too_many_pings)
 * }</pre>
 *
 * <p>A result counts for the interval it names, whatever the current one is: a success at {@code i}
 * proves the path carries idle gaps of {@code i}, so no later decision goes below it until a failure
 * at or below it says the path changed; {@code failuresToSettle} failures in a row at {@code i}
 * prove it does not, so probing never tries {@code i} or longer again until a re-probe.
 */
public final class AdaptiveKeepAlive<K> {

    /** Where a peer's search stands. */
    public enum Phase {
        /** Lengthening the interval after each run of successes. */
        PROBING,
        /** Staying at the longest interval known to work; re-probes after {@code reprobeAfter} successes. */
        SETTLED
    }

    /**
     * What is known of one peer, to read and to restore (e.g. after a restart).
     *
     * @param interval the interval to ping at now
     * @param lastGood the longest interval that succeeded (at least the minimum)
     * @param ceiling the shortest interval that failed {@code failuresToSettle} times in a row, or
     *     {@link Duration#ZERO} if none is known
     * @param floor the shortest interval allowed for this peer: the minimum, or more after
     *     {@link #tooManyPings}
     * @param phase probing or settled
     * @param successes consecutive successes at {@code interval}
     * @param failures consecutive failures
     */
    public record State(Duration interval, Duration lastGood, Duration ceiling, Duration floor, Phase phase,
            int successes, int failures) {

        /** Checks the state is whole. */
        public State {
            Objects.requireNonNull(interval, "interval");
            Objects.requireNonNull(lastGood, "lastGood");
            Objects.requireNonNull(ceiling, "ceiling");
            Objects.requireNonNull(floor, "floor");
            Objects.requireNonNull(phase, "phase");
            if (successes < 0 || failures < 0) {
                throw new IllegalArgumentException("counts cannot be negative: successes " + successes
                        + ", failures " + failures);
            }
        }
    }

    private final long minNanos;
    private final long maxNanos;
    private final long stepNanos;
    private final int successesToGrow;
    private final int failuresToSettle;
    private final int reprobeAfter;
    /** Guarded by itself. Access order: the least recently used peer is forgotten first. */
    private final LinkedHashMap<K, Peer> peers;

    private AdaptiveKeepAlive(Builder b) {
        this.minNanos = b.min.toNanos();
        this.maxNanos = b.max.toNanos();
        this.stepNanos = b.step.toNanos();
        this.successesToGrow = b.successesToGrow;
        this.failuresToSettle = b.failuresToSettle;
        this.reprobeAfter = b.reprobeAfter;
        int capacity = b.capacity;
        this.peers = new LinkedHashMap<>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<K, Peer> eldest) {
                return size() > capacity;
            }
        };
    }

    /** A builder with the defaults: 30 s to 30 min in steps of 30 s; 3 to grow, 2 to settle, 100 to re-probe. */
    public static Builder builder() {
        return new Builder();
    }

    /** The interval to ping {@code peer} at now: the minimum for a peer not seen before. */
    public Duration interval(K peer) {
        synchronized (peers) {
            return Duration.ofNanos(peer(peer).interval);
        }
    }

    /**
     * A keep-alive at {@code interval} was answered after an idle gap that long: the path carries it.
     *
     * @throws IllegalArgumentException if {@code interval} is below {@link HeartbeatConfig#MIN_TIMEOUT}
     *     or above {@link HeartbeatConfig#MAX_TIMEOUT}: no ping has such an interval
     */
    public void succeeded(K peer, Duration interval) {
        long i = inRange("succeeded: interval", interval).toNanos();
        synchronized (peers) {
            peer(peer).succeeded(i);
        }
    }

    /**
     * A keep-alive at {@code interval} went unanswered, or was answered with a reset: the connection
     * died while idle for that long.
     *
     * @throws IllegalArgumentException if {@code interval} is below {@link HeartbeatConfig#MIN_TIMEOUT}
     *     or above {@link HeartbeatConfig#MAX_TIMEOUT}: no ping has such an interval
     */
    public void failed(K peer, Duration interval) {
        long i = inRange("failed: interval", interval).toNanos();
        synchronized (peers) {
            peer(peer).failed(i);
        }
    }

    /**
     * The peer said it is pinged too often (HTTP/2 GOAWAY {@code ENHANCE_YOUR_CALM} with
     * {@code too_many_pings}, see {@link PingPolicing}): doubles the interval, as gRPC clients do, up
     * to the maximum, and never goes below it again for this peer.
     */
    public void tooManyPings(K peer) {
        synchronized (peers) {
            peer(peer).calmDown();
        }
    }

    /** What is known of {@code peer}, if anything. */
    public Optional<State> state(K peer) {
        synchronized (peers) {
            Peer p = peers.get(peer);
            return p == null ? Optional.empty() : Optional.of(p.state());
        }
    }

    /** What is known of every peer kept, least recently used first: a snapshot to persist. */
    public Map<K, State> states() {
        synchronized (peers) {
            Map<K, State> out = new LinkedHashMap<>();
            peers.forEach((k, p) -> out.put(k, p.state()));
            return out;
        }
    }

    /**
     * Restores what was known of {@code peer} (from {@link #states()}), clamped to this tuner's
     * settings where they changed since.
     */
    public void restore(K peer, State state) {
        Objects.requireNonNull(state, "state");
        synchronized (peers) {
            peers.put(Objects.requireNonNull(peer, "peer"), new Peer(state));
        }
    }

    private Peer peer(K key) {
        Peer p = peers.get(Objects.requireNonNull(key, "peer"));
        if (p == null) {
            p = new Peer();
            peers.put(key, p);
        }
        return p;
    }

    /** {@code d}, if between {@link HeartbeatConfig#MIN_TIMEOUT} and {@link HeartbeatConfig#MAX_TIMEOUT}. */
    private static Duration inRange(String name, Duration d) {
        Objects.requireNonNull(d, name);
        if (d.compareTo(HeartbeatConfig.MIN_TIMEOUT) < 0 || d.compareTo(HeartbeatConfig.MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(name + " must be between " + HeartbeatConfig.MIN_TIMEOUT + " and "
                    + HeartbeatConfig.MAX_TIMEOUT + ": " + d);
        }
        return d;
    }

    private long clamp(long nanos, long floor) {
        return Math.max(floor, Math.min(maxNanos, nanos));
    }

    /** One peer's search. Guarded by the tuner's map. */
    private final class Peer {
        long interval;
        long lastGood;
        long ceiling; // 0: none known
        long floor;
        Phase phase;
        int successes;
        int failures;

        Peer() {
            interval = minNanos;
            lastGood = minNanos;
            floor = minNanos;
            phase = Phase.PROBING;
        }

        Peer(State s) {
            floor = clamp(s.floor().toNanos(), minNanos);
            interval = clamp(s.interval().toNanos(), floor);
            lastGood = clamp(s.lastGood().toNanos(), floor);
            ceiling = s.ceiling().isZero() ? 0 : Math.max(s.ceiling().toNanos(), floor);
            phase = s.phase();
            successes = s.successes();
            failures = s.failures();
        }

        void succeeded(long i) {
            failures = 0;
            if (i > lastGood) {
                lastGood = Math.min(i, maxNanos);
            }
            if (i < interval) {
                return; // proves less than the current interval: no step towards the next
            }
            successes++;
            if (phase == Phase.PROBING) {
                if (successes >= successesToGrow) {
                    grow();
                }
            } else if (successes >= reprobeAfter) {
                phase = Phase.PROBING; // the path may carry more now: try again, from what works
                ceiling = 0;
                grow();
            }
        }

        /** One step up from the last good interval, short of a known ceiling; settles when there is no room. */
        private void grow() {
            successes = 0;
            long next = clamp(lastGood + stepNanos, floor);
            if (next <= lastGood || (ceiling != 0 && next >= ceiling)) {
                interval = lastGood;
                phase = Phase.SETTLED;
            } else {
                interval = next;
            }
        }

        void failed(long i) {
            successes = 0;
            if (++failures < failuresToSettle) {
                return; // one loss can be bad luck: try the same interval again
            }
            failures = 0;
            if (i <= lastGood) {
                // What used to work does not any more: the path changed, and what was learned is stale.
                // Start again from the safe floor, below the interval that failed.
                ceiling = i;
                lastGood = floor;
                interval = floor;
                phase = Phase.PROBING;
                return;
            }
            ceiling = ceiling == 0 ? i : Math.min(ceiling, i);
            interval = lastGood;
            phase = Phase.SETTLED;
        }

        void calmDown() {
            floor = clamp(interval > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : interval * 2, floor);
            interval = floor;
            lastGood = Math.max(lastGood, floor);
            if (ceiling != 0 && ceiling <= floor) {
                ceiling = 0;
            }
            phase = Phase.SETTLED;
            successes = 0;
            failures = 0;
        }

        State state() {
            return new State(Duration.ofNanos(interval), Duration.ofNanos(lastGood), Duration.ofNanos(ceiling),
                    Duration.ofNanos(floor), phase, successes, failures);
        }
    }

    /** Configures an {@link AdaptiveKeepAlive}; each setter validates its value. */
    public static final class Builder {
        private Duration min = Duration.ofSeconds(30);
        private Duration max = Duration.ofMinutes(30);
        private Duration step = Duration.ofSeconds(30);
        private int successesToGrow = 3;
        private int failuresToSettle = 2;
        private int reprobeAfter = 100;
        private int capacity = 10_000;

        private Builder() {
        }

        /**
         * The safe interval a new peer starts at, and the shortest ever used (30 s by default).
         *
         * @throws IllegalArgumentException if below {@link HeartbeatConfig#MIN_TIMEOUT} or above the maximum
         *     as set so far (to raise both, set {@link #maxInterval} first)
         */
        public Builder minInterval(Duration interval) {
            Duration d = inRange("minInterval", interval);
            if (d.compareTo(max) > 0) {
                throw new IllegalArgumentException("minInterval " + d + " is longer than maxInterval " + max
                        + ": raise maxInterval first");
            }
            this.min = d;
            return this;
        }

        /**
         * The longest interval ever tried (30 min by default).
         *
         * @throws IllegalArgumentException if below {@link HeartbeatConfig#MIN_TIMEOUT}, above
         *     {@link HeartbeatConfig#MAX_TIMEOUT}, or below the minimum as set so far (to lower both, set
         *     {@link #minInterval} first)
         */
        public Builder maxInterval(Duration interval) {
            Duration d = inRange("maxInterval", interval);
            if (d.compareTo(min) < 0) {
                throw new IllegalArgumentException("maxInterval " + d + " is shorter than minInterval " + min
                        + ": lower minInterval first");
            }
            this.max = d;
            return this;
        }

        /**
         * How much longer each probe tries (30 s by default): also the precision of the result, which
         * settles within one step below the path's timeout.
         *
         * @throws IllegalArgumentException if below {@link HeartbeatConfig#MIN_TIMEOUT}
         */
        public Builder step(Duration step) {
            this.step = inRange("step", step);
            return this;
        }

        /**
         * Successes in a row at an interval before the next is tried (3 by default).
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder successesToGrow(int count) {
            this.successesToGrow = count("successesToGrow", count);
            return this;
        }

        /**
         * Failures in a row before the interval backs off and settles (2 by default).
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder failuresToSettle(int count) {
            this.failuresToSettle = count("failuresToSettle", count);
            return this;
        }

        /**
         * Successes in a row at the settled interval before the search starts again (100 by default).
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder reprobeAfter(int count) {
            this.reprobeAfter = count("reprobeAfter", count);
            return this;
        }

        /**
         * Peers remembered; the least recently used is forgotten beyond it (10,000 by default).
         *
         * @throws IllegalArgumentException if not positive
         */
        public Builder capacity(int peers) {
            this.capacity = count("capacity", peers);
            return this;
        }

        /** A tuner (the setters keep the minimum at or below the maximum). */
        public <K> AdaptiveKeepAlive<K> build() {
            return new AdaptiveKeepAlive<>(this);
        }

        private static int count(String name, int n) {
            if (n < 1) {
                throw new IllegalArgumentException(name + " must be positive: " + n);
            }
            return n;
        }
    }
}
