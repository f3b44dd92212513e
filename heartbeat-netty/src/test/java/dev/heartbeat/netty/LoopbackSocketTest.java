/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import dev.heartbeat.testing.LeakDetection;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.handler.codec.string.StringEncoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Real sockets on 127.0.0.1, NIO and epoll: two line-protocol servers share one started
 * {@link HeartbeatMonitor}, one closing idle connections, one pinging silent peers, and 2,200
 * clients of four kinds connect to them, mixed:
 * <ul>
 * <li>silent clients of the idle server, which must be closed after the idle timeout;</li>
 * <li>chatty clients of the idle server (a line every 100 ms), which must never be closed, unless their
 *     own event loop stalled so long that they really sent nothing for the idle timeout (seen on an
 *     overloaded machine; such a client is then counted as a silent one);</li>
 * <li>clients of the ping server that answer every PING with a PONG, which must never be closed;</li>
 * <li>silent clients of the ping server, which must get exactly the missed pings and then be closed.</li>
 * </ul>
 *
 * <p>Real time, so every wait polls observable state (close futures, counters) against a generous
 * deadline. "Never early" is asserted only where it is sound: a server may accept a connection before
 * the client's connect listener runs, so a client's connect completion is no lower bound for the
 * server's idle clock, but the moment the client started connecting is. Server side, the child
 * initializer stamps the connection just before it adds Heartbeat (which starts its clock in
 * handlerAdded, the channel being active already), and the close future completes after Heartbeat's
 * close, so their difference is a sound lower bound too, and a tight one.
 */
@ExtendWith(LeakDetection.class)
class LoopbackSocketTest {

    // Short, but above the event loop stalls of a 2-core machine shared with other builds (several
    // hundred ms, seconds at a load of 15 and more). Heartbeat's worker judges from the stamps the
    // event loops left and the loop acts later without looking again, so a loop that stalls for about
    // a timeout gets healthy peers closed; and a client loop that stalls that long is silent for real.
    private static final Duration IDLE = Duration.ofSeconds(3);
    private static final Duration PING_INTERVAL = Duration.ofSeconds(1);
    private static final Duration PING_TIMEOUT = Duration.ofMillis(1500);
    private static final int MAX_MISSED_PINGS = 2;
    /** A silent peer of the ping server is closed this long after it connected, at the earliest. */
    private static final Duration PING_CLOSE = PING_INTERVAL.plus(PING_TIMEOUT.multipliedBy(MAX_MISSED_PINGS));

    private static final int BATCH = 200;
    private static final long CHAT_PERIOD_MS = 100;
    /** Chatty and answering clients must survive at least this long after the last connect. */
    private static final Duration HOLD = Duration.ofSeconds(6);
    /** ...and each answering client at least this many pings. */
    private static final int MIN_PINGS_ANSWERED = 3;
    /** The most any wait may take before the test fails: generous, for a loaded 2-core machine. */
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private static final int IDLE_SERVER = 0;
    private static final int PING_SERVER = 1;

    enum Transport {
        NIO, EPOLL;

        boolean isAvailable() {
            return this == NIO || Epoll.isAvailable();
        }

        String unavailability() {
            return this == NIO ? "" : "epoll is not available here: " + Epoll.unavailabilityCause();
        }

        @SuppressWarnings("deprecation") // Netty 4.2 deprecates these groups; 4.1, the baseline, has no successor
        EventLoopGroup group(int threads, String name) {
            ThreadFactory threadFactory = new DefaultThreadFactory(name, true);
            return this == NIO ? new NioEventLoopGroup(threads, threadFactory)
                    : new EpollEventLoopGroup(threads, threadFactory);
        }

        Class<? extends ServerChannel> serverChannel() {
            return this == NIO ? NioServerSocketChannel.class : EpollServerSocketChannel.class;
        }

        Class<? extends Channel> clientChannel() {
            return this == NIO ? NioSocketChannel.class : EpollSocketChannel.class;
        }
    }

    /** The client kinds: 2,200 clients and so 4,400 sockets per transport. */
    enum Kind {
        SILENT(IDLE_SERVER, IDLE, 800),
        CHATTY(IDLE_SERVER, null, 300),
        ANSWERING(PING_SERVER, null, 300),
        SILENT_TO_PINGS(PING_SERVER, PING_CLOSE, 800);

        final int server;
        /** When the server closes this kind, at the earliest; null: never. */
        final Duration closedAfter;
        final int count;

        Kind(int server, Duration closedAfter, int count) {
            this.server = server;
            this.closedAfter = closedAfter;
            this.count = count;
        }

        boolean closedByServer() {
            return closedAfter != null;
        }
    }

    private final List<EventLoopGroup> groups = new ArrayList<>();
    private HeartbeatMonitor monitor;

    @AfterEach
    void tearDown() {
        for (EventLoopGroup group : groups) {
            group.shutdownGracefully(0, 5, TimeUnit.SECONDS);
        }
        for (EventLoopGroup group : groups) {
            group.terminationFuture().awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
        if (monitor != null) {
            monitor.close();
        }
    }

    // ------------------------------------------------------------------ the server side

    /**
     * A server-side connection: when its pipeline was set up (just before Heartbeat's clock starts)
     * and when it closed, in System.nanoTime.
     */
    static final class Accepted {
        final int server;
        volatile long activeAt;
        volatile long closedAt;

        Accepted(int server) {
            this.server = server;
        }
    }


    /** Last in a child pipeline: counts the lines the clients send. */
    @ChannelHandler.Sharable
    static final class LineCounter extends ChannelInboundHandlerAdapter {
        final LongAdder lines = new LongAdder();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            lines.increment(); // a String: nothing to release
        }
    }

    private SocketAddress bind(Transport transport, EventLoopGroup boss, EventLoopGroup workers, int server,
            HeartbeatConfig config, Queue<Accepted> accepted, LineCounter counter) {
        StringEncoder encoder = new StringEncoder(US_ASCII);
        StringDecoder decoder = new StringDecoder(US_ASCII);
        return new ServerBootstrap()
                .group(boss, workers)
                .channel(transport.serverChannel())
                .option(ChannelOption.SO_BACKLOG, 4096)
                .childHandler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        // Before the handler is added: an accepted channel is active already, so
                        // Heartbeat starts its clock in handlerAdded, before channelActive.
                        Accepted a = new Accepted(server);
                        a.activeAt = System.nanoTime();
                        ch.closeFuture().addListener(f -> a.closedAt = System.nanoTime());
                        accepted.add(a);
                        ch.pipeline().addLast(monitor.newHandler(config), new LineBasedFrameDecoder(64), decoder,
                                encoder, counter);
                    }
                })
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).syncUninterruptibly()
                .channel().localAddress();
    }

    // ------------------------------------------------------------------ the client side

    /** One client connection and what it saw, in System.nanoTime. */
    static final class Client {
        final int id;
        final Kind kind;
        final AtomicInteger pings = new AtomicInteger();
        final AtomicInteger pongs = new AtomicInteger();
        final AtomicInteger otherLines = new AtomicInteger();
        Channel channel;
        long connectStart;
        volatile long connectedAt;
        volatile long closedAt;
        volatile Throwable error;
        /** Chatty clients: when the latest line was sent, and the longest time between two. */
        volatile long lastSentAt;
        volatile long longestSilence;

        Client(int id, Kind kind) {
            this.id = id;
            this.kind = kind;
        }

        ChannelFuture connect(Bootstrap bootstrap, SocketAddress server) {
            connectStart = System.nanoTime();
            ChannelFuture connecting = bootstrap.clone().handler(new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                    ch.pipeline().addLast(new LineBasedFrameDecoder(64), new StringDecoder(US_ASCII),
                            new StringEncoder(US_ASCII), new ClientHandler(Client.this));
                }
            }).connect(server);
            channel = connecting.channel();
            connecting.addListener(f -> {
                if (f.isSuccess()) {
                    connectedAt = System.nanoTime();
                }
            });
            channel.closeFuture().addListener(f -> closedAt = System.nanoTime());
            return connecting;
        }

        boolean isClosed() {
            return closedAt != 0;
        }

        /** A chatty client sends a line; on its event loop. */
        void chatted() {
            long now = System.nanoTime();
            longestSilence = Math.max(longestSilence, now - lastSentAt);
            lastSentAt = now;
        }

        /**
         * Whether a chatty client fell silent by itself for as long as the idle timeout (its own event
         * loop stalled, on an overloaded machine), so that the server may rightly have closed it.
         */
        boolean fellSilent() {
            if (kind != Kind.CHATTY) {
                return false;
            }
            long end = isClosed() ? closedAt : System.nanoTime();
            return Math.max(longestSilence, end - lastSentAt) >= IDLE.toNanos();
        }

        /** A lively client that was closed although it kept up its side. */
        boolean wronglyClosed() {
            return !kind.closedByServer() && isClosed() && !fellSilent();
        }

        long livedMillis() {
            return TimeUnit.NANOSECONDS.toMillis(closedAt - connectStart);
        }

        @Override
        public String toString() {
            return kind + "#" + id + (isClosed() ? " closed " + livedMillis() + " ms after connecting" : " open")
                    + ", pings " + pings + (error == null ? "" : ", error " + error);
        }
    }

    /** The client's behaviour: chatty clients chat, answering clients answer pings; all count what they get. */
    static final class ClientHandler extends ChannelInboundHandlerAdapter {
        private final Client client;
        private ScheduledFuture<?> chatter;

        ClientHandler(Client client) {
            this.client = client;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            if (client.kind == Kind.CHATTY) {
                client.lastSentAt = System.nanoTime();
                long first = ThreadLocalRandom.current().nextLong(CHAT_PERIOD_MS);
                chatter = ctx.executor().scheduleAtFixedRate(() -> {
                    client.chatted();
                    ctx.writeAndFlush("HELLO\n");
                }, first, CHAT_PERIOD_MS, TimeUnit.MILLISECONDS);
            }
            ctx.fireChannelActive();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if ("PING".equals(msg)) {
                client.pings.incrementAndGet();
                if (client.kind == Kind.ANSWERING) {
                    client.pongs.incrementAndGet();
                    ctx.writeAndFlush("PONG\n");
                }
            } else {
                client.otherLines.incrementAndGet();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (chatter != null) {
                chatter.cancel(false);
            }
            ctx.fireChannelInactive();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            client.error = cause;
            ctx.close();
        }
    }

    // ------------------------------------------------------------------ the test

    @ParameterizedTest(name = "{0}")
    @EnumSource(Transport.class)
    @Timeout(value = 100, unit = TimeUnit.SECONDS)
    void closesSilentPeersAndKeepsLivelyOnes(Transport transport) throws Exception {
        run(transport, false);
    }

    /** The same with the monitor's cycles hosted by one of the server's event loops. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Transport.class)
    @Timeout(value = 100, unit = TimeUnit.SECONDS)
    void closesSilentPeersAndKeepsLivelyOnesWhenHostedByAnEventLoop(Transport transport) throws Exception {
        run(transport, true);
        assertTrue(monitor.stats().timer().hostedNanos() > 0, "the cycles ran on the host loop");
        System.out.printf("%s, hosted: %d cycles, %d host take-overs by the watchdog%n", transport,
                monitor.stats().timer().cycles(), monitor.stats().timer().hostTakeovers());
    }

    private void run(Transport transport, boolean hosted) throws Exception {
        assumeTrue(transport.isAvailable(), transport::unavailability);
        long testStart = System.nanoTime();
        EventLoopGroup clientGroup = transport.group(2, "loopback-client-" + transport);
        EventLoopGroup boss = transport.group(1, "loopback-boss-" + transport);
        EventLoopGroup workers = transport.group(2, "loopback-server-" + transport);
        groups.addAll(List.of(clientGroup, workers, boss));
        monitor = hosted ? HeartbeatMonitor.builder().hostedBy(workers.next()).build().startWorker()
                : HeartbeatMonitor.start();

        Queue<Accepted> accepted = new ConcurrentLinkedQueue<>();
        LineCounter lines = new LineCounter();
        SocketAddress[] servers = new SocketAddress[2];
        servers[IDLE_SERVER] = bind(transport, boss, workers, IDLE_SERVER,
                HeartbeatConfig.closeWhenIdle().readerIdle(IDLE).build(), accepted, lines);
        servers[PING_SERVER] = bind(transport, boss, workers, PING_SERVER,
                HeartbeatConfig.ping(ch -> "PING\n").interval(PING_INTERVAL).timeout(PING_TIMEOUT)
                        .maxMissedPings(MAX_MISSED_PINGS).build(), accepted, lines);

        // Connect in batches, the kinds interleaved.
        List<Kind> kinds = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            kinds.addAll(Collections.nCopies(kind.count, kind));
        }
        Collections.shuffle(kinds, new Random(20261121));
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < kinds.size(); i++) {
            clients.add(new Client(i, kinds.get(i)));
        }
        Bootstrap bootstrap = new Bootstrap()
                .group(clientGroup)
                .channel(transport.clientChannel())
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) DEADLINE.toMillis());
        for (int from = 0; from < clients.size(); from += BATCH) {
            List<ChannelFuture> batch = new ArrayList<>();
            for (Client c : clients.subList(from, Math.min(from + BATCH, clients.size()))) {
                batch.add(c.connect(bootstrap, servers[c.kind.server]));
            }
            for (ChannelFuture f : batch) {
                assertTrue(f.awaitUninterruptibly(DEADLINE.toMillis()), "connect timed out");
                assertTrue(f.isSuccess(), () -> "connect failed: " + f.cause());
            }
        }
        long lastConnected = clients.stream().mapToLong(c -> c.connectedAt).max().orElseThrow();
        long connectMillis = TimeUnit.NANOSECONDS.toMillis(lastConnected - testStart);

        // Every silent client is closed; the lively ones stay for a while and answer their pings.
        awaitTrue("every silent client closed by the server",
                () -> clients.stream().filter(c -> c.kind.closedByServer()).allMatch(Client::isClosed));
        long holdUntil = lastConnected + HOLD.toNanos();
        awaitTrue("the lively clients held on for " + HOLD + " and answered " + MIN_PINGS_ANSWERED + " pings each",
                () -> clients.stream().anyMatch(Client::wronglyClosed)
                        || (System.nanoTime() - holdUntil >= 0 && clients.stream()
                                .filter(c -> c.kind == Kind.ANSWERING)
                                .allMatch(c -> c.pings.get() >= MIN_PINGS_ANSWERED)));

        assertNone("lively clients closed although they kept up their side", clients, Client::wronglyClosed);
        assertNone("clients with errors", clients, c -> c.error != null && !c.fellSilent());
        assertNone("clients that got lines other than PING", clients, c -> c.otherLines.get() != 0);
        assertNone("silent clients closed before their timeout had passed since they started to connect",
                clients, c -> c.kind.closedByServer() && c.closedAt - c.connectStart < c.kind.closedAfter.toNanos());
        assertNone("silent clients of the idle server that were pinged", clients,
                c -> c.kind == Kind.SILENT && c.pings.get() != 0);
        assertNone("silent clients of the ping server not pinged exactly " + MAX_MISSED_PINGS + " times",
                clients, c -> c.kind == Kind.SILENT_TO_PINGS && c.pings.get() != MAX_MISSED_PINGS);
        assertNone("answering clients pinged fewer than " + MIN_PINGS_ANSWERED + " times", clients,
                c -> c.kind == Kind.ANSWERING && c.pings.get() < MIN_PINGS_ANSWERED);

        // Chatty clients that fell silent by themselves count as silent ones; wait until every close in
        // flight has reached both ends, so that the counts below are taken at rest.
        long silentCount = (long) Kind.SILENT.count + Kind.SILENT_TO_PINGS.count;
        List<Accepted> serverSide = new ArrayList<>(accepted);
        BooleanSupplier atRest = () -> {
            long fellSilent = clients.stream().filter(c -> c.isClosed() && c.fellSilent()).count();
            return monitor.stats().closedTotal() == silentCount + fellSilent
                    && serverSide.stream().filter(a -> a.closedAt != 0).count() == silentCount + fellSilent;
        };
        long restDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!atRest.getAsBoolean() && System.nanoTime() - restDeadline < 0) {
            Thread.sleep(20);
        }
        long fellSilent = clients.stream().filter(c -> c.isClosed() && c.fellSilent()).count();

        // Server side: exactly the silent connections are closed, none before its timeout.
        assertEquals(clients.size(), serverSide.size(), "every connection became active on the server");
        long[] worstLateMillis = new long[2];
        for (Kind silent : new Kind[] {Kind.SILENT, Kind.SILENT_TO_PINGS}) {
            int server = silent.server;
            Duration timeout = silent.closedAfter;
            List<Accepted> closed = serverSide.stream().filter(a -> a.server == server && a.closedAt != 0)
                    .collect(Collectors.toList());
            assertEquals(silent.count + (silent == Kind.SILENT ? fellSilent : 0), closed.size(),
                    "connections the server " + server + " closed");
            long early = closed.stream().filter(a -> a.closedAt - a.activeAt < timeout.toNanos()).count();
            assertEquals(0, early, "server " + server + " closed connections before " + timeout);
            worstLateMillis[server] = TimeUnit.NANOSECONDS.toMillis(closed.stream()
                    .mapToLong(a -> a.closedAt - a.activeAt - timeout.toNanos()).max().orElseThrow());
        }

        long pingsReceived = clients.stream().mapToLong(c -> c.pings.get()).sum();
        // A ping is counted as sent when its write completes, on the server's event loop, which a
        // client may beat by reading it first: let every loop finish what it is doing before counting.
        for (EventLoopGroup group : groups) {
            for (io.netty.util.concurrent.EventExecutor loop : group) {
                loop.submit(() -> { }).syncUninterruptibly();
            }
        }
        HeartbeatStats stats = monitor.stats();
        assertEquals(Kind.SILENT.count + fellSilent, stats.closedReaderIdle(), stats::toString);
        assertEquals(Kind.SILENT_TO_PINGS.count, stats.closedPingTimeout(), stats::toString);
        assertEquals(silentCount + fellSilent, stats.closedTotal(), stats::toString);
        assertEquals(clients.size() - silentCount - fellSilent, stats.channels(),
                () -> "the lively connections are tracked: " + stats);
        assertTrue(stats.pingsSent() >= pingsReceived, () -> "pings sent " + stats.pingsSent()
                + " >= pings received " + pingsReceived);
        assertEquals(0, stats.actionFailures(), stats::toString);
        assertEquals(0, stats.dispatchRejected(), stats::toString);
        assertTrue(lines.lines.sum() >= Kind.CHATTY.count, "the chatty clients' lines arrived");

        // Every client leaves: the monitor lets go of every channel and every wheel entry.
        for (Client c : clients) {
            c.channel.close();
        }
        awaitTrue("every server-side connection closed", () -> serverSide.stream().allMatch(a -> a.closedAt != 0));
        awaitTrue("no channel and no wheel entry left",
                () -> monitor.stats().channels() == 0 && monitor.stats().timer().entries() == 0);
        assertEquals(silentCount + fellSilent, monitor.stats().closedTotal(),
                "the clients' own closes are not idle closes");

        System.out.printf("%s: %d connections in %d ms; %d chatty clients fell silent themselves; idle closes late "
                + "by at most %d ms (idle) and %d ms (pings) after their timeout; %d pings sent; worker lateness at "
                + "most %d us; whole test %d ms%n",
                transport, clients.size(), connectMillis, fellSilent,
                worstLateMillis[IDLE_SERVER], worstLateMillis[PING_SERVER],
                monitor.stats().pingsSent(),
                TimeUnit.NANOSECONDS.toMicros(monitor.stats().timer().worstLatenessNanos()),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - testStart));
    }

    // ------------------------------------------------------------------ helpers

    private static void assertNone(String what, List<Client> clients, Predicate<Client> bad) {
        List<Client> found = clients.stream().filter(bad).collect(Collectors.toList());
        if (!found.isEmpty()) {
            fail(found.size() + " " + what + ", for example " + found.subList(0, Math.min(5, found.size())));
        }
    }

    private static void awaitTrue(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("not within " + DEADLINE.toSeconds() + " s: " + what);
            }
            Thread.sleep(20);
        }
    }
}
