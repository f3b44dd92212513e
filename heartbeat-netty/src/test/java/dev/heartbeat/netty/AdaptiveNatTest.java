/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.heartbeat.netty.probe.Probes;
import java.io.IOException;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.heartbeat.core.ManualTicker;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.util.ReferenceCountUtil;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A client wired as the README shows ({@code ping(Probes.http2()).whenWriterIdle().adaptiveInterval(tuner)},
 * the tuner's defaults) on one long-lived connection behind a NAT that forgets a mapping idle longer
 * than its timeout, for 24 hours of virtual time in steps of 1 s. The NAT sees every message either
 * way; a message that meets a forgotten mapping is dropped (the silent NAT: the ping goes unanswered,
 * the channel closes for PING_TIMEOUT) or answered with a reset (the channel is closed by the
 * transport). The client reconnects only when the NAT killed its connection. The server answers a
 * ping 1 s later and pushes a message every 10,000 s.
 */
class AdaptiveNatTest {

    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
    private static final int DAY_SECONDS = 24 * 3600;
    private static final int PUSH_EVERY_SECONDS = 10_000;

    /** What one day behind the NAT came to. */
    private record Day(Duration end, double meanLastHalf, int drops, int resets, long pings) {
    }

    /** Swallows what reaches the end of the pipeline: the server's pushes and the reset's exception. */
    private static final class Sink extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ReferenceCountUtil.release(msg);
        }

        @Override
        @SuppressWarnings("deprecation")
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // the reset's IOException: the transport closes the channel next
        }
    }

    /** The client, its NAT and the server, in one virtual clock. */
    private static final class NatWorld {
        final ManualTicker ticker = new ManualTicker(Long.MAX_VALUE - 3 * SECOND); // wraps early in the day
        final HeartbeatMonitor monitor = HeartbeatMonitor.builder().ticker(ticker).maxCoalescing(Duration.ZERO)
                .stallThreshold(Duration.ofMinutes(1)).build(); // 1 s steps are not a stalled worker
        final AdaptiveKeepAlive<SocketAddress> tuner = AdaptiveKeepAlive.builder().build();
        final HeartbeatConfig cfg = HeartbeatConfig.ping(Probes.http2()).interval(Duration.ofSeconds(30))
                .timeout(Duration.ofSeconds(5)).maxMissedPings(1).whenWriterIdle().adaptiveInterval(tuner).build();
        final long natTimeout;
        final boolean resets;
        EmbeddedChannel ch;
        /** Ticker time of the latest message through the mapping, either way. */
        long lastPacket;
        /** The mapping was forgotten: everything through it is dropped until the client reconnects. */
        boolean forgotten;
        /** The server's answer to the ping it got a second ago, or null. */
        Object answer;
        int drops;
        int resetCount;
        long pings;

        NatWorld(Duration natTimeout, boolean resets) {
            this.natTimeout = natTimeout.toNanos();
            this.resets = resets;
        }

        Day run() {
            connect();
            double sumLastHalf = 0;
            for (int s = 1; s <= DAY_SECONDS; s++) {
                ticker.advance(SECOND);
                monitor.runOnce();
                ch.runPendingTasks();
                if (answer != null) {
                    Object a = answer;
                    answer = null;
                    if (passes()) {
                        ch.writeInbound(a);
                    } else {
                        ReferenceCountUtil.release(a);
                    }
                }
                if (s % PUSH_EVERY_SECONDS == PUSH_EVERY_SECONDS / 2 && passes()) {
                    ch.writeInbound("server push");
                }
                for (Object out = ch.readOutbound(); out != null && ch.isOpen(); out = ch.readOutbound()) {
                    outbound(out);
                }
                ch.runPendingTasks();
                if (!ch.isOpen()) {
                    drops++;
                    ch.finishAndReleaseAll();
                    connect();
                }
                if (s > DAY_SECONDS / 2) {
                    sumLastHalf += monitor.configOf(ch).pingInterval().toMillis() / 1000.0;
                }
            }
            Day day = new Day(monitor.configOf(ch).pingInterval(), sumLastHalf / (DAY_SECONDS / 2), drops,
                    resetCount, pings);
            ch.finishAndReleaseAll();
            monitor.close();
            return day;
        }

        private void connect() {
            ch = new EmbeddedChannel(monitor.newHandler(cfg), new Sink());
            monitor.runOnce();
            lastPacket = ticker.nanoTime(); // the handshake made a fresh mapping
            forgotten = false;
            answer = null;
        }

        /** Whether a message gets through the NAT now; if it does, it refreshes the mapping. */
        private boolean passes() {
            long now = ticker.nanoTime();
            if (forgotten || now - lastPacket > natTimeout) {
                forgotten = true;
                return false;
            }
            lastPacket = now;
            return true;
        }

        private void outbound(Object out) {
            boolean ping = out instanceof Http2PingFrame f && !f.ack();
            if (ping) {
                pings++;
            }
            if (!passes()) {
                ReferenceCountUtil.release(out);
                if (resets) { // the NAT (or the server, for a segment it has no connection for) resets
                    resetCount++;
                    ch.pipeline().fireExceptionCaught(new IOException("Connection reset by peer"));
                    ch.unsafe().close(ch.unsafe().voidPromise());
                }
                return;
            }
            if (ping) {
                answer = new DefaultHttp2PingFrame(((Http2PingFrame) out).content(), true);
            } else {
                ReferenceCountUtil.release(out);
            }
        }
    }

    @ParameterizedTest(name = "NAT timeout {0} s, resets {1}")
    @CsvSource({"100, false", "290, false", "100, true", "290, true"})
    void aLongLivedConnectionLearnsItsNatsTimeoutOnItsOwnPings(int natSeconds, boolean resets) {
        Duration t = Duration.ofSeconds(natSeconds);
        NatWorld world = new NatWorld(t, resets);
        Day day = world.run();
        System.out.printf("AdaptiveNatTest: NAT %d s%s, 24 h: ends at %s (%.2f T), mean over the last 12 h %.1f s "
                + "(%.2f T), %d connections dropped (%d by reset), %d pings%n", natSeconds,
                resets ? " (resets)" : " (silent)", day.end(), day.end().toMillis() / 1000.0 / natSeconds,
                day.meanLastHalf(), day.meanLastHalf() / natSeconds, day.drops(), day.resets(), day.pings());
        assertTrue(day.end().compareTo(t.multipliedBy(8).dividedBy(10)) >= 0, "ends at " + day.end());
        assertTrue(day.meanLastHalf() >= 0.8 * natSeconds, "mean over the last 12 h " + day.meanLastHalf());
        // Two drops to find the ceiling, and two at each re-probe (after 100 successes at >= 0.8 T).
        int bound = 2 * (1 + DAY_SECONDS / (100 * natSeconds * 8 / 10));
        assertTrue(day.drops() <= bound, day.drops() + " drops, bound " + bound);
        assertEquals(resets ? day.drops() : 0, day.resets(), "every drop is of the NAT's kind");
    }
}
