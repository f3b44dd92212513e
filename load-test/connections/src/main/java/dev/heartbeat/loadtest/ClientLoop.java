/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.heartbeat.demo.ServerConfig;
import dev.heartbeat.netty.CloseReason;
import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import org.HdrHistogram.Histogram;

// Over 500 lines (listed in checkstyle.xml): one event loop's confined state for every client role; splitting it
// would need the roles' state to cross classes.
/**
 * Everything one client event loop keeps about its connections: who they are, when active and junk
 * ones send, dying ones keep alive, trickle ones send their byte and flooders ping ({@link SlotSchedule}s
 * driven by one 1 ms task, which also sends the ping floods and wakes the half-open connections to read
 * again), the verdict on each close ({@link Verdict}), the histograms of close lateness, echo latency,
 * connect time and the flooders' time to their close, and the counts.
 * {@link #finish} judges the connections still open and hands the totals over.
 *
 * <p>Confined to its event loop: every method but the constructor runs there, so its state is plain.
 * The histograms and counts are handed over by {@link #finish}, run on the loop and awaited.
 */
final class ClientLoop {

    /**
     * Echo lines carry their intended send time relative to this origin, so the number is positive
     * whatever {@code nanoTime}'s own origin is. Echoes come back to the process that sent them.
     */
    private static final long ORIGIN = System.nanoTime() - TimeUnit.SECONDS.toNanos(1);

    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final int MAX_SAMPLES = 10;

    private final EventLoop executor;
    private final Scenario scenario;
    private final RunWindow window;
    private final ClientProgress progress;
    private final List<ClientConnection> connections = new ArrayList<>();
    private final SlotSchedule echoes;
    private final SlotSchedule keepAlives; // those that send keep-alives (Scenario.sendsKeepAlives); else null
    private final SlotSchedule.Action sendEcho = this::sendEcho;
    private final SlotSchedule.Action keepAlive = this::keepAlive;
    private final SlotSchedule trickles;
    private final SlotSchedule.Action trickle = this::trickle;
    private final List<ClientConnection> flooders = new ArrayList<>();
    /**
     * Stalled connections still open and not reading, of servers that close write stalls: they read again
     * the close window after their last write.
     */
    private final List<ClientConnection> stalled = new ArrayList<>();
    /** Whether the servers close write stalls: Heartbeat's, given --write-stall for the stalled role. */
    private final boolean stallGuarded;
    private final SlotSchedule peerPings; // the flooders' pings; null unless the servers police pings
    private final SlotSchedule slowReads; // the slowreaders' reads; null without any
    private final SlotSchedule.Action slowRead = this::slowRead;
    private final SlotSchedule.Action peerPing = this::peerPing;
    /** Half-open connections not reading yet, the earliest due first. */
    private final PriorityQueue<ClientConnection> halfOpen =
            new PriorityQueue<>((a, b) -> Long.signum(a.connectStart - b.connectStart));
    private final SplittableRandom random;
    /** Soak: connections to close and reopen per tick, the fraction carried over, where the round-robin is. */
    private double churnPerTick;
    private double churnOwed;
    private int churnCursor;
    private Consumer<ClientConnection> reopener;
    private ScheduledFuture<?> ticker;
    /** When the next tick is due (the fixed rate's own deadlines), 0 before the ticker starts. */
    private long nextTickAt;
    /** How late the latest tick ran: how long what this loop runs had waited for it then. */
    private long behindNanos;
    private boolean finished;

    private final Histogram lateness = Histograms.newMicros();
    private final Histogram echoLatency = Histograms.newMicros();
    private final PerSecondHistograms echoPerSecond = new PerSecondHistograms();
    private final Histogram connectTime = Histograms.newMicros();
    private final Histogram abuseCloseTime = Histograms.newMicros();
    private final Histogram ageAtGoodbye = Histograms.newMicros();
    private final Histogram ageCloseLateness = Histograms.newMicros();
    private final Histogram stallCloseTime = Histograms.newMicros();
    private final ClientResult totals = new ClientResult();

    /** A loop of clients of Heartbeat servers. */
    ClientLoop(EventLoop executor, Scenario scenario, RunWindow window, ClientProgress progress) {
        this(executor, scenario, window, progress, Scenario.HEARTBEAT);
    }

    /** A loop of clients of servers running the idle impl {@code impl}. */
    ClientLoop(EventLoop executor, Scenario scenario, RunWindow window, ClientProgress progress, String impl) {
        this.stallGuarded = Scenario.HEARTBEAT.equals(impl);
        this.executor = executor;
        this.scenario = scenario;
        this.window = window;
        this.progress = progress;
        long start = System.nanoTime();
        this.echoes = new SlotSchedule(scenario.activePeriodNanos, start);
        this.keepAlives = scenario.hasKeepAlives() ? new SlotSchedule(scenario.keepAlivePeriodNanos(), start) : null;
        this.trickles = new SlotSchedule(scenario.tricklePeriodNanos(), start);
        this.peerPings = scenario.policesPings() ? new SlotSchedule(scenario.floodPeriodNanos(), start) : null;
        this.slowReads = scenario.mix.percent(Role.SLOWREADER) > 0
                ? new SlotSchedule(scenario.slowReadPeriodNanos(), start) : null;
        this.random = new SplittableRandom(scenario.seed);
        executor.execute(() -> {
            nextTickAt = System.nanoTime() + TICK_NANOS;
            ticker = executor.scheduleAtFixedRate(this::tick, TICK_NANOS, TICK_NANOS, TimeUnit.NANOSECONDS);
        });
    }

    EventLoop executor() {
        return executor;
    }

    /**
     * Soak: closes {@code perSecond} of this loop's connections a second in the run window, round-robin
     * over every role, and hands each to {@code reopener} to be opened again. Only in the first
     * {@link Scenario#deathSpanNanos} of the window, as dying connections die: a replacement that must be
     * closed is then due a grace before the end. {@code reopener} also opens the connections that replace
     * those the servers closed for their max age ({@link #goodbye}). Before the first tick.
     */
    void churn(double perSecond, Consumer<ClientConnection> reopener) {
        this.churnPerTick = perSecond * TICK_NANOS / 1e9;
        this.reopener = reopener;
    }

    private void tick() {
        if (finished) {
            return;
        }
        long now = System.nanoTime();
        behindNanos = Math.max(0, now - nextTickAt);
        nextTickAt += TICK_NANOS;
        wakeHalfOpen(now);
        wakeStalled(now);
        if (slowReads != null) {
            slowReads.fire(now, slowRead); // after the window too: the servers still guard them until the end
        }
        if (window.isOpen() && now - window.end() >= 0) {
            return; // the run is over: stop sending, wait for finish
        }
        echoes.fire(now, sendEcho);
        if (keepAlives != null) {
            keepAlives.fire(now, keepAlive);
        }
        trickles.fire(now, trickle);
        if (peerPings != null) {
            peerPings.fire(now, peerPing);
        }
        flood();
        if (churnPerTick > 0 && window.contains(now) && now - window.start() < scenario.deathSpanNanos()) {
            churnOwed += churnPerTick;
            for (; churnOwed >= 1; churnOwed--) {
                churnOne();
            }
        }
    }

    /** Closes the next open connection in turn (the client's close, not judged) and has it reopened. */
    private void churnOne() {
        for (int tries = connections.size(); tries > 0; tries--) {
            churnCursor = churnCursor >= connections.size() - 1 ? 0 : churnCursor + 1;
            ClientConnection c = connections.get(churnCursor);
            if (c.isClosed()) {
                continue;
            }
            c.closedByClient = true;
            if (c.expectsClose) {
                totals.expectedCloses--; // its replacement is expected instead
            }
            forget(c);
            c.channel().close();
            reopener.accept(c);
            return;
        }
    }

    /** Takes {@code c} out of {@link #connections} (swapping the last one into its place), if it is there. */
    private void forget(ClientConnection c) {
        int i = c.slot;
        if (i < 0) {
            return;
        }
        ClientConnection last = connections.remove(connections.size() - 1);
        if (last != c) {
            connections.set(i, last);
            last.slot = i;
        }
        c.slot = -1;
    }

    private void sendEcho(ClientConnection c, long intended) {
        if (c.role == Role.JUNK) {
            line(c).sendJunk(random, scenario.maxLine);
            totals.junkLinesSent++;
            return;
        }
        if (c.sendEcho(intended - ORIGIN)) {
            totals.echoesSent++;
        }
    }

    /** An edge role's connection: edge roles speak the line protocol only (the scenario refuses them otherwise). */
    private static LineConnection line(ClientConnection c) {
        return (LineConnection) c;
    }

    private void trickle(ClientConnection c, long intended) {
        boolean wasOverLong = c.sentOverLongLine();
        line(c).sendTrickleByte(scenario.maxLine);
        if (!wasOverLong && c.sentOverLongLine()) {
            totals.overLongLines++;
        }
    }

    private void flood() {
        for (int i = flooders.size() - 1; i >= 0; i--) {
            ClientConnection c = flooders.get(i);
            if (c.isClosed()) {
                flooders.set(i, flooders.get(flooders.size() - 1));
                flooders.remove(flooders.size() - 1);
            } else {
                line(c).sendPings(scenario.floodLines);
                totals.floodPingsSent += scenario.floodLines;
            }
        }
    }

    /** A flooder's burst of pings, every {@link Scenario#floodPeriodNanos} until it is closed. */
    private void peerPing(ClientConnection c, long intended) {
        if (c.floodBurst(Scenario.FLOOD_BURST)) {
            totals.flooderPings += Scenario.FLOOD_BURST;
        }
    }

    /**
     * Stalled, slowreader: writes more once its channel is writable again (the server read what was queued);
     * a stalled one only until it reads again ({@link #wakeStalled}): then it is silent for good.
     */
    void backedUpWritable(ClientConnection c) {
        if (!finished && !c.channel().config().isAutoRead()) {
            fill(c);
        }
    }

    /** Stalled, slowreader: writes filler lines until its channel is unwritable; the stalled count theirs here. */
    private void fill(ClientConnection c) {
        int bytes = line(c).fillUntilUnwritable(scenario.maxLine);
        if (c.role == Role.STALLED) {
            totals.stalledBytes += bytes;
        }
    }

    /** Slowreader: one read, every {@link Scenario#slowReadPeriodNanos}; its auto-read stays off. */
    private void slowRead(ClientConnection c, long intended) {
        line(c).reads().asked(System.nanoTime());
        c.channel().read();
    }

    /**
     * Slowreader: adds what {@code c} wrote and read, the time it read for and its echo backlog to the
     * totals, once: at its close, or at the end.
     */
    private void slowReaderDone(ClientConnection c, long now) {
        LineConnection slow = line(c);
        long backlog = slow.maxEchoBacklog();
        totals.slowBytesWritten += slow.bytesWritten();
        totals.slowBytesRead += slow.bytesRead();
        totals.slowReadNanos += now - c.connectedAt;
        totals.slowMaxBacklog = Math.max(totals.slowMaxBacklog, backlog);
        long unwritable = slow.longestUnwritableNanos(now);
        totals.slowLongestUnwritableNanos = Math.max(totals.slowLongestUnwritableNanos, unwritable);
        if (unwritable > scenario.writeStallNanos()) {
            totals.slowBackedUp++;
        }
    }

    /**
     * Slowreader: the start of the span its reads are judged on at a close at {@code now}, two write stalls back:
     * the guard's timeout, the quarter of it between two of its looks, the hand-off to the event loop and the
     * close's way to the client fit in it.
     */
    private long slowJudgedFrom(long now) {
        return now - 2 * scenario.writeStallNanos();
    }

    /** Slowreader: the fewest bytes it read in a write stall of the span before {@code now} it is judged on. */
    private long leastReadInAStall(ClientConnection c, long now) {
        return line(c).reads().leastRead(slowJudgedFrom(now), now, scenario.writeStallNanos());
    }

    /**
     * Slowreader closed after it read too little in a write stall to be sure to move the server's outbound
     * buffer ({@link Verdict#READS_STALLED}): counted, the first few described, as notes, not failures.
     */
    private void slowStalled(ClientConnection c, long now) {
        totals.slowStallCloses++;
        if (totals.slowStallNotes.size() < MAX_SAMPLES) {
            totals.slowStallNotes.add("connection " + c.index + " (" + c.role + "): closed "
                    + millis(now - c.connectedAt) + " ms after its connect; " + readsBefore(c, now));
        }
    }

    /** Slowreader: its reads in the span before {@code now} that its close is judged on, for a note or sample. */
    private String readsBefore(ClientConnection c, long now) {
        ReadLog reads = line(c).reads();
        long from = slowJudgedFrom(now);
        return "in the last " + millis(now - from) + " ms it read " + leastReadInAStall(c, now) + " bytes in its "
                + "least-read " + millis(scenario.writeStallNanos()) + " ms (" + Scenario.SERVER_NOTSENT_LOWAT_BYTES
                + " move the server's buffer for sure; the longest between two of its asks for a read "
                + millis(reads.longestAskGap()) + " ms, between two reads " + millis(reads.longestGap(now))
                + " ms; " + reads.count() + " reads of " + line(c).bytesRead() + " bytes in all, those in the span: "
                + reads.describe(from, now) + ")";
    }

    /**
     * Turns reading on for every stalled connection still open {@link Scenario#stallDeadlineNanos} after
     * its last write (servers that close write stalls only). Its close is seen as it comes although it
     * does not read: the server closes with stalled lines unread (the client stops writing only with lines
     * still queued on its side), so the kernel answers with a reset, which Netty's epoll transport reads
     * on its own. Should a close have come as a FIN instead, queued behind the echoes the peer never
     * takes, reading lets it through (the report counts these). Reading also lets the server's writes
     * progress, so a server that had not closed the stall by then never closes it for WRITE_STALL: the
     * servers' counts, which must equal the stalled closes, catch it, and one still open at the end is
     * left open. The other servers close it for idleness, later than this: it does not read again for
     * them, or its reads would move their idle deadline.
     */
    private void wakeStalled(long now) {
        for (int i = stalled.size() - 1; i >= 0; i--) {
            ClientConnection c = stalled.get(i);
            boolean due = now - (c.lastActivity + scenario.stallDeadlineNanos()) >= 0;
            if (c.isClosed() || due) {
                stalled.set(i, stalled.get(stalled.size() - 1));
                stalled.remove(stalled.size() - 1);
            }
            if (!c.isClosed() && due) {
                totals.stallsReadAgain++;
                c.channel().config().setAutoRead(true);
            }
        }
    }

    /**
     * Turns reading back on for the half-open connections whose earliest legitimate close is at most
     * {@link Scenario#HALF_OPEN_LOOK_AHEAD_NANOS} away: a close that already happened is seen now, before
     * it was due (premature); a later one is seen when it comes. Runs also after the window, until finish.
     */
    private void wakeHalfOpen(long now) {
        ClientConnection c;
        while ((c = halfOpen.peek()) != null
                && now - (c.safeDueNanos(scenario) - Scenario.HALF_OPEN_LOOK_AHEAD_NANOS) >= 0) {
            halfOpen.poll();
            if (!c.isClosed()) {
                c.channel().config().setAutoRead(true);
            }
        }
    }

    private void sendLongLine(ClientConnection c) {
        if (!finished && !c.isClosed()) {
            line(c).sendLongLine(scenario.maxLine);
            totals.overLongLines++;
        }
    }

    private void keepAlive(ClientConnection c, long intended) {
        if (isAlive(c, System.nanoTime())) {
            c.sendKeepAlive();
        }
    }

    /** Whether a dying connection still answers: until its moment of death, drawn in the run. */
    private boolean isAlive(ClientConnection c, long now) {
        if (c.role != Role.DYING || !window.isOpen()) {
            return true;
        }
        long deathAt = window.start() + (long) (scenario.deathFraction(c.index) * scenario.deathSpanNanos());
        return now - deathAt < 0;
    }

    void connected(ClientConnection c, long now) {
        if (finished) {
            c.channel().close();
            return;
        }
        c.slot = connections.size();
        connections.add(c);
        if (c.reopened && c.expectsClose && window.isOpen()
                && now + scenario.closeWindowNanos() + scenario.graceNanos() - window.end() > 0) {
            c.mayOutliveRun = true; // a max-age replacement: its close may be due after the end
        }
        if (c.reopened) {
            totals.reopened++;
        } else {
            totals.connected++;
            totals.connectedByRole[c.role.ordinal()]++;
            progress.connected.increment();
        }
        if (c.expectsClose) {
            totals.expectedCloses++;
        }
        Histograms.recordNanos(connectTime, now - c.connectStart);
        switch (c.role) {
            case ACTIVE:
            case JUNK:
                echoes.add(c);
                break;
            case PONG:
            case DYING:
            case AGED:
                if (scenario.sendsKeepAlives(c.role)) {
                    keepAlives.add(c);
                }
                break;
            case TRICKLE:
                trickles.add(c);
                break;
            case PINGFLOOD:
                flooders.add(c);
                break;
            case HALFOPEN:
                halfOpen.add(c);
                break;
            case LONGLINE:
                executor.schedule(() -> sendLongLine(c), scenario.longLineDelayNanos(c.index), TimeUnit.NANOSECONDS);
                break;
            case FLOODER:
                peerPings.add(c);
                break;
            case STALLED:
                if (stallGuarded) {
                    stalled.add(c);
                }
                fill(c);
                break;
            case SLOWREADER:
                slowReads.add(c);
                fill(c);
                break;
            default:
                break;
        }
    }

    void echoReceived(ClientConnection c, long intendedSinceOrigin, long now) {
        if (finished) {
            return;
        }
        totals.echoesReceived++;
        progress.echoes.increment();
        long intended = intendedSinceOrigin + ORIGIN;
        if (window.contains(intended)) {
            totals.echoesRecorded++;
            Histograms.recordNanos(echoLatency, now - intended);
            echoPerSecond.recordNanos(intended, now - intended);
        }
    }

    /**
     * A PONG line: the server's answer to a flooder's PING (other roles' PONG lines are their own
     * keep-alives and answers, echoed).
     */
    void pongReceived(ClientConnection c) {
        if (!finished && c.role == Role.PINGFLOOD) {
            totals.floodPongs++;
        }
    }

    /** A junk line came back. */
    void junkEchoed(ClientConnection c) {
        if (!finished) {
            totals.junkEchoes++;
        }
    }

    /**
     * The server pinged {@code c}: counts it, and says whether the connection answers: active, pong and
     * aged ones, and dying ones while alive, as a live peer does (an active one is pinged only after a stall
     * kept it silent for a ping interval, and under a matched ack mode its other traffic would not
     * answer); silent ones never, nor the edge roles, which keep to their own input.
     */
    boolean pingReceived(ClientConnection c, long now) {
        if (finished) {
            return false;
        }
        totals.pingsByRole[c.role.ordinal()]++;
        totals.pingsPerSecond.record(now);
        return c.role == Role.ACTIVE || c.role == Role.PONG || c.role == Role.AGED
                || (c.role == Role.DYING && isAlive(c, now));
    }

    void error(ClientConnection c, Throwable cause) {
        if (c.role == Role.STALLED && cause instanceof java.io.IOException) {
            return; // the reset its close comes with: the server closed with its lines unread
        }
        if (!finished) {
            totals.errors++;
        }
    }

    /**
     * The server said goodbye to {@code c}: one naming {@code MAX_AGE} has a new connection opened in its
     * place at once, as a client that sees its server's GOAWAY does (the old one is closed by the server
     * at the end of its grace).
     */
    void goodbye(ClientConnection c, CloseReason reason, long now) {
        if (reason == CloseReason.MAX_AGE) {
            reconnect(c, now);
        }
    }

    /**
     * Max age: opens a new connection with {@code c}'s index and role, once per connection, unless the run
     * is over.
     */
    private void reconnect(ClientConnection c, long now) {
        if (finished || c.reconnected || (window.isOpen() && now - window.end() >= 0)) {
            return;
        }
        c.reconnected = true;
        totals.ageReconnects++;
        totals.reconnectsPerSecond.record(now);
        reopener.accept(c);
    }

    /**
     * Whether a close of {@code c} is one for the maximum age: told {@code MAX_AGE}; any close of an aged
     * connection (judged as such: another reason is a wrong one); and with MQTT, which has no goodbye, a
     * close of a connection that no idle handling may close.
     */
    private boolean isAgeClose(ClientConnection c, CloseReason goodbye) {
        return scenario.agesConnections() && (goodbye == CloseReason.MAX_AGE || c.role == Role.AGED
                || (scenario.protocol == ServerConfig.Protocol.MQTT && !c.expectsClose));
    }

    /**
     * How far behind this loop runs at {@code now}: the later of how late the latest tick ran and how overdue the
     * next one is. What the loop handles now (a close, a ping) may have waited about that long for it.
     */
    private long behind(long now) {
        return nextTickAt == 0 ? 0 : Math.max(behindNanos, now - nextTickAt);
    }

    /**
     * Whether {@code c}'s last write may have been made after the close seen at {@code now} was made: the close
     * may have waited behind the loop's backlog ({@link #behind}, and one tick), and the write came later than
     * the earliest moment the close may have been made. Such a write (an answer to a ping the loop read late, an
     * echo it sent late) may never have been read by the server, so its due moment does not bind it: a server
     * closes a connection whose client fell behind its ping timeout rightly.
     */
    boolean mayHaveCrossedTheClose(ClientConnection c, long now) {
        return c.wrote() && c.lastActivity - (now - behind(now) - TICK_NANOS) > 0;
    }

    /**
     * The verdict on a close that {@code v} finds early (or unexpected) from {@code c}'s last write, when that
     * write may have crossed the close: judged again from the latest write that came before the close may have
     * been made; premature if still early, else {@link Verdict#CLIENT_BEHIND}.
     */
    private Verdict judgeBehind(ClientConnection c, Verdict v, long now) {
        if (!mayHaveCrossedTheClose(c, now)) {
            return v;
        }
        long basis = c.lastWriteAtOrBefore(now - behind(now) - TICK_NANOS);
        return now - (basis + scenario.closeWindowNanos()) < 0 && v == Verdict.PREMATURE ? v : Verdict.CLIENT_BEHIND;
    }

    /**
     * Whether this loop runs behind by more than the servers' ping timeout at {@code now} (ping policy only): an
     * answer it writes now came too late to count, so a server may close even a connection that answers.
     */
    private boolean missedPingsWhileBehind(long now) {
        return scenario.policy == Scenario.Policy.PING && behind(now) - scenario.pingTimeoutNanos >= 0;
    }

    /**
     * A close the client cannot judge ({@link Verdict#CLIENT_BEHIND}): counted, and the first few described as
     * notes, not failures.
     */
    private void closedWhileBehind(ClientConnection c, CloseReason goodbye, long now) {
        totals.closesWhileBehind++;
        totals.behindByRole[c.role.ordinal()]++;
        if (totals.behindNotes.size() < MAX_SAMPLES) {
            totals.behindNotes.add("connection " + c.index + " (" + c.role + "): closed told "
                    + (goodbye == null ? "no reason" : goodbye) + " " + millis(now - c.lastActivity)
                    + " ms after its last write, which came while its loop ran " + millis(behind(now))
                    + " ms behind (" + millis(c.safeDueNanos(scenario) - now) + " ms before that write's due moment)");
        }
    }

    /** Whether {@code c} answers nothing any more at {@code now}: a silent connection, a dying one dead by then. */
    private boolean wentSilent(ClientConnection c, long now) {
        return c.role == Role.SILENT || (c.role == Role.DYING && !isAlive(c, now));
    }

    /** A close for the maximum age: judged by the ages the jitter allows, and reconnected. */
    private void ageClosed(ClientConnection c, CloseReason goodbye, long now) {
        if (c.expectsClose) {
            totals.expectedCloses--; // its replacement is expected instead
        }
        long goodbyeAt = c.goodbyeAt() != 0 ? c.goodbyeAt() : now;
        boolean reason = goodbye == CloseReason.MAX_AGE
                || (goodbye == null && scenario.protocol == ServerConfig.Protocol.MQTT);
        // A connection gone silent (a silent one, a dying one dead by now) whose idle close had come due: the server
        // may have closed it for idleness and not been able to say so after its MAX_AGE goodbye (HTTP/2: the final
        // GOAWAY named the last stream id already, and Netty's codec drops a second such GOAWAY), or at the end of
        // its grace for the age. Either comes: a dying one's ping unanswered since before the goodbye, a silent one's
        // idle close late behind a busy server. The client cannot tell which near the grace's end: the server's
        // grace began before the client saw the goodbye, and the close reaches the client later than it was made, by
        // a delay of its own (a close for PING_TIMEOUT made 81.9 ms into an 82 ms grace was seen 82.5 ms after the
        // goodbye). So each such close is counted as one the servers may count for either reason: in the grace as
        // the client sees it (idleClosesInGrace), judged against the idle due moment, as a max-age close comes only
        // at the grace's end; at or after that end (idleDueAfterGrace), judged as a max-age close, which a close
        // for idleness made in the server's grace also passes (the client saw it after the shortest age and grace).
        // So may a connection that answers, when its loop fell behind by more than the ping timeout and its last
        // write may have crossed the close (seen loaded: two connections told MAX_AGE, closed for PING_TIMEOUT in
        // their grace 50 ms after the server's last read of them, in a run whose client loop ran 180 ms behind).
        boolean crossed = mayHaveCrossedTheClose(c, now);
        long idleDueAt = crossed ? c.lastWriteAtOrBefore(now - behind(now) - TICK_NANOS) + scenario.closeWindowNanos()
                : c.safeDueNanos(scenario); // from the latest write that came before the close may have been made
        boolean idleDue = goodbye == CloseReason.MAX_AGE
                && (wentSilent(c, now) || (crossed && missedPingsWhileBehind(now))) && now - idleDueAt >= 0;
        boolean idleInGrace = idleDue && now - (goodbyeAt + scenario.maxAgeGraceNanos) < 0;
        if (idleInGrace) {
            totals.idleClosesInGrace++;
        } else if (idleDue) {
            totals.idleDueAfterGrace++;
        }
        Verdict v = idleInGrace ? Verdict.ofClose(true, idleDueAt, now)
                : Verdict.ofAgeClose(scenario, c.connectStart, c.connectedAt, goodbyeAt, now, reason);
        if (crossed && (goodbye != CloseReason.MAX_AGE || idleInGrace)
                && (v == Verdict.PREMATURE || v == Verdict.WRONG_REASON)) {
            // closed for its idleness before its age, after its loop fell behind: due from a write before that?
            long basis = c.lastWriteAtOrBefore(now - behind(now) - TICK_NANOS);
            v = now - (basis + scenario.closeWindowNanos()) < 0 ? v : Verdict.CLIENT_BEHIND;
        }
        long latest = c.connectedAt + scenario.maxDrawnAgeNanos() + scenario.maxAgeGraceNanos;
        Histograms.recordNanos(ageAtGoodbye, goodbyeAt - c.connectedAt);
        Histograms.recordNanos(ageCloseLateness, now - latest); // below 0 counts as 0
        totals.ageCloses++;
        switch (v) {
            case ON_TIME:
                break;
            case CLIENT_BEHIND:
                closedWhileBehind(c, goodbye, now);
                break;
            case PREMATURE:
                totals.premature++;
                progress.premature.increment();
                sample(c, "closed for its max age " + millis(goodbyeAt - c.connectStart) + " ms after its connect "
                        + "started (closed " + millis(now - c.connectStart) + " ms after), before the shortest age "
                        + millis(scenario.minAgeNanos()) + " ms (grace " + millis(scenario.maxAgeGraceNanos) + " ms)");
                break;
            case LATE:
                totals.late++;
                sample(c, "closed for its max age " + millis(now - latest) + " ms after the longest age and grace "
                        + "allow, more than " + millis(Scenario.AGE_LATENESS_NANOS) + " ms late");
                break;
            default: // WRONG_REASON
                totals.wrongReason++;
                sample(c, "closed " + millis(goodbyeAt - c.connectedAt) + " ms after its connect, told "
                        + (goodbye == null ? "no reason" : goodbye) + ", not " + CloseReason.MAX_AGE);
                break;
        }
        reconnect(c, now);
    }

    void closed(ClientConnection c, long now) {
        if (finished) {
            return;
        }
        forget(c);
        if (c.role == Role.SLOWREADER) {
            slowReaderDone(c, now);
        }
        if (c.closedByClient) {
            totals.churned++;
            return;
        }
        progress.closed.increment();
        totals.closedByRole[c.role.ordinal()]++;
        totals.closesPerSecond.record(now);
        CloseReason goodbye = c.goodbye();
        totals.goodbyesByRole[c.role.ordinal()][ClientResult.goodbyeIndex(goodbye)]++;
        if (isAgeClose(c, goodbye)) {
            ageClosed(c, goodbye, now);
            return;
        }
        long due = c.safeDueNanos(scenario);
        CloseReason expected = scenario.expectedGoodbye(c.role);
        boolean flooder = c.role == Role.FLOODER;
        boolean stall = c.role == Role.STALLED;
        boolean slow = c.role == Role.SLOWREADER;
        boolean drainStarted = scenario.drains() && window.isOpen()
                && now - (window.start() + scenario.drainDelayNanos()) >= 0;
        // after the drain started, a close without a goodbye is the drain's too where the protocol has none (MQTT)
        boolean drain = scenario.drains() && !stall
                && (goodbye == CloseReason.DRAIN || (drainStarted && scenario.expectedGoodbye() == null));
        Verdict v = drain ? Verdict.ofDrainClose(drainStarted)
                : stall ? stallVerdict(c, due, now)
                : slow ? Verdict.ofSlowReaderClose(leastReadInAStall(c, now), stallGuarded) // it drains: never idle
                : flooder ? Verdict.ofAbuseClose(c.floodPings() > Scenario.PEER_PING_MAX_STRIKES, goodbye == expected)
                : c.role.isLineLimited() ? Verdict.ofLineLimitedClose(c.sentOverLongLine(), c.refusedLine(), due, now)
                : Verdict.ofClose(c.expectsClose, due, now, goodbye == expected);
        if ((v == Verdict.PREMATURE || v == Verdict.UNEXPECTED) && !drain && !stall && !slow && !flooder
                && !c.role.isLineLimited()) {
            v = judgeBehind(c, v, now);
        }
        if (c.expectsClose) {
            totals.observedCloses++;
        }
        switch (v) {
            case DRAINED:
                totals.drained++;
                totals.drainCloses.record(now);
                break;
            case READS_STALLED:
                slowStalled(c, now);
                break;
            case CLIENT_BEHIND:
                closedWhileBehind(c, goodbye, now);
                break;
            case LINE_CLOSED:
                totals.lineCloses++;
                totals.lineCloseMaxNanos = Math.max(totals.lineCloseMaxNanos, now - c.overLongAt());
                break;
            case ON_TIME:
                totals.onTime++;
                if (flooder) {
                    totals.abuseCloses++;
                    Histograms.recordNanos(abuseCloseTime, now - c.lastActivity); // after its latest ping
                } else if (stall) { // no lateness: when the server stopped reading it is not known here
                    if (stallGuarded) {
                        totals.stallCloses++;
                        Histograms.recordNanos(stallCloseTime, now - c.lastActivity); // after its last write
                    }
                } else {
                    Histograms.recordNanos(lateness, now - c.estimatedDueNanos(scenario)); // below 0 counts as 0
                }
                break;
            case WRONG_REASON:
                totals.wrongReason++;
                sample(c, "closed on time, but the server's goodbye named " + (goodbye == null ? "no reason" : goodbye)
                        + ", not " + (expected == null ? "no reason" : expected));
                break;
            case PREMATURE:
                totals.premature++;
                progress.premature.increment();
                if (flooder) {
                    sample(c, "closed after " + c.floodPings() + " pings, before the first past the servers' "
                            + Scenario.PEER_PING_MAX_STRIKES + " strikes");
                    break;
                }
                if (drain) {
                    sample(c, "told " + CloseReason.DRAIN + " before the drain started");
                    break;
                }
                if (stall && c.stallStart != 0) {
                    sample(c, "closed " + millis(now - c.stallStart) + " ms after its first write, before "
                            + (stallGuarded ? "--write-stall " + millis(scenario.writeStallNanos())
                            : "the close window " + millis(scenario.closeWindowNanos())) + " ms could have passed");
                    break;
                }
                totals.earliestPrematureNanos = Math.max(totals.earliestPrematureNanos, due - now);
                sample(c, "closed " + millis(due - now) + " ms before it was due, told "
                        + (goodbye == null ? "no reason" : goodbye) + ", its loop " + millis(behind(now))
                        + " ms behind");
                break;
            default: // UNEXPECTED
                totals.unexpected++;
                progress.unexpected.increment();
                if (slow) {
                    sample(c, "closed " + millis(now - c.connectedAt) + " ms after its connect, told "
                            + (goodbye == null ? "no reason" : goodbye) + ", with " + line(c).echoBacklog()
                            + " bytes of echoes not read back: a slow reader that drains every "
                            + millis(scenario.slowReadPeriodNanos()) + " ms must stay open; " + readsBefore(c, now));
                    break;
                }
                sample(c, "closed " + millis(now - due) + " ms after its due moment, but it should have stayed open"
                        + (c.role.isLineLimited() ? " until the server's line decoder refused its line"
                                + (c.refusedLine() ? "" : " (no ERR line too long came)") : ""));
                break;
        }
    }

    /**
     * A stalled connection's close, from its first write, not its last: the server stopped reading it
     * (and making progress on its echoes) at a moment the client cannot see, after that first write and
     * perhaps well before the last, whose bytes then wait unread. With Heartbeat servers premature if it
     * came less than {@link Scenario#writeStallNanos} after the first write, else on time (its deadline is
     * {@link #wakeStalled}'s); with the others, which close it for idleness, premature less than the
     * close window after it. Its goodbye is never seen: it does not read.
     */
    private Verdict stallVerdict(ClientConnection c, long due, long now) {
        if (c.stallStart == 0) {
            return Verdict.ofClose(c.expectsClose, due, now);
        }
        long after = stallGuarded ? scenario.writeStallNanos() : scenario.closeWindowNanos();
        return Verdict.ofClose(c.expectsClose, c.stallStart + after, now);
    }

    private void sample(ClientConnection c, String what) {
        if (totals.failureSamples.size() < MAX_SAMPLES) {
            totals.failureSamples.add("connection " + c.index + " (" + c.role + "): " + what);
        }
    }

    private static String millis(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.3f", nanos / 1e6);
    }

    /**
     * Ends the run on this loop: judges the connections still open, stops every activity and returns
     * the totals with the histograms. Later closes and echoes are ignored. Must run on the loop.
     */
    ClientResult finish() {
        finished = true;
        if (ticker != null) {
            ticker.cancel(false);
        }
        long now = System.nanoTime();
        for (ClientConnection c : connections) {
            if (c.role == Role.SLOWREADER && !c.isClosed()) {
                slowReaderDone(c, now);
                c.channel().config().setAutoRead(true); // its reads stop with the ticker: drained, it never stalls
            }
            if (c.mayOutliveRun && !c.isClosed()) {
                totals.expectedCloses--; // opened too late to be due before the end: not judged open
                continue;
            }
            if (!c.isClosed()) {
                Verdict v = scenario.drains() ? Verdict.LEFT_OPEN // every connection is due to be drained by now
                        : c.role.isLineLimited() ? Verdict.ofLineLimitedOpenAtEnd(c.sentOverLongLine()
                        && now - c.overLongAt() >= scenario.graceNanos()) : Verdict.ofOpenAtEnd(c.expectsClose);
                if (v == Verdict.LEFT_OPEN) {
                    totals.leftOpen++;
                    sample(c, scenario.drains() ? "still open at the end, after the drain's window"
                            : c.role.isLineLimited() ? "still open at the end, " + millis(now - c.overLongAt())
                            + " ms after it sent more than --max-line bytes without a newline"
                            : c.role == Role.FLOODER ? "still open at the end after " + c.floodPings()
                                    + " pings, " + Scenario.FLOOD_BURST + " at once every "
                                    + millis(scenario.floodPeriodNanos()) + " ms"
                            : "still open at the end, " + millis(now - c.safeDueNanos(scenario))
                                    + " ms after it was due to be closed");
                }
            }
        }
        totals.lateness = lateness;
        totals.echoLatency = echoLatency;
        totals.echoPerSecond = echoPerSecond;
        totals.connectTime = connectTime;
        totals.abuseCloseTime = abuseCloseTime;
        totals.ageAtGoodbye = ageAtGoodbye;
        totals.ageCloseLateness = ageCloseLateness;
        totals.stallCloseTime = stallCloseTime;
        return totals;
    }

    /** The connections of this loop that are still open; must run on the loop, after {@link #finish}. */
    List<ClientConnection> openConnections() {
        List<ClientConnection> open = new ArrayList<>();
        for (ClientConnection c : connections) {
            if (!c.isClosed()) {
                open.add(c);
            }
        }
        return open;
    }
}
