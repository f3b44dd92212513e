package dev.heartbeat.loadtest;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

/**
 * A client process of a TCP run: opens its share of the connections to the demo servers, each bound
 * to one of its own source addresses, plays their roles, and reports to the coordinator
 * ({@link TcpCoordinator}) through {@link ParentLink}. Started by the coordinator as
 * {@code java -cp load-test.jar dev.heartbeat.loadtest.ClientWorker SPEC_JSON}; not meant
 * to be run by hand.
 *
 * <p>Protocol: prints {@code progress} every 500 ms, {@code connected} once its connections are up,
 * then waits for {@code run START END}; at END prints {@code result}, then waits for {@code exit}
 * and closes everything.
 */
public final class ClientWorker {

    private ClientWorker() {
    }

    /** The spec the coordinator passes as the one argument. */
    static Map<String, Object> spec(Scenario scenario, String impl, int from, int to, List<String> servers,
            List<String> sources, int threads, double connectRate, long deadlineNanos) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", scenario.toJson());
        m.put("impl", impl);
        m.put("from", (long) from);
        m.put("to", (long) to);
        m.put("servers", new ArrayList<Object>(servers));
        m.put("sources", new ArrayList<Object>(sources));
        m.put("threads", (long) threads);
        m.put("connect_rate", connectRate);
        m.put("deadline_ns", deadlineNanos);
        return m;
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: ClientWorker SPEC_JSON (started by the load test, not by hand)");
            System.exit(2);
        }
        Map<String, Object> spec = Json.parseObject(args[0]);
        ParentLink link = ParentLink.start(Json.getLong(spec, "deadline_ns"));
        try {
            run(spec, link);
            System.exit(0);
        } catch (Throwable t) {
            t.printStackTrace();
            link.sendError(t);
            System.exit(1);
        }
    }

    private static void run(Map<String, Object> spec, ParentLink link) throws Exception {
        Scenario scenario = Scenario.fromJson(Json.getObject(spec, "scenario"));
        String impl = Json.getString(spec, "impl");
        int from = (int) Json.getLong(spec, "from");
        int to = (int) Json.getLong(spec, "to");
        List<InetSocketAddress> servers = new ArrayList<>();
        for (Object s : Json.getList(spec, "servers")) {
            servers.add(TcpLayout.parseHostPort(String.valueOf(s)));
        }
        List<InetSocketAddress> sources = new ArrayList<>();
        for (Object s : Json.getList(spec, "sources")) {
            sources.add(new InetSocketAddress(String.valueOf(s), 0));
        }
        int threads = (int) Json.getLong(spec, "threads");
        double rate = Json.getDouble(spec, "connect_rate");
        long deadline = Json.getLong(spec, "deadline_ns");

        boolean epoll = Epoll.isAvailable();
        EventLoopGroup group = newGroup(epoll, threads);
        Class<? extends Channel> channelClass = epoll ? EpollSocketChannel.class : NioSocketChannel.class;
        SocketAddress[] remotes = servers.toArray(new SocketAddress[0]);
        SocketAddress[] locals = sources.toArray(new SocketAddress[0]);
        ClientDriver driver = new ClientDriver(scenario, impl, from, to, group, channelClass,
                i -> remotes[i % remotes.length], locals.length == 0 ? null : i -> locals[(i - from) % locals.length],
                true);
        try {
            AtomicReference<String> phase = new AtomicReference<>("connecting");
            link.sendEvery(500, () -> driver.progress().toJson(phase.get()));
            driver.connectAll(rate, deadline);
            Map<String, Object> connected = new LinkedHashMap<>();
            connected.put("connected", driver.progress().connected.sum());
            connected.put("failed", driver.progress().failed.sum());
            connected.put("transport", epoll ? "epoll" : "nio");
            link.send("connected", connected);
            phase.set("connected");

            String[] run = link.awaitCommand("run", Math.max(1, deadline - System.nanoTime())).split(" ");
            long start = Long.parseLong(run[1]);
            long end = Long.parseLong(run[2]);
            driver.startRun(start, end);
            phase.set("running");
            ParentLink.sleepUntil(end);
            ClientResult result = driver.finish(TimeUnit.SECONDS.toNanos(30));
            phase.set("finished");
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("result", result.toJson());
            link.send("result", fields);

            link.awaitCommand("exit", Math.max(1, deadline - System.nanoTime()));
            driver.closeAll(TimeUnit.SECONDS.toNanos(5));
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
        }
    }

    // EpollEventLoopGroup and NioEventLoopGroup are deprecated in Netty 4.2 (in favour of
    // MultiThreadIoEventLoopGroup, which 4.1 lacks); the load test builds against both, as the demo server.
    @SuppressWarnings("deprecation")
    private static EventLoopGroup newGroup(boolean epoll, int threads) {
        DefaultThreadFactory factory = new DefaultThreadFactory("client-loop", true);
        return epoll ? new EpollEventLoopGroup(threads, factory) : new NioEventLoopGroup(threads, factory);
    }
}
