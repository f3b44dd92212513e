/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import dev.heartbeat.netty.CloseReason;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * The client side of one connection: its identity ({@link #index}, {@link #role}), the moments
 * that judge the server ({@link #safeDueNanos}), and the protocol it speaks, one subclass per
 * {@code --probe}: {@link LineConnection}, {@link WebSocketConnection}, {@link Http2Connection},
 * {@link MqttConnection}. It is the last handler of its pipeline and puts the protocol's codecs
 * before itself when added ({@link #addCodecs}); it plays
 * the connection's {@link Role} for its {@link ClientLoop} ({@link #sendEcho}, {@link #sendKeepAlive},
 * answering pings when the loop says so), tells the loop what happened, and keeps the reason the
 * server gave in its goodbye before closing ({@link #goodbye()}).
 *
 * <p>Every write is stamped first ({@link #stamp}): the server's own stamp of that activity can only
 * be later. Writes a codec makes by itself would escape the stamp, so the subclasses turn those off
 * (an HTTP/2 client's automatic SETTINGS and PING acks) and make them themselves.
 *
 * <p>Confined to the channel's event loop, except {@link #connectStart}, {@link #attempts} and
 * {@link #loop}, written by the connecting thread before the channel is registered (the registration
 * hand-off orders them before every read on the loop).
 */
abstract class ClientConnection extends ChannelInboundHandlerAdapter {

    /**
     * The words of a goodbye for ping abuse, which gRPC clients back off on and Heartbeat's ping
     * policing writes (in a GOAWAY's debug data, a Close frame's reason).
     */
    static final String TOO_MANY_PINGS = "too_many_pings";
    /**
     * How many of its latest write stamps a connection keeps (a power of two): enough for the few a loop that fell
     * behind makes in catching up (answers to the pings it read late, an echo) before it sees a close.
     */
    static final int KEPT_WRITES = 4;
    /** Writes closer together than this are kept as one moment, the latest: a loop catching up writes in bursts. */
    static final long BURST_NANOS = 1_000_000;

    /** The global index: fixes the role, the send phase and the moment of death. */
    final int index;
    final Role role;
    /** Whether a correct server closes this connection during the run. */
    final boolean expectsClose;

    /** The clock read just before the (latest) connect attempt started. */
    long connectStart;
    /** Connect attempts made so far (the connecting thread, then the connect listener). */
    int attempts;
    /**
     * The clock read when the connect completed (as this event loop saw it), or just before the
     * latest write.
     */
    long lastActivity;
    /** Whether anything was written, so {@link #lastActivity} is a write and not the connect. */
    private boolean wrote;
    /** The stamps of the latest writes, a ring ({@link #lastWriteAtOrBefore}), and how many writes were stamped. */
    private final long[] keptWrites = new long[KEPT_WRITES];
    private int writes;
    /**
     * When the protocol was seen set up (the WebSocket handshake's answer, MQTT's CONNACK), or 0: the
     * server starts timing the connection afresh about then (see {@link #estimatedDueNanos}).
     */
    private long readyAt;

    /** The loop this connection's channel is registered with, chosen before connecting. */
    ClientLoop loop;
    Channel channel;
    private boolean closed;
    /** The reason the server's goodbye named, or null: none came (yet). */
    private CloseReason goodbye;
    /** Soak: whether this connection replaces one the client closed, and whether the client closed this one. */
    boolean reopened;
    boolean closedByClient;
    /** Flooder: the pings it wrote. */
    private int floodPings;
    /** When the channel became active (the connect's completion as this event loop saw it). */
    long connectedAt;
    /** When the first goodbye came, or 0. */
    private long goodbyeAt;
    /** Max age: whether a new connection has been opened in its place. */
    boolean reconnected;
    /**
     * Max age: a replacement of a connection due to be closed, opened too late for its close to be due a
     * grace before the run ends; open at the end, it is no failure.
     */
    boolean mayOutliveRun;
    /** Where it is in its loop's list of connections, or -1. */
    int slot = -1;
    /** Stalled, slowreader: the clock read before its first write (0: none yet). */
    long stallStart;

    ClientConnection(int index, Role role, boolean expectsClose) {
        this.index = index;
        this.role = role;
        this.expectsClose = expectsClose;
    }

    /** A connection speaking the scenario's protocol, not yet connected. */
    static ClientConnection create(Scenario scenario, int index, Role role, boolean expectsClose) {
        switch (scenario.protocol) {
            case LINE:
                return new LineConnection(index, role, expectsClose);
            case WEBSOCKET:
                return new WebSocketConnection(index, role, expectsClose);
            case HTTP2:
                return new Http2Connection(index, role, expectsClose);
            case MQTT:
                return new MqttConnection(index, role, expectsClose, scenario.mqttKeepAliveSeconds());
            default:
                throw new AssertionError(scenario.protocol);
        }
    }

    /** A fresh connection with this one's identity, for a retry or a reopen (a handler joins one pipeline only). */
    final ClientConnection again(Scenario scenario) {
        return create(scenario, index, role, expectsClose);
    }

    /**
     * The earliest moment a correct server may close this connection, as of its last activity: from
     * the clock read before the latest write, or before the connect started. The server's own
     * stamp of that activity can only be later, so a close before this moment is premature.
     */
    long safeDueNanos(Scenario scenario) {
        return (wrote ? lastActivity : connectStart) + scenario.closeWindowNanos();
    }

    /**
     * The moment the server was due to act, as closely as the client can tell: as
     * {@link #safeDueNanos} but from the connect's completion (or the protocol's set-up, {@link #ready})
     * rather than its start, so that a slow connect (the servers' accept queues, a cold JIT) is not
     * counted as lateness of the idle handling. A correct server may close up to the connect time (or
     * the set-up) before it; lateness is measured from here and counted as 0 then.
     */
    long estimatedDueNanos(Scenario scenario) {
        long from = readyAt != 0 && readyAt - lastActivity > 0 ? readyAt : lastActivity;
        return from + scenario.closeWindowNanos();
    }

    /**
     * The protocol is set up, as the client sees it: the server, which starts timing the connection
     * afresh once it is (Heartbeat reconfigured after the WebSocket handshake, MQTT's keep-alive after
     * CONNECT), did so about now or a little before. Lateness is measured from this moment if no
     * later write came; premature closes are still judged from the last write ({@link #safeDueNanos}).
     */
    final void ready() {
        readyAt = System.nanoTime();
    }

    boolean isClosed() {
        return closed;
    }

    Channel channel() {
        return channel;
    }

    /** The reason the server named before it closed this connection, or null if it named none. */
    CloseReason goodbye() {
        return goodbye;
    }

    /** The server said goodbye naming {@code reason}; the first goodbye stamps {@link #goodbyeAt}. */
    final void goodbye(CloseReason reason) {
        goodbye = reason;
        if (goodbyeAt == 0 && reason != null) {
            goodbyeAt = System.nanoTime();
            if (loop != null) {
                loop.goodbye(this, reason, goodbyeAt);
            }
        }
    }

    /** When the first goodbye naming a reason came, or 0. */
    long goodbyeAt() {
        return goodbyeAt;
    }

    /**
     * The server said goodbye with {@code text}: {@link #TOO_MANY_PINGS} with the protocol's code for it
     * ({@code abuseCode}: HTTP/2's ENHANCE_YOUR_CALM, WebSocket's 1008) is {@code PING_ABUSE}, those
     * words with another code none; any other text names a reason, or none.
     */
    final void goodbye(boolean abuseCode, String text) {
        if (TOO_MANY_PINGS.equals(text)) {
            goodbye(abuseCode ? CloseReason.PING_ABUSE : null);
        } else {
            goodbye(text);
        }
    }

    /** The server said goodbye naming {@code reasonName}; a name that is no reason counts as none. */
    final void goodbye(String reasonName) {
        for (CloseReason r : CloseReason.values()) {
            if (r.name().equals(reasonName)) {
                goodbye(r);
                return;
            }
        }
    }

    /** Whether this connection has sent more than {@code --max-line} bytes without a newline (line only). */
    boolean sentOverLongLine() {
        return false;
    }

    /** When the byte that made its line over-long was written; only if {@link #sentOverLongLine}. */
    long overLongAt() {
        return 0;
    }

    /** Whether the server answered {@code ERR line too long} (line only). */
    boolean refusedLine() {
        return false;
    }

    /**
     * Puts the protocol's codecs before this handler, which {@code ctx} names; called once, when the
     * handler is added (before the channel is active).
     */
    void addCodecs(ChannelHandlerContext ctx) {
    }

    /** The channel is up: sets the protocol up (a handshake, a CONNECT), stamping what it writes. */
    void start() {
    }

    /**
     * Writes an echo request carrying {@code number} (the intended send time, for the latency).
     *
     * @return false if nothing could be sent yet (the protocol is not set up)
     */
    abstract boolean sendEcho(long number);

    /** Writes the protocol's keep-alive (a line, an unsolicited Pong, a PING, a PINGREQ), if set up. */
    abstract void sendKeepAlive();

    /** Whether the protocol is set up so that a ping can be written (WebSocket: upgraded; MQTT: CONNACK). */
    abstract boolean canPing();

    /** A new ping in the protocol's own words: a {@code PING} line, a WebSocket Ping, an HTTP/2 PING, a PINGREQ. */
    abstract Object newPing();

    /**
     * Flooder: writes a burst of {@code pings} pings in one write, if the protocol is set up. All at
     * once, so that none of this side's writes is under way while the server reads them and closes: a
     * write racing the server's close can lose its goodbye (over TCP, data after the close is answered
     * by a reset; Netty's local transport puts the read of what the server wrote last behind the close
     * while this side writes, which {@link InOrderLocalChannel} mends). A failed write is no error: the
     * close comes as it comes.
     *
     * @return whether the pings were written
     */
    final boolean floodBurst(int pings) {
        if (!canPing()) {
            return false;
        }
        stamp();
        for (int i = 0; i < pings; i++) {
            channel.write(newPing());
        }
        channel.flush();
        floodPings += pings;
        return true;
    }

    /** Flooder: the pings written so far. */
    int floodPings() {
        return floodPings;
    }

    @Override
    public final void handlerAdded(ChannelHandlerContext ctx) {
        if (role.backsUpEchoes()) {
            LineConnection.shrinkBuffers(ctx.channel()); // on registration: before the connect
        }
        addCodecs(ctx);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        if (role == Role.HALFOPEN || role.backsUpEchoes()) {
            // before the first read (half-open: the loop turns it back on; a slow reader reads one at a time)
            channel.config().setAutoRead(false);
        }
        lastActivity = System.nanoTime();
        connectedAt = lastActivity;
        loop.connected(this, lastActivity);
        if (!closed && channel.isActive()) {
            start();
        }
        ctx.fireChannelActive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (role.backsUpEchoes() && !closed && ctx.channel().isWritable()) {
            loop.backedUpWritable(this);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        long now = System.nanoTime();
        if (!closed) {
            closed = true;
            loop.closed(this, now);
        }
        ctx.fireChannelInactive();
    }

    @Override
    @SuppressWarnings("deprecation") // deprecated in ChannelHandler, current in ChannelInboundHandler
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (loop != null) {
            loop.error(this, cause);
        }
        ctx.close();
    }

    /** Whether anything was written, so that {@link #lastActivity} is a write. */
    final boolean wrote() {
        return wrote;
    }

    /**
     * The latest write stamped at or before {@code cutoff}: of the last {@link #KEPT_WRITES} moments written, or the
     * connect's start if none came before; {@code cutoff} itself if the kept ones all came later and older ones
     * were made (an upper bound of the latest before it).
     */
    final long lastWriteAtOrBefore(long cutoff) {
        for (int i = 1; i <= Math.min(writes, KEPT_WRITES); i++) {
            long at = keptWrites[(writes - i) & (KEPT_WRITES - 1)];
            if (at - cutoff <= 0) {
                return at;
            }
        }
        return writes <= KEPT_WRITES ? connectStart : cutoff;
    }

    /** Stamps the activity before a write: the server's own stamp of it can only be later. */
    final void stamp() {
        stampAt(System.nanoTime());
    }

    /** Stamps a write at {@code now} (tests give the moment). */
    final void stampAt(long now) {
        lastActivity = now;
        wrote = true;
        if (writes > 0 && now - keptWrites[(writes - 1) & (KEPT_WRITES - 1)] < BURST_NANOS) {
            keptWrites[(writes - 1) & (KEPT_WRITES - 1)] = now; // one burst (a loop catching up): one moment
        } else {
            keptWrites[writes++ & (KEPT_WRITES - 1)] = now;
        }
    }

    /** Stamps the activity, then writes and flushes {@code msg} from the tail of the pipeline. */
    final void write(Object msg) {
        stamp();
        channel.writeAndFlush(msg, channel.voidPromise());
    }

    /** A decimal number of ASCII digits filling the readable bytes, or -1 if that is not what they are. */
    static long parseDecimal(ByteBuf buf) {
        int n = buf.readableBytes();
        if (n == 0 || n > 18) {
            return -1;
        }
        long value = 0;
        for (int i = buf.readerIndex(), end = i + n; i < end; i++) {
            byte b = buf.getByte(i);
            if (b < '0' || b > '9') {
                return -1;
            }
            value = value * 10 + (b - '0');
        }
        return value;
    }

    static void writeDecimal(ByteBuf buf, long value) {
        if (value == 0) {
            buf.writeByte('0');
            return;
        }
        long divisor = 1;
        while (value / divisor >= 10) {
            divisor *= 10;
        }
        for (; divisor > 0; divisor /= 10) {
            buf.writeByte((int) ('0' + (value / divisor) % 10));
        }
    }
}
