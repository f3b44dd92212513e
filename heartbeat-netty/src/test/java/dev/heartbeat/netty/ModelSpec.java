/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

/**
 * One configuration of the interaction model ({@link InteractionModelTest}): the settings drawn at
 * random, the {@link HeartbeatConfig} built from them with the public API only, and what the model
 * needs to know of them. Immutable once built.
 */
final class ModelSpec {

    static final long MS = 1_000_000L;

    /** How the configuration's close veto answers (see {@link HeartbeatConfig.Builder#beforeClose}). */
    enum Veto {
        NONE,
        /** Always {@link CloseDecision#PROCEED}. */
        PROCEED,
        /** Always {@link CloseDecision#CLOSE_NOW}. */
        CLOSE_NOW,
        /** {@code extend(d)} while the channel's model flag is set, else PROCEED. */
        EXTEND_WHILE_FLAG,
        /** {@code extend(d)} always: only {@code maxCloseHold} ends it. */
        HOLD_ALWAYS,
        /** {@code holdWhile(flag)}: idle closes wait (re-asked every second) while the flag is set. */
        HOLD_WHILE
    }

    /** The policy. */
    enum Kind { EVENTS, CLOSE, CLOSE_WITH_EXCEPTION, PING }

    /** Asked by the veto: the test's model answers for the channel. */
    interface Asker {
        CloseDecision ask(ModelSpec spec, io.netty.channel.Channel channel, CloseReason reason);

        boolean busy(ModelSpec spec, io.netty.channel.Channel channel);
    }

    final int id;
    final Kind kind;
    /** Idle timeouts by kind (reader, writer, all), 0 when off; idle policies only. */
    final long[] idle = new long[3];
    final long interval;
    final long pingTimeout;
    final int maxMissed;
    final double jitter;
    final boolean writerMode;
    final long readerClose;
    final AckMode ack;
    final long maxAge;
    final double ageJitter;
    final JitterMode ageMode;
    final long grace;
    final long writeStall;
    final long maxUnwritable;
    final boolean goodbye;
    final Veto veto;
    final long extend;
    final long maxHold;
    final HeartbeatConfig config;
    /** The features this configuration uses, for the coverage report. */
    final TreeSet<String> features = new TreeSet<>();

    private ModelSpec(int id, Random rnd, Asker asker, List<String> refusals) {
        this.id = id;
        kind = Kind.values()[rnd.nextInt(Kind.values().length)];
        boolean guardOnly = kind != Kind.PING && rnd.nextInt(8) == 0;
        HeartbeatConfig.Builder b;
        switch (kind) {
            case EVENTS -> b = HeartbeatConfig.events();
            case CLOSE -> b = HeartbeatConfig.closeWhenIdle();
            case CLOSE_WITH_EXCEPTION -> b = HeartbeatConfig.closeWhenIdle().withTimeoutExceptions();
            default -> b = HeartbeatConfig.ping(LineProbe.INSTANCE);
        }
        features.add(kind.name());
        if (kind != Kind.PING && !guardOnly) {
            int mask = 1 + rnd.nextInt(7);
            String[] names = {"readerIdle", "writerIdle", "allIdle"};
            for (int k = 0; k < 3; k++) {
                if ((mask & 1 << k) != 0) {
                    idle[k] = millis(rnd, 30, 1_500);
                    features.add(names[k]);
                }
            }
            b.readerIdle(Duration.ofNanos(idle[0])).writerIdle(Duration.ofNanos(idle[1]))
                    .allIdle(Duration.ofNanos(idle[2]));
        }
        if (kind == Kind.PING) {
            interval = millis(rnd, 30, 800);
            pingTimeout = rnd.nextBoolean() ? interval : millis(rnd, 20, 800);
            maxMissed = 1 + rnd.nextInt(3);
            jitter = rnd.nextInt(3) == 0 ? rnd.nextDouble() * 0.5 : 0;
            writerMode = rnd.nextInt(3) == 0;
            ack = AckMode.values()[rnd.nextInt(AckMode.values().length)];
            b.interval(Duration.ofNanos(interval)).timeout(Duration.ofNanos(pingTimeout)).maxMissedPings(maxMissed)
                    .jitter(jitter).ackMode(ack);
            features.add("ackMode " + ack);
            if (jitter > 0) {
                features.add("ping jitter");
            }
            if (writerMode) {
                b.whenWriterIdle();
                features.add("whenWriterIdle");
            }
            long rc = 0;
            if (rnd.nextInt(3) == 0) {
                // Mostly beyond the first ping; sometimes between the interval and the jittered interval
                // (item 14: a close before the first ping, which the build check exists to refuse).
                rc = writerMode ? millis(rnd, 30, 2_000)
                        : rnd.nextInt(4) == 0 && jitter > 0.05
                                ? interval + 1 + (long) (rnd.nextDouble() * interval * jitter)
                        : (long) (interval * (1 + jitter)) + millis(rnd, 1, 1_000);
                b.closeWhenReaderIdle(Duration.ofNanos(rc));
                features.add("closeWhenReaderIdle");
            }
            readerClose = rc;
        } else {
            interval = 0;
            pingTimeout = 0;
            maxMissed = 0;
            jitter = 0;
            writerMode = false;
            ack = null;
            readerClose = 0;
        }
        boolean anyGuard = false;
        if (guardOnly || rnd.nextInt(3) == 0) {
            maxAge = millis(rnd, 100, 3_000);
            b.maxAge(Duration.ofNanos(maxAge));
            features.add("maxAge");
            anyGuard = true;
            if (rnd.nextInt(3) == 0) {
                ageJitter = rnd.nextDouble() * 0.5;
                ageMode = JitterMode.values()[rnd.nextInt(JitterMode.values().length)];
                b.maxAgeJitter(ageJitter, ageMode);
                features.add("maxAgeJitter");
            } else {
                ageJitter = 0;
                ageMode = JitterMode.SYMMETRIC;
            }
            grace = rnd.nextInt(3) == 0 ? millis(rnd, 50, 1_000) : 0;
            if (grace > 0) {
                b.maxAgeGrace(Duration.ofNanos(grace));
                features.add("maxAgeGrace");
            }
        } else {
            maxAge = 0;
            ageJitter = 0;
            ageMode = JitterMode.SYMMETRIC;
            grace = 0;
        }
        writeStall = (guardOnly && !anyGuard) || rnd.nextInt(4) == 0 ? millis(rnd, 40, 1_000) : 0;
        if (writeStall > 0) {
            b.writeStall(Duration.ofNanos(writeStall));
            features.add("writeStall");
        }
        maxUnwritable = rnd.nextInt(4) == 0 ? millis(rnd, 40, 1_000) : 0;
        if (maxUnwritable > 0) {
            b.maxUnwritable(Duration.ofNanos(maxUnwritable));
            features.add("maxUnwritable");
        }
        boolean explicitGoodbye = kind != Kind.PING && rnd.nextBoolean();
        if (explicitGoodbye) {
            b.goodbye(LineProbe.INSTANCE);
        }
        goodbye = explicitGoodbye || kind == Kind.PING;
        if (goodbye) {
            features.add("goodbye probe");
        }
        Veto v = rnd.nextInt(2) == 0 ? Veto.NONE : Veto.values()[1 + rnd.nextInt(Veto.values().length - 1)];
        veto = v;
        extend = millis(rnd, 1, 400);
        long hold = millis(rnd, 50, 2_000);
        ModelSpec self = this;
        switch (v) {
            case NONE -> {
            }
            case HOLD_WHILE -> b.holdWhile(ch -> asker.busy(self, ch));
            default -> b.beforeClose((ch, reason) -> asker.ask(self, ch, reason));
        }
        if (v != Veto.NONE) {
            features.add("veto " + v);
            b.maxCloseHold(Duration.ofNanos(hold));
        }
        maxHold = v == Veto.NONE ? 0 : hold;
        // Item 15: maxCloseHold without a veto is a setting that would be ignored: it must be refused.
        boolean holdWithoutVeto = v == Veto.NONE && rnd.nextInt(10) == 0;
        if (holdWithoutVeto) {
            b.maxCloseHold(Duration.ofNanos(hold));
        }
        boolean closesBeforeFirstPing = kind == Kind.PING && !writerMode && readerClose > 0
                && readerClose <= (long) (interval * (1 + jitter));
        HeartbeatConfig built;
        try {
            built = b.build();
        } catch (IllegalStateException refused) {
            built = null;
        }
        if (built != null && holdWithoutVeto) {
            refusals.add("item 15: maxCloseHold without beforeClose was accepted (and is ignored): " + built);
        }
        if (built != null && closesBeforeFirstPing) {
            refusals.add("item 14: closeWhenReaderIdle(" + Duration.ofNanos(readerClose) + ") with interval "
                    + Duration.ofNanos(interval) + " and jitter " + jitter + " was accepted: a silent channel can be "
                    + "closed before its first ping");
        }
        config = holdWithoutVeto || closesBeforeFirstPing ? null : built;
    }

    /**
     * A configuration drawn from {@code rnd}, or null if the draw asked for a combination the builder
     * must refuse (what it did instead, if it accepted it, is added to {@code refusals}).
     */
    static ModelSpec draw(int id, Random rnd, Asker asker, List<String> refusals) {
        ModelSpec s = new ModelSpec(id, rnd, asker, refusals);
        return s.config == null ? null : s;
    }

    private static long millis(Random rnd, int lo, int hi) {
        return (lo + rnd.nextInt(hi - lo + 1)) * MS;
    }

    boolean pings() {
        return kind == Kind.PING;
    }

    boolean closesWhenIdle() {
        return kind == Kind.CLOSE || kind == Kind.CLOSE_WITH_EXCEPTION;
    }

    /** The latest a channel of this configuration reaches its maximum age (jitter drawn at its worst). */
    long ageLatest() {
        return ageMode == JitterMode.DOWN_ONLY ? maxAge : (long) (maxAge * (1 + ageJitter)) + 1;
    }

    /** The soonest a channel of this configuration may reach its maximum age ({@code JitterMode.shortest}). */
    long ageSoonest() {
        return ageMode.shortest(maxAge, ageJitter);
    }

    @Override
    public String toString() {
        return "#" + id + " " + config;
    }

    static List<String> featureNames(List<ModelSpec> specs) {
        List<String> out = new ArrayList<>();
        for (ModelSpec s : specs) {
            out.add(String.join("+", s.features));
        }
        return out;
    }

    /**
     * Whether Heartbeat keeps lifecycle state for this configuration (a max age, write stall, unwritable
     * bound or veto: {@code HeartbeatConfig.hasGuardState}), and with it the channel's activation time.
     */
    boolean keepsGuardState() {
        return maxAge > 0 || writeStall > 0 || maxUnwritable > 0 || veto != Veto.NONE;
    }
}
