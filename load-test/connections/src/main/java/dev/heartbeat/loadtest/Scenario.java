/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.TimingWheel;
import dev.heartbeat.demo.DurationConverter;
import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.JitterMode;
import dev.heartbeat.netty.MqttKeepAlive;
import dev.heartbeat.netty.PingPolicing;

// Over 500 lines (listed in checkstyle.xml): every rule a run is judged by, derived from the shared settings; the
// library's own rules are the library's (LibraryChecks builds its objects from the settings).
/**
 * What every connection of one run does and when the server is due to act: the settings the
 * coordinator and its child processes share (as JSON), with the rules derived from them.
 * Immutable, validated when built; any thread.
 *
 * <h2>When a close is due</h2>
 * A connection's <em>last activity</em> is the client's clock read just <em>before</em> it wrote its
 * latest line or, if it never wrote one, just before it started connecting. The server can only
 * stamp that activity later, so a correct server never acts before {@code last activity + close
 * window}, where the window is the idle timeout (close policy) or the ping interval plus every missed
 * ping's timeout (ping policy: the first PING goes out after the interval, and the close after
 * {@code max-missed-pings} unanswered ones). A close observed before that moment is premature.
 *
 * <p>The protocol ({@code --probe}) changes what is written, not the rules, but for MQTT, whose
 * servers never ping: the clients announce {@code --ping-interval} as their Keep Alive in CONNECT,
 * those that keep alive send PINGREQ that often, and the close window is the server's 1.5 times it.
 *
 * <p>Lateness is measured from a tighter estimate of when the server was due: the same, but from
 * the connect's <em>completion</em> as the client saw it, so that a slow connect (a full accept
 * queue, a cold JIT) is not charged to the idle handling. A close between the two moments is on time
 * with lateness 0. All processes of one machine read the same CLOCK_MONOTONIC through
 * {@link System#nanoTime()}, so these moments compare across the client and server processes.
 */
final class Scenario {

    /** The idle implementations a run can compare; the names of the demo server's {@code --idle-impl}. */
    static final String HEARTBEAT = "heartbeat";
    static final String NETTY = "netty";
    static final String NONE = "none";

    /** What the server does with idle connections. */
    enum Policy {
        /** Close after the idle timeout without input. */
        CLOSE,
        /** PING after the ping interval without input; close after too many unanswered. */
        PING;

        @Override
        public String toString() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Heartbeat's default wheel tick: the library's, 2^20 ns. */
    static final long DEFAULT_TICK_NANOS = TimingWheel.DEFAULT_TICK_NANOS;

    private static final long MIN_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    /**
     * The shortest {@code --max-line}: the longest line a client sends, but for an over-long one on
     * purpose, is a number of up to 19 digits.
     */
    static final int MIN_MAX_LINE = 20;
    /** The most PING lines a ping-flooding connection may send per 1 ms tick. */
    static final int MAX_FLOOD_LINES = 1000;
    /**
     * How long before its earliest legitimate close a half-open connection reads again: a close seen at
     * that moment came before it, so it is judged premature; later closes are seen as they come.
     */
    static final long HALF_OPEN_LOOK_AHEAD_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /**
     * Too-early peer pings the servers forgive before the next one closes ({@code --peer-ping-max-strikes}):
     * gRPC's, the library's default.
     */
    static final int PEER_PING_MAX_STRIKES = PingPolicing.DEFAULT_MAX_STRIKES;
    /**
     * The pings of a flooder's burst, all in one write: one more than the servers forgive, and one more
     * again in case a server accepts the first of them (it came its minimum interval after the connect).
     */
    static final int FLOOD_BURST = PEER_PING_MAX_STRIKES + 2;
    /**
     * How late a max-age close may come after the latest moment the jitter allows (the age, the jitter
     * and the grace after the connect): the wheel's tick and coalescing window (under 17 ms), the
     * hand-off to the event loop, the goodbye's write, the client seeing the close, and on the server
     * side an accept that came after the client saw its connect complete. 1 s, as {@link #MIN_GRACE_NANOS}
     * leaves half of it for a loaded machine.
     */
    static final long AGE_LATENESS_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** The delivery delay a storm's client-side count allows for: see {@link #clientSeenActionsPerSecondBound}. */
    static final long STORM_DELIVERY_SKEW_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** {@code --max-age-jitter} when not given: gRPC's 0.1 doubled, so the spread shows in short runs. */
    static final double DEFAULT_AGE_JITTER = 0.2;
    /** {@code --max-age} when not given is the run window over this: each aged connection ages out about 3 times. */
    static final int DEFAULT_AGES_PER_WINDOW = 4;
    /** {@code --max-age-grace} when not given is the age over this. */
    static final int DEFAULT_GRACE_DIVISOR = 10;
    /**
     * Storm: the slack above the budget's bound on the last close's lateness (dispatch, the close window's
     * coalescing, a loaded 2-core machine).
     */
    static final long STORM_LATENESS_SLACK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * How many reads a {@link Role#SLOWREADER} connection makes per {@link #writeStallNanos}: six. Each read
     * takes one of its small receive windows (about 5.5 KB: 4 segments of its 1,400-byte MSS). Without
     * {@code TCP_NOTSENT_LOWAT} on the server's sockets (the demo server sets it with a write stall, on epoll),
     * Linux wakes the server's writer only once about a third of its autotuned send buffer is free, so bytes left
     * its outbound buffer, which the guard watches, too seldom: every slowreader was closed for WRITE_STALL
     * (StalledTcpTest). With it (16 KiB), a write fills the socket to 16 KiB unsent or a little more, and Linux
     * wakes the writer only below half of that (8 KiB): two of these reads per wake-up, so the outbound buffer
     * moves every second read. At three reads per stall that was two thirds of the stall, and a client loop late
     * by a third of a read (the connect phase of issue 26's 2,000-connection run) got slowreaders closed; at six
     * it is a third, and a close needs the reader's own reads to show the stall ({@link Verdict#READS_STALLED}).
     */
    static final int SLOW_READS_PER_STALL = 6;
    /**
     * The demo server's {@code TCP_NOTSENT_LOWAT} with a write stall ({@code DemoServer.NOTSENT_LOWAT_BYTES}, epoll),
     * and what a {@link Role#SLOWREADER} must read in every write stall to be sure to move the server's outbound
     * buffer: after a write up to this and a segment or two wait unsent in the server's socket, Linux wakes the
     * writer only once fewer than half of this do, and one receive window of what the reader reads was on its
     * way already. A slowreader closed after it read fewer bytes than this in a write stall ({@link
     * Verdict#READS_STALLED}) left the outbound buffer unmoved that long, as far as it can tell.
     */
    static final long SERVER_NOTSENT_LOWAT_BYTES = 16 * 1024;

    final int connections;
    final Mix mix;
    final Policy policy;
    final long idleTimeoutNanos;
    final long pingIntervalNanos;
    final long pingTimeoutNanos;
    final int maxMissedPings;
    /** Between two lines of one active connection. */
    final long activePeriodNanos;
    /** The measured run, from the moment every connection is up. */
    final long durationNanos;
    final long seed;
    /** Heartbeat's wheel tick as the servers were given it, or 0 for the default. */
    final long tickNanos;
    /** Where Heartbeat's worker runs its cycles in the servers. */
    final ServerConfig.WorkerHost workerHost;
    /** Whether Heartbeat's servers hand pings to their event loops lazily (the demo server's --hand-offs). */
    final boolean lazyHandOffs;
    /** The period of the servers' event-loop lag probes (the demo server's --loop-lag), or 0 for none. */
    final long loopLagNanos;
    /** The servers' {@code --max-line}: longer lines close the connection. */
    final int maxLine;
    /** PING lines a {@link Role#PINGFLOOD} connection sends every millisecond. */
    final int floodLines;
    /**
     * Soak: connections the clients close and reopen per second in the run window, over all processes
     * and roles (0: none).
     */
    final double churnPerSecond;
    /** The protocol the clients speak and the servers serve ({@code --probe}). */
    final ServerConfig.Protocol protocol;
    /**
     * The servers' maximum connection age ({@code --max-age}), its jitter, jitter mode and grace: 0 unless
     * the mix has {@link Role#AGED} connections (the servers age every connection then).
     */
    final long maxAgeNanos;
    final double maxAgeJitter;
    final JitterMode maxAgeJitterMode;
    final long maxAgeGraceNanos;
    /** Storm ({@code --storm}): every connection silent, all opened as fast as the clients can. */
    final boolean storm;
    /** The servers' action budget over all of them, actions a second ({@code --action-budget}); 0: none. */
    final int actionBudget;
    /** The Heartbeat servers' {@code --write-stall} as given ({@code --write-stall}), or 0: derived. */
    final long givenWriteStallNanos;
    /** {@code --drain}: the window of the servers' drain late in the run, or 0: no drain. */
    final long drainNanos;

    private Scenario(Builder b) {
        this.connections = b.connections;
        this.mix = b.mix;
        this.policy = b.policy;
        this.idleTimeoutNanos = b.idleTimeoutNanos;
        this.pingIntervalNanos = b.pingIntervalNanos;
        this.pingTimeoutNanos = b.pingTimeoutNanos;
        this.maxMissedPings = b.maxMissedPings;
        this.activePeriodNanos = b.activePeriodNanos;
        this.durationNanos = b.durationNanos;
        this.seed = b.seed;
        this.tickNanos = b.tickNanos;
        this.workerHost = b.workerHost;
        this.lazyHandOffs = b.lazyHandOffs;
        this.loopLagNanos = b.loopLagNanos;
        this.maxLine = b.maxLine;
        this.floodLines = b.floodLines;
        this.churnPerSecond = b.churnPerSecond;
        this.protocol = b.protocol;
        this.maxAgeNanos = b.maxAgeNanos;
        this.maxAgeJitter = b.maxAgeJitter;
        this.maxAgeJitterMode = b.maxAgeJitterMode;
        this.maxAgeGraceNanos = b.maxAgeGraceNanos;
        this.storm = b.storm;
        this.actionBudget = b.actionBudget;
        this.givenWriteStallNanos = b.writeStallNanos;
        this.drainNanos = b.drainNanos;
    }

    static Builder builder() {
        return new Builder();
    }

    /** How long after a connection's last activity a correct server may act on it, at the earliest. */
    long closeWindowNanos() {
        if (protocol == ServerConfig.Protocol.MQTT) {
            // MqttKeepAlive's rounding: up to the nanosecond
            return (long) Math.ceil(mqttKeepAliveSeconds() * MqttKeepAlive.DEFAULT_MULTIPLIER * 1e9);
        }
        return policy == Policy.CLOSE ? idleTimeoutNanos : pingIntervalNanos + maxMissedPings * pingTimeoutNanos;
    }

    /** MQTT: the Keep Alive the clients announce in CONNECT, {@code --ping-interval} in whole seconds. */
    int mqttKeepAliveSeconds() {
        return (int) (pingIntervalNanos / 1_000_000_000L);
    }

    /**
     * Why the server closes a connection that went silent: what it counts the close as, and what its
     * goodbye names (MQTT has no server goodbye: the clients get none, see {@link #expectedGoodbye}).
     */
    CloseReason idleCloseReason() {
        return policy == Policy.PING && protocol.pings() ? CloseReason.PING_TIMEOUT : CloseReason.READER_IDLE;
    }

    /** The reason the server's goodbye names before an idle close, or null if the protocol has no goodbye. */
    CloseReason expectedGoodbye() {
        return expectedGoodbye(Role.SILENT);
    }

    /**
     * Why the servers close a connection of this role: {@code PING_ABUSE} for flooders, {@code MAX_AGE} for
     * aged ones, else for idleness.
     */
    CloseReason closeReason(Role role) {
        return role == Role.FLOODER ? CloseReason.PING_ABUSE : role == Role.AGED ? CloseReason.MAX_AGE
                : idleCloseReason();
    }

    /**
     * The reason the server's goodbye names before it closes a connection of this role, or null if the
     * protocol has no goodbye (MQTT).
     */
    CloseReason expectedGoodbye(Role role) {
        return protocol == ServerConfig.Protocol.MQTT ? null : closeReason(role);
    }

    /**
     * Whether a connection of this role sends the protocol's keep-alive every
     * {@link #keepAlivePeriodNanos} while alive: dying ones with the close policy, and with MQTT the
     * ones that keep alive by PINGREQ (pong, dying).
     */
    boolean sendsKeepAlives(Role role) {
        if (protocol == ServerConfig.Protocol.MQTT) {
            return role == Role.PONG || role == Role.DYING || role == Role.AGED;
        }
        return (role == Role.DYING || role == Role.AGED) && policy == Policy.CLOSE;
    }

    /** Whether the servers age connections ({@code --max-age}): when the mix has {@link Role#AGED} ones. */
    boolean agesConnections() {
        return maxAgeNanos > 0;
    }

    /**
     * The shortest age the jitter mode allows: {@code age x (1 - jitter)} for symmetric and down-only,
     * the age itself for up-only (the library's {@code JitterMode}).
     */
    long minAgeNanos() {
        return maxAgeJitterMode == JitterMode.UP_ONLY ? maxAgeNanos : (long) (maxAgeNanos * (1 - maxAgeJitter));
    }

    /** The longest age the jitter mode allows: {@code age x (1 + jitter)}, the age itself for down-only. */
    long maxDrawnAgeNanos() {
        return maxAgeJitterMode == JitterMode.DOWN_ONLY ? maxAgeNanos
                : (long) Math.ceil(maxAgeNanos * (1 + maxAgeJitter));
    }

    /**
     * The servers' action budget of each of {@code servers} processes: the total divided among them,
     * rounded down; 0 without a budget.
     */
    int actionBudgetPerServer(int servers) {
        return actionBudget / servers;
    }

    /**
     * The most actions the servers' buckets can hand over in one second aligned to a whole second: per
     * server its rate, plus what the bucket held when the second began (its capacity, a hundredth of the
     * rate and at least 1, as the library's {@code ActionBudget} fills it).
     */
    long actionsPerSecondBound(int servers) {
        return servers * actionsPerSecondBoundPerServer(servers);
    }

    /** {@link #actionsPerSecondBound} of one server: what its own count of its busiest second may reach. */
    long actionsPerSecondBoundPerServer(int servers) {
        long perServer = actionBudgetPerServer(servers);
        return perServer + Math.max(1, perServer / 100);
    }

    /**
     * How far the clients' count of a whole second may exceed {@link #actionsPerSecondBound}: a close
     * the server hands over at the end of one second is seen in the next after its delivery (the loops'
     * queues, the peer's read), so {@link #STORM_DELIVERY_SKEW_NANOS} of the budget's rate may move across
     * a boundary. The servers' own counts ({@code heartbeat_actions_busiest_second}) get no allowance.
     */
    long clientSeenActionsPerSecondBound(int servers) {
        long allowed = actionsPerSecondBound(servers);
        return allowed + (long) Math.ceil(actionBudget * (STORM_DELIVERY_SKEW_NANOS / 1e9));
    }

    /**
     * Storm: the actions the servers hand over for one silent connection: its close, and with the ping
     * policy first the pings it does not answer.
     */
    int actionsPerSilentConnection() {
        return serverPolicy() == ServerConfig.Policy.PING ? 1 + maxMissedPings : 1;
    }

    /**
     * Storm with a budget: how late the last close may come, by design, with {@code servers} processes
     * each holding its share of the connections, all due at once: every action of every connection of a
     * server waits its turn at the server's rate ({@link #actionsPerSilentConnection} x connections /
     * budget), plus {@link #STORM_LATENESS_SLACK_NANOS}. Without a budget: -1 (no bound of its own).
     */
    long stormLatenessBoundNanos(int servers) {
        int perServer = actionBudgetPerServer(servers);
        if (perServer <= 0) {
            return -1;
        }
        long connectionsPerServer = ((long) connections + servers - 1) / servers;
        return (long) Math.ceil((double) actionsPerSilentConnection() * connectionsPerServer / perServer * 1e9)
                + STORM_LATENESS_SLACK_NANOS;
    }

    /** Whether the servers police their peers' pings ({@code --police-pings}): when the mix has flooders. */
    boolean policesPings() {
        return mix.percent(Role.FLOODER) > 0;
    }

    /**
     * The servers' shortest accepted gap between two peer pings ({@code --peer-ping-min-interval}): a
     * sixth of the quiet limit. That is at most half the period of the protocol pings the other roles
     * send as keep-alives (MQTT's PINGREQ every Keep Alive, the ping interval; with the close policy
     * HTTP/2 PINGs every third of the idle timeout), so one of theirs comes early only after a stall of
     * half a period, and it takes {@link #PEER_PING_MAX_STRIKES} + 1 such to close one.
     */
    long peerPingMinIntervalNanos() {
        return quietLimitNanos() / 6;
    }

    /**
     * Between two bursts of a {@link Role#FLOODER} (should the first not have closed it): half the quiet
     * limit, so that no idle handling closes it meanwhile.
     */
    long floodPeriodNanos() {
        return quietLimitNanos() / 2;
    }

    /** Whether the mix has {@link Role#STALLED} connections. */
    boolean hasStalled() {
        return mix.percent(Role.STALLED) > 0;
    }

    /**
     * The first role of the mix that backs the server's echoes up ({@link Role#backsUpEchoes}: stalled, then
     * slowreader), or null: with one, Heartbeat servers get {@code --write-stall} and the run needs sockets.
     */
    Role echoBackupRole() {
        for (Role r : Role.values()) {
            if (r.backsUpEchoes() && mix.percent(r) > 0) {
                return r;
            }
        }
        return null;
    }

    /** Whether Heartbeat servers get {@code --write-stall}: the mix has stalled or slowreader connections. */
    boolean guardsWriteStalls() {
        return echoBackupRole() != null;
    }

    /**
     * Between two reads of a {@link Role#SLOWREADER} connection: {@link #writeStallNanos} over
     * {@link #SLOW_READS_PER_STALL}, so that echoes leave the server's outbound buffer well inside every
     * write-stall timeout (the guard closes after at least the timeout without progress). A period below the
     * client loop's 1 ms tick comes down to a read every tick.
     */
    long slowReadPeriodNanos() {
        return writeStallNanos() / SLOW_READS_PER_STALL;
    }

    /**
     * The Heartbeat servers' {@code --write-stall}: as given, else a quarter of the quiet limit, so that
     * a stalled connection's write-stall close (within 1.25 x this of its last progress) comes long before
     * an idle close could be due (the close window after the server's last read of it).
     */
    long writeStallNanos() {
        return givenWriteStallNanos > 0 ? givenWriteStallNanos : quietLimitNanos() / 4;
    }

    /**
     * How long after its last write a stalled connection must be closed under Heartbeat, at the latest:
     * the close window. The guard closes between 1 and 1.25 x {@link #writeStallNanos} after the server's
     * last progress on its echoes, which the client cannot see: the server may still make some after the
     * client's last write (reading what is queued, its socket send buffer growing); a run on 2 shared cores
     * saw closes up to about 4 x a 100 ms write stall after it. A server that does not close write stalls
     * can only close it for idleness, the close window after its last read of it, so not by then.
     */
    long stallDeadlineNanos() {
        return closeWindowNanos();
    }

    /** The lifecycle settings of one server process of {@code impl} ({@link #lifecycle(String, int)}). */
    ServerConfig.Lifecycle lifecycle(String impl) {
        return lifecycle(impl, 1);
    }

    /**
     * The lifecycle settings of each of {@code servers} Heartbeat processes: the max age when the mix has
     * aged connections, the write stall when it has stalled or slowreader ones, each process's share of the action
     * budget; none for the other impls (they have no such settings).
     */
    ServerConfig.Lifecycle lifecycle(String impl, int servers) {
        ServerConfig.Lifecycle none = ServerConfig.Lifecycle.NONE;
        boolean ages = agesConnections();
        if (!HEARTBEAT.equals(impl) || !(ages || guardsWriteStalls() || actionBudget > 0)) {
            return none;
        }
        return new ServerConfig.Lifecycle(ages ? Duration.ofNanos(maxAgeNanos) : none.maxAge(),
                ages ? maxAgeJitter : none.maxAgeJitter(), ages ? maxAgeJitterMode : none.jitterMode(),
                ages ? Duration.ofNanos(maxAgeGraceNanos) : none.maxAgeGrace(),
                guardsWriteStalls() ? Duration.ofNanos(writeStallNanos()) : none.writeStall(), none.maxUnwritable(),
                actionBudget > 0 ? actionBudgetPerServer(servers) : none.actionBudget());
    }

    /** Whether the harness drains the servers in the run ({@code --drain}). */
    boolean drains() {
        return drainNanos > 0;
    }

    /**
     * When the drain starts, after the run window's start: as late as leaves its whole window and a
     * grace before the end, so that the run measures as usual until then and every drain close is due
     * a grace before the end.
     */
    long drainDelayNanos() {
        return durationNanos - graceNanos() - drainNanos;
    }

    /**
     * How the servers police peer pings, or null if they do not ({@link #policesPings}): permitted
     * without traffic, since the pong and dying connections' keep-alives carry none.
     */
    ServerConfig.PeerPingRules peerPingRules() {
        return !policesPings() ? null : new ServerConfig.PeerPingRules(Duration.ofNanos(peerPingMinIntervalNanos()),
                true, PEER_PING_MAX_STRIKES);
    }

    /** Whether any role sends keep-alives (see {@link #sendsKeepAlives}). */
    boolean hasKeepAlives() {
        return protocol == ServerConfig.Protocol.MQTT || policy == Policy.CLOSE;
    }

    /**
     * How long before the end of the run every close must be due: room for the server's tick, its
     * dispatch and the client seeing the close. A quarter of the close window, at least 2 s.
     */
    long graceNanos() {
        return Math.max(MIN_GRACE_NANOS, closeWindowNanos() / 4);
    }

    /**
     * Dying connections die at a moment drawn in {@code [run start, run start + this)}, so that even
     * the last of them is due to be closed a grace before the run ends.
     */
    long deathSpanNanos() {
        return durationNanos - closeWindowNanos() - graceNanos();
    }

    /**
     * The keep-alive period: a third of the idle timeout (dying connections, close policy), or MQTT's
     * Keep Alive (PINGREQ).
     */
    long keepAlivePeriodNanos() {
        return protocol == ServerConfig.Protocol.MQTT ? pingIntervalNanos : idleTimeoutNanos / 3;
    }

    /** The wheel tick Heartbeat runs with: the one given, else its default. */
    long effectiveTickNanos() {
        return tickNanos > 0 ? tickNanos : DEFAULT_TICK_NANOS;
    }

    /**
     * The longest a connection may stay without input and still be sure not to look idle: the idle
     * timeout (close policy) or the ping interval (ping policy).
     */
    long quietLimitNanos() {
        return policy == Policy.CLOSE ? idleTimeoutNanos : pingIntervalNanos;
    }

    /** Between two bytes of a {@link Role#TRICKLE} connection: three quarters of the quiet limit. */
    long tricklePeriodNanos() {
        return quietLimitNanos() / 4 * 3;
    }

    /**
     * When the {@link Role#LONGLINE} connection with this global index sends its over-long line, after
     * its connect: in the first half of its close window, so before any idle close could be due.
     */
    long longLineDelayNanos(int index) {
        return (long) (deathFraction(index) * (closeWindowNanos() / 2.0));
    }

    /**
     * Whether a correct server closes a connection of this role for idleness before the run ends. The
     * line-limited roles ({@link Role#isLineLimited}) are judged apart: the decoder closes them when
     * they have sent more than {@link #maxLine} bytes without a newline, whatever the idle handling.
     */
    boolean expectsClose(String impl, Role role) {
        if (role == Role.AGED) {
            return false; // its max-age closes are judged apart (ClientLoop), and it reconnects after each
        }
        if (role == Role.STALLED) {
            // Heartbeat: for WRITE_STALL; IdleStateHandler has no write-stall deadline, but a stalled
            // connection is silent from its last write on: closed for idleness
            return !NONE.equals(impl);
        }
        if (role == Role.FLOODER) {
            return true; // the ping policing needs no timer: every idle impl has it
        }
        if (NONE.equals(impl)) {
            return false; // no idle handling at all
        }
        switch (role) {
            case SILENT:
            case DYING:
            case HALFOPEN:
                return true;
            case PONG:
                return policy == Policy.CLOSE; // no pings to answer: as silent as SILENT
            default:
                return false;
        }
    }

    /**
     * Where in {@code [0, 1)} of the death span the dying connection with this global index dies:
     * a fixed function of the seed, so no per-connection state is needed to know it.
     */
    double deathFraction(int index) {
        return (mix64(seed * 0x9E3779B97F4A7C15L + index) >>> 11) * 0x1.0p-53;
    }

    /** A well-mixed 64-bit function (Stafford variant 13, as SplittableRandom uses). */
    static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * The servers' policy: the scenario's, but close for MQTT, whose servers close by the keep-alive
     * rule (with {@link #serverIdleTimeoutNanos} as the deadline for CONNECT).
     */
    ServerConfig.Policy serverPolicy() {
        return protocol == ServerConfig.Protocol.MQTT || policy == Policy.CLOSE ? ServerConfig.Policy.CLOSE
                : ServerConfig.Policy.PING;
    }

    /** The servers' idle timeout: the scenario's, or for MQTT the close window (the deadline for CONNECT). */
    long serverIdleTimeoutNanos() {
        return protocol == ServerConfig.Protocol.MQTT ? closeWindowNanos() : idleTimeoutNanos;
    }

    /** The settings as one Heartbeat server process must be started with, for the demo server's flags. */
    String[] serverFlags() {
        return serverFlags(HEARTBEAT, 1);
    }

    /**
     * The settings as each of {@code servers} processes of {@code impl} must be started with, for the demo
     * server's flags: Heartbeat's also get their {@link #lifecycle} (max age, write stall, each its share of
     * the action budget); the others have no such settings and refuse the flags.
     */
    String[] serverFlags(String impl, int servers) {
        // Only the flags that count for this impl and policy: the demo server refuses the others.
        List<String> flags = new ArrayList<>(List.of("--probe", protocol.toString()));
        if (!NONE.equals(impl)) {
            flags.addAll(List.of("--policy", serverPolicy().toString()));
            if (serverPolicy() == ServerConfig.Policy.CLOSE) {
                flags.addAll(List.of("--idle-timeout", nanos(serverIdleTimeoutNanos())));
            } else {
                flags.addAll(List.of("--ping-interval", nanos(pingIntervalNanos), "--ping-timeout",
                        nanos(pingTimeoutNanos), "--max-missed-pings", Integer.toString(maxMissedPings)));
            }
        }
        if (HEARTBEAT.equals(impl)) {
            flags.addAll(List.of("--worker-host", workerHost.toString(), "--hand-offs",
                    lazyHandOffs ? "lazy" : "eager"));
            if (tickNanos > 0) {
                flags.addAll(List.of("--tick", nanos(tickNanos)));
            }
        }
        flags.addAll(List.of("--max-line", Integer.toString(maxLine)));
        if (loopLagNanos > 0) {
            flags.addAll(List.of("--loop-lag", nanos(loopLagNanos)));
        }
        ServerConfig.Lifecycle life = lifecycle(impl, servers);
        if (!life.maxAge().isZero()) {
            flags.addAll(List.of("--max-age", nanos(life.maxAge().toNanos()), "--max-age-jitter",
                    Double.toString(life.maxAgeJitter()), "--max-age-jitter-mode",
                    life.jitterMode().name().toLowerCase(Locale.ROOT), "--max-age-grace",
                    nanos(life.maxAgeGrace().toNanos())));
        }
        if (life.actionBudget() > 0) {
            flags.addAll(List.of("--action-budget", Integer.toString(life.actionBudget())));
        }
        ServerConfig.PeerPingRules rules = peerPingRules();
        if (rules != null) {
            flags.addAll(List.of("--police-pings", "--peer-ping-min-interval", nanos(rules.minInterval().toNanos()),
                    "--peer-ping-max-strikes", Integer.toString(rules.maxStrikes())));
            if (rules.permitWithoutTraffic()) {
                flags.add("--permit-pings-without-traffic");
            }
        }
        if (!life.writeStall().isZero()) {
            flags.addAll(List.of("--write-stall", nanos(life.writeStall().toNanos())));
        }
        return flags.toArray(new String[0]);
    }

    private static String nanos(long n) {
        return n + "ns";
    }

    /** Human form of a duration in nanoseconds: 30s, 2m, 63.5s, 250ms, 1.25ms (what --duration etc. accept). */
    static String format(long nanos) {
        String whole = DurationConverter.format(Duration.ofNanos(nanos));
        if (whole.endsWith("ns") || whole.endsWith("us") || (whole.endsWith("ms") && nanos >= 1_000_000_000L)) {
            double value = nanos >= 1_000_000_000L ? nanos / 1e9 : nanos / 1e6;
            String unit = nanos >= 1_000_000_000L ? "s" : "ms";
            return BigDecimal.valueOf(value).setScale(3, RoundingMode.HALF_UP)
                    .stripTrailingZeros().toPlainString() + unit;
        }
        return whole;
    }

    /** The settings as JSON carries them: to the child processes, and into report.json. */
    record Settings(int connections, String mix, String policy, long idleTimeoutNs, long pingIntervalNs,
            long pingTimeoutNs, int maxMissedPings, long activePeriodNs, long durationNs, long seed, long tickNs,
            String workerHost, int maxLine, int floodLines, double churnPerSecond, String probe, long maxAgeNs,
            double maxAgeJitter, String maxAgeJitterMode, long maxAgeGraceNs, boolean storm, int actionBudget,
            long writeStallNs, long drainNs, boolean lazyHandOffs, long loopLagNs) {

        /** The scenario again, validated as when it was built. */
        Scenario scenario() {
            return builder().connections(connections).mix(Mix.parse(mix))
                    .policy(Policy.valueOf(policy.toUpperCase(Locale.ROOT))).idleTimeoutNanos(idleTimeoutNs)
                    .pingIntervalNanos(pingIntervalNs).pingTimeoutNanos(pingTimeoutNs).maxMissedPings(maxMissedPings)
                    .activePeriodNanos(activePeriodNs).durationNanos(durationNs).seed(seed).tickNanos(tickNs)
                    .workerHost(ServerConfig.WorkerHost.valueOf(workerHost.toUpperCase(Locale.ROOT))).maxLine(maxLine)
                    .floodLines(floodLines).churnPerSecond(churnPerSecond)
                    .protocol(ServerConfig.Protocol.valueOf(probe.toUpperCase(Locale.ROOT))).maxAgeNanos(maxAgeNs)
                    .maxAgeJitter(maxAgeJitter).maxAgeJitterMode(JitterMode.valueOf(maxAgeJitterMode.toUpperCase(
                            Locale.ROOT))).maxAgeGraceNanos(maxAgeGraceNs).storm(storm).actionBudget(actionBudget)
                    .writeStallNanos(writeStallNs).drainNanos(drainNs).lazyHandOffs(lazyHandOffs)
                    .loopLagNanos(loopLagNs).build();
        }
    }

    Settings settings() {
        return new Settings(connections, mix.toString(), policy.toString(), idleTimeoutNanos, pingIntervalNanos,
                pingTimeoutNanos, maxMissedPings, activePeriodNanos, durationNanos, seed, tickNanos,
                workerHost.toString(), maxLine, floodLines, churnPerSecond, protocol.toString(), maxAgeNanos,
                maxAgeJitter, maxAgeJitterMode.name().toLowerCase(Locale.ROOT), maxAgeGraceNanos, storm, actionBudget,
                givenWriteStallNanos, drainNanos, lazyHandOffs, loopLagNanos);
    }

    /**
     * A description for the report, e.g. "ping every 30s, close after 2 missed pings of 5s (40s)", and
     * how peer pings are policed, if they are.
     */
    String describePolicy() {
        StringBuilder s = new StringBuilder(describeIdlePolicy());
        if (policesPings()) {
            s.append("; peer pings policed: at least ").append(format(peerPingMinIntervalNanos())).append(" apart, ")
                    .append(PEER_PING_MAX_STRIKES).append(" strikes forgiven (flooders send ").append(FLOOD_BURST)
                    .append(" pings at once)");
        }
        if (agesConnections()) {
            s.append("; max age ").append(format(maxAgeNanos)).append(" (").append(format(minAgeNanos()))
                    .append(" to ").append(format(maxDrawnAgeNanos())).append(", jitter ").append(maxAgeJitter)
                    .append(' ').append(maxAgeJitterMode.name().toLowerCase(Locale.ROOT)).append("), grace ")
                    .append(format(maxAgeGraceNanos));
        }
        if (storm) {
            s.append("; storm: every connection silent, opened as fast as possible");
        }
        if (actionBudget > 0) {
            s.append("; action budget ").append(actionBudget).append("/s over the servers");
        }
        if (guardsWriteStalls()) {
            s.append("; heartbeat servers close write stalls of ").append(format(writeStallNanos()));
        }
        if (drains()) {
            s.append("; drained over ").append(format(drainNanos)).append(" from ").append(format(drainDelayNanos()))
                    .append(" into the window");
        }
        return s.toString();
    }

    private String describeIdlePolicy() {
        if (protocol == ServerConfig.Protocol.MQTT) {
            return "mqtt: Keep Alive " + mqttKeepAliveSeconds() + "s in CONNECT, PINGREQ that often, close after "
                    + MqttKeepAlive.DEFAULT_MULTIPLIER + " x that (" + format(closeWindowNanos()) + ") without input";
        }
        String probe = protocol == ServerConfig.Protocol.LINE ? "" : protocol + ": ";
        if (policy == Policy.CLOSE) {
            return probe + "close after " + format(idleTimeoutNanos) + " without input";
        }
        return probe + "PING after " + format(pingIntervalNanos) + " of silence, close after " + maxMissedPings
                + " unanswered (each waited " + format(pingTimeoutNanos) + "): due "
                + format(closeWindowNanos()) + " after the last input";
    }

    /** Builds a {@link Scenario}; {@link #build()} checks the settings against each other. */
    static final class Builder {
        private int connections = 100_000;
        private Mix mix = Mix.parse(Mix.DEFAULT);
        private Policy policy = Policy.PING;
        private long idleTimeoutNanos = TimeUnit.SECONDS.toNanos(40);
        private long pingIntervalNanos = TimeUnit.SECONDS.toNanos(40);
        private long pingTimeoutNanos = TimeUnit.SECONDS.toNanos(5);
        private int maxMissedPings = 2;
        private long activePeriodNanos = TimeUnit.SECONDS.toNanos(5);
        private long durationNanos = TimeUnit.SECONDS.toNanos(100);
        private long seed = 1;
        private long tickNanos;
        private ServerConfig.WorkerHost workerHost = ServerConfig.WorkerHost.LOOP;
        private boolean lazyHandOffs;
        private long loopLagNanos;
        private int maxLine = ServerConfig.DEFAULT_MAX_LINE;
        private int floodLines = 1;
        private double churnPerSecond;
        private ServerConfig.Protocol protocol = ServerConfig.Protocol.LINE;
        private long maxAgeNanos;
        private double maxAgeJitter;
        private boolean maxAgeJitterGiven;
        private JitterMode maxAgeJitterMode = JitterMode.SYMMETRIC;
        private long maxAgeGraceNanos = -1;
        private boolean storm;
        private int actionBudget;
        private long writeStallNanos;
        private long drainNanos;

        Builder connections(int n) {
            this.connections = n;
            return this;
        }

        Builder mix(Mix m) {
            this.mix = m;
            return this;
        }

        Builder policy(Policy p) {
            this.policy = p;
            return this;
        }

        Builder idleTimeoutNanos(long n) {
            this.idleTimeoutNanos = n;
            return this;
        }

        Builder pingIntervalNanos(long n) {
            this.pingIntervalNanos = n;
            return this;
        }

        Builder pingTimeoutNanos(long n) {
            this.pingTimeoutNanos = n;
            return this;
        }

        Builder maxMissedPings(int n) {
            this.maxMissedPings = n;
            return this;
        }

        Builder activePeriodNanos(long n) {
            this.activePeriodNanos = n;
            return this;
        }

        Builder durationNanos(long n) {
            this.durationNanos = n;
            return this;
        }

        Builder seed(long s) {
            this.seed = s;
            return this;
        }

        Builder tickNanos(long n) {
            this.tickNanos = n;
            return this;
        }

        Builder workerHost(ServerConfig.WorkerHost host) {
            this.workerHost = Objects.requireNonNull(host, "workerHost");
            return this;
        }

        Builder lazyHandOffs(boolean lazy) {
            this.lazyHandOffs = lazy;
            return this;
        }

        /** The servers' {@code --loop-lag} period; 0: not measured. */
        Builder loopLagNanos(long n) {
            this.loopLagNanos = n;
            return this;
        }

        Builder maxLine(int bytes) {
            this.maxLine = bytes;
            return this;
        }

        Builder floodLines(int perMillisecond) {
            this.floodLines = perMillisecond;
            return this;
        }

        Builder churnPerSecond(double perSecond) {
            this.churnPerSecond = perSecond;
            return this;
        }

        Builder protocol(ServerConfig.Protocol p) {
            this.protocol = Objects.requireNonNull(p, "protocol");
            return this;
        }

        /** The servers' max age; 0 (the default) is the run window over {@link #DEFAULT_AGES_PER_WINDOW}. */
        Builder maxAgeNanos(long n) {
            this.maxAgeNanos = n;
            return this;
        }

        /** Not called: {@link #DEFAULT_AGE_JITTER}. */
        Builder maxAgeJitter(double fraction) {
            this.maxAgeJitter = fraction;
            this.maxAgeJitterGiven = true;
            return this;
        }

        Builder maxAgeJitterMode(JitterMode mode) {
            this.maxAgeJitterMode = Objects.requireNonNull(mode, "maxAgeJitterMode");
            return this;
        }

        /** Negative (the default): the age over {@link #DEFAULT_GRACE_DIVISOR}. */
        Builder maxAgeGraceNanos(long n) {
            this.maxAgeGraceNanos = n;
            return this;
        }

        Builder storm(boolean on) {
            this.storm = on;
            return this;
        }

        Builder actionBudget(int perSecond) {
            this.actionBudget = perSecond;
            return this;
        }

        /** The Heartbeat servers' {@code --write-stall} when the mix has stalled connections; 0: derived. */
        Builder writeStallNanos(long n) {
            this.writeStallNanos = n;
            return this;
        }

        /** The drain's window; 0: no drain. */
        Builder drainNanos(long n) {
            this.drainNanos = n;
            return this;
        }

        /**
         * The scenario.
         *
         * @throws IllegalArgumentException naming the flag and value that cannot work, alone or with
         *     the others
         */
        Scenario build() {
            if (connections < 1) {
                throw new IllegalArgumentException("--connections must be at least 1: " + connections);
            }
            if (loopLagNanos < 0) {
                throw new IllegalArgumentException("--loop-lag must be a positive duration: " + loopLagNanos + "ns");
            }
            if (activePeriodNanos < TimeUnit.MILLISECONDS.toNanos(1)) {
                throw new IllegalArgumentException("--active-rate must be at most 1000 lines per second: "
                        + perSecond(activePeriodNanos));
            }
            requireProtocolFits();
            resolveAge();
            LibraryChecks.require(new Scenario(this));
            if (maxLine < MIN_MAX_LINE) {
                throw new IllegalArgumentException("--max-line must be at least " + MIN_MAX_LINE
                        + " bytes (the clients' echo lines are numbers of up to 19 digits): " + maxLine);
            }
            if (floodLines < 1 || floodLines > MAX_FLOOD_LINES) {
                throw new IllegalArgumentException("--flood-lines must be between 1 and " + MAX_FLOOD_LINES
                        + " lines per millisecond: " + floodLines);
            }
            if (!(churnPerSecond >= 0) || churnPerSecond > connections) {
                throw new IllegalArgumentException("--churn-rate must be between 0 and --connections (" + connections
                        + ") per second: " + churnPerSecond);
            }
            requireAgeFits();
            requireStormFits();
            Scenario s = new Scenario(this);
            long quietLimit = s.quietLimitNanos();
            if ((mix.percent(Role.ACTIVE) > 0 || mix.percent(Role.JUNK) > 0) && activePeriodNanos >= quietLimit) {
                String limit = policy == Policy.CLOSE ? "--idle-timeout" : "--ping-interval";
                throw new IllegalArgumentException("--active-rate " + perSecond(activePeriodNanos)
                        + " sends a line every " + format(activePeriodNanos) + ", not within " + limit + " "
                        + format(quietLimit) + ": active and junk connections would look idle; give an --active-rate "
                        + "above " + perSecond(quietLimit) + " or a " + limit + " above " + format(activePeriodNanos));
            }
            if (s.deathSpanNanos() < TimeUnit.SECONDS.toNanos(1)) {
                throw new IllegalArgumentException(s.tooShort());
            }
            requireFloodersFit(s);
            requireStallFits(s);
            requireDrainFits(s);
            return s;
        }

        /** A write stall must be closed well before an idle close of the stalled connection could be due. */
        private void requireStallFits(Scenario s) {
            if (writeStallNanos > 0 && !s.guardsWriteStalls()) {
                throw new IllegalArgumentException("--write-stall " + format(writeStallNanos) + " is for the "
                        + Role.STALLED + " and " + Role.SLOWREADER + " roles: give --mix with " + Role.STALLED
                        + "=N or " + Role.SLOWREADER + "=N, or no --write-stall");
            }
            if (s.guardsWriteStalls() && s.writeStallNanos() > s.closeWindowNanos() / 3) {
                throw new IllegalArgumentException("--write-stall " + format(s.writeStallNanos()) + ": a stalled "
                        + "connection must be closed for WRITE_STALL well before an idle close of it could be due (the "
                        + "close window, " + format(s.closeWindowNanos()) + "): give a --write-stall of at most a "
                        + "third of it, " + format(s.closeWindowNanos() / 3));
            }
        }

        /** The drain's window must fit in the run window, a second in and a grace before the end. */
        private void requireDrainFits(Scenario s) {
            if (drainNanos == 0) {
                return;
            }
            long second = TimeUnit.SECONDS.toNanos(1);
            if (drainNanos < second) {
                throw new IllegalArgumentException("--drain must be at least 1s (its closes are counted per second): "
                        + format(drainNanos));
            }
            if (s.drainDelayNanos() < second) {
                throw new IllegalArgumentException("--drain " + format(drainNanos) + " does not fit in --duration "
                        + format(durationNanos) + ": the drain starts 1s into the run window at the earliest and "
                        + "its window must end " + format(s.graceNanos()) + " (the grace) before the run does; give "
                        + "--drain " + format(durationNanos - s.graceNanos() - second) + " or less, or --duration "
                        + format(drainNanos + s.graceNanos() + second) + " or more");
            }
            if (churnPerSecond > 0) {
                throw new IllegalArgumentException("--drain with --churn-rate " + churnPerSecond + ": connections "
                        + "opened during a drain are not drained; give one or the other");
            }
        }

        /** Flooders: a ping flood next to them would be policed too, and the servers' interval must be 1ms. */
        private void requireFloodersFit(Scenario s) {
            if (!s.policesPings()) {
                return;
            }
            if (mix.percent(Role.PINGFLOOD) > 0) {
                throw new IllegalArgumentException("--mix " + Role.PINGFLOOD + "=" + mix.percent(Role.PINGFLOOD)
                        + " with " + Role.FLOODER + "=" + mix.percent(Role.FLOODER) + ": with flooders the servers "
                        + "police peer pings, and a ping flood is what they close (it must stay open); give one "
                        + "or the other");
            }
            if (s.peerPingMinIntervalNanos() < TimeUnit.MILLISECONDS.toNanos(1)) {
                String limit = policy == Policy.CLOSE ? "--idle-timeout" : "--ping-interval";
                throw new IllegalArgumentException("--mix " + Role.FLOODER + "=" + mix.percent(Role.FLOODER)
                        + ": the servers' minimum interval between peer pings is a sixth of " + limit + " "
                        + format(s.quietLimitNanos()) + ", and at least 1ms; give a " + limit + " of at least 6ms");
            }
        }

        /**
         * The max-age settings: only with aged connections in the mix (else none), and the defaults filled
         * in. The library judges their values ({@link LibraryChecks}), {@link #requireAgeFits} the run.
         */
        private void resolveAge() {
            if (mix.percent(Role.AGED) == 0) {
                if (maxAgeNanos != 0 || (maxAgeJitterGiven && maxAgeJitter != 0) || maxAgeGraceNanos > 0) {
                    throw new IllegalArgumentException("--max-age, --max-age-jitter and --max-age-grace are for a mix "
                            + "with aged connections: give e.g. --mix " + Mix.DEFAULT.replace("pong=50", "pong=40")
                            + ",aged=10");
                }
                maxAgeJitter = 0;
                maxAgeGraceNanos = 0;
                return;
            }
            if (maxAgeNanos == 0) {
                maxAgeNanos = durationNanos / DEFAULT_AGES_PER_WINDOW / 1_000_000 * 1_000_000;
            }
            if (!maxAgeJitterGiven) {
                maxAgeJitter = DEFAULT_AGE_JITTER;
            }
            if (maxAgeGraceNanos < 0) {
                maxAgeGraceNanos = maxAgeNanos / DEFAULT_GRACE_DIVISOR / 1_000_000 * 1_000_000;
            }
        }

        /**
         * With aged connections in the mix, each must age out at least twice in the run window (its longest
         * age and grace at most half of it); and no role whose close the ageing would hide: half-open
         * connections read nothing until their idle close is near, and MQTT has no goodbye to tell a max-age
         * close of a silent or dying connection from an idle one.
         */
        private void requireAgeFits() {
            if (mix.percent(Role.AGED) == 0) {
                return;
            }
            Scenario probe = new Scenario(this);
            long longest = probe.maxDrawnAgeNanos() + maxAgeGraceNanos;
            if (2 * longest > durationNanos) {
                throw new IllegalArgumentException("--max-age " + format(maxAgeNanos) + " (up to "
                        + format(probe.maxDrawnAgeNanos()) + " with --max-age-jitter " + maxAgeJitter + " "
                        + maxAgeJitterMode.name().toLowerCase(Locale.ROOT) + ", then --max-age-grace "
                        + format(maxAgeGraceNanos) + ") does not let an aged connection age out twice in --duration "
                        + format(durationNanos) + ": give --duration " + format(2 * longest) + " or more, or a "
                        + "shorter --max-age");
            }
            if (mix.percent(Role.HALFOPEN) > 0) {
                throw new IllegalArgumentException("--mix " + Role.HALFOPEN + "=" + mix.percent(Role.HALFOPEN)
                        + " with " + Role.AGED + "=" + mix.percent(Role.AGED) + ": the servers age every connection, "
                        + "and a half-open one reads nothing until its idle close is near, so when its max-age close "
                        + "came cannot be judged; give one or the other");
            }
            if (protocol == ServerConfig.Protocol.MQTT) {
                for (Role r : new Role[] {Role.SILENT, Role.DYING}) {
                    if (mix.percent(r) > 0) {
                        throw new IllegalArgumentException("--probe mqtt with --mix " + Role.AGED + "="
                                + mix.percent(Role.AGED) + " and " + r + "=" + mix.percent(r) + ": the servers age "
                                + "every connection and MQTT 3.1.1 has no goodbye, so a max-age close of a " + r
                                + " connection cannot be told from its idle close; give a mix of active, pong, aged "
                                + "and flooder");
                    }
                }
            }
        }

        /** Storm: every connection silent. */
        private void requireStormFits() {
            if (storm && mix.percent(Role.SILENT) != 100) {
                throw new IllegalArgumentException("--storm: every connection is silent, not --mix " + mix);
            }
        }

        /** The protocol against the roles and the policy. */
        private void requireProtocolFits() {
            if (protocol != ServerConfig.Protocol.LINE) {
                for (Role r : Role.values()) {
                    if (r.speaksLinesOnly() && mix.percent(r) > 0) {
                        throw new IllegalArgumentException("--mix " + r + "=" + mix.percent(r) + ": the edge role " + r
                                + " speaks the line protocol (raw bytes and lines), not --probe " + protocol
                                + "; give --probe line, or a mix of silent, active, pong and dying");
                    }
                }
            }
            if (protocol != ServerConfig.Protocol.MQTT) {
                return;
            }
            if (policy != Policy.PING) {
                throw new IllegalArgumentException("--probe mqtt keeps connections alive by the clients' PINGREQ "
                        + "(every --ping-interval, their Keep Alive) and the server closes after 1.5 x that: give "
                        + "--policy ping, not --policy " + policy);
            }
            if (pingIntervalNanos < 1_000_000_000L || pingIntervalNanos % 1_000_000_000L != 0
                    || pingIntervalNanos > 0xFFFFL * 1_000_000_000L) {
                throw new IllegalArgumentException("--probe mqtt: --ping-interval is the Keep Alive the clients "
                        + "announce in CONNECT, whole seconds from 1s to 65535s: " + format(pingIntervalNanos));
            }
        }

        private static String perSecond(long periodNanos) {
            return new BigDecimal(1e9 / periodNanos).round(new MathContext(3)).stripTrailingZeros().toPlainString()
                    + "/s";
        }
    }

    /**
     * Why the run window is too short, and the two ways out: a longer {@code --duration}, or a close
     * window that fits this one, with flags that give it. The rule: the last dying connection dies 1 s
     * into the window at the earliest, and its close must be due a grace before the end.
     */
    private String tooShort() {
        long second = TimeUnit.SECONDS.toNanos(1);
        long min = closeWindowNanos() + graceNanos() + second;
        // the largest window w with w + max(2 s, w / 4) + 1 s <= duration
        long fits = Math.max(0, Math.min(durationNanos - MIN_GRACE_NANOS - second, (durationNanos - second) * 4 / 5));
        boolean mqtt = protocol == ServerConfig.Protocol.MQTT;
        String window = mqtt ? "--probe mqtt: 1.5 x --ping-interval " + format(pingIntervalNanos) + " = "
                + format(closeWindowNanos())
                : policy == Policy.CLOSE ? "--policy close: --idle-timeout " + format(idleTimeoutNanos)
                : "--policy ping: --ping-interval " + format(pingIntervalNanos) + " + --max-missed-pings "
                        + maxMissedPings + " x --ping-timeout " + format(pingTimeoutNanos) + " = "
                        + format(closeWindowNanos());
        String way = "--duration " + format(durationNanos) + " is too short: every close is due up to the close "
                + "window (" + window + ") after a connection's last input, and must be due " + format(graceNanos())
                + " (a quarter of the window, at least 2s) before the end, with 1s left for the dying connections "
                + "to die in; give --duration " + format(min) + " or more";
        if (fits < TimeUnit.MILLISECONDS.toNanos(3)) {
            return way;
        }
        long ms = TimeUnit.MILLISECONDS.toNanos(1);
        String example;
        if (mqtt) {
            long keepAlive = (long) (fits / MqttKeepAlive.DEFAULT_MULTIPLIER) / second;
            if (keepAlive < 1) {
                return way;
            }
            example = "--ping-interval " + keepAlive + "s";
        } else if (policy == Policy.CLOSE) {
            example = "--idle-timeout " + format(fits / ms * ms);
        } else {
            // a ping timeout t and an interval of 1.5 t: the window is (max-missed-pings + 1.5) t
            long t = (long) (fits / (maxMissedPings + 1.5));
            long unit = t >= TimeUnit.SECONDS.toNanos(2) ? TimeUnit.SECONDS.toNanos(1) : ms;
            t = t / unit * unit;
            example = "--ping-interval " + format(t * 3 / 2) + " --ping-timeout " + format(t);
        }
        return way + ", or a close window of at most " + format(fits) + " for this duration, e.g. " + example;
    }
}
