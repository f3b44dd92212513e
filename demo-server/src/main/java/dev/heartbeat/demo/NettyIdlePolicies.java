/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.util.concurrent.TimeUnit;

import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.HeartbeatCloseEvent;
import dev.heartbeat.netty.Probe;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.mqtt.MqttConnectMessage;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * The {@code --idle-impl netty} baseline: the handlers that go right after Netty's
 * {@code IdleStateHandler} (reader idle only) and give it the semantics of Heartbeat's policies,
 * counting into the same {@link DemoCounters} so both impls show the same metrics, and firing
 * Heartbeat's own {@link HeartbeatCloseEvent} before each close, so the protocols' goodbyes are the
 * same too.
 */
final class NettyIdlePolicies {

    private NettyIdlePolicies() {
    }

    /** Close policy: close on the reader-idle event. */
    @ChannelHandler.Sharable
    static final class CloseOnIdle extends ChannelInboundHandlerAdapter {
        private final DemoCounters counters;

        CloseOnIdle(DemoCounters counters) {
            this.counters = counters;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                if (((IdleStateEvent) evt).state() == IdleState.READER_IDLE && ctx.channel().isOpen()) {
                    counters.closedReaderIdle.increment();
                    close(ctx, CloseReason.READER_IDLE);
                }
                return;
            }
            ctx.fireUserEventTriggered(evt);
        }
    }

    /** Event policy: count the events by kind, and pass them on as Heartbeat's event policy does. */
    @ChannelHandler.Sharable
    static final class CountEvents extends ChannelInboundHandlerAdapter {
        private final DemoCounters counters;

        CountEvents(DemoCounters counters) {
            this.counters = counters;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                switch (((IdleStateEvent) evt).state()) {
                    case READER_IDLE:
                        counters.readerIdleEvents.increment();
                        break;
                    case WRITER_IDLE:
                        counters.writerIdleEvents.increment();
                        break;
                    default:
                        counters.allIdleEvents.increment();
                        break;
                }
            }
            ctx.fireUserEventTriggered(evt);
        }
    }

    /** Says why (the event goes to the handlers after this one), then closes. */
    private static void close(ChannelHandlerContext ctx, CloseReason reason) {
        ctx.fireUserEventTriggered(HeartbeatCloseEvent.of(reason));
        ctx.close();
    }

    /**
     * Ping policy, one per channel, as Heartbeat's: {@code IdleStateHandler} fires reader idle after
     * {@code interval} without a read; then the probe's ping (a PING line, a WebSocket Ping, an HTTP/2
     * PING) is written and awaits an answer (any read) for {@code timeout}. Each unanswered ping counts
     * as missed; on the {@code maxMissedPings}-th the channel is closed, otherwise another ping is
     * written. Placed where Heartbeat's handler goes (before the line decoder, before the WebSocket
     * protocol handler, after the HTTP/2 codec), so any inbound message answers, as with Heartbeat's
     * {@code ANY_INBOUND}. The time from a ping to the read that answered it goes to {@link PingRtt}.
     */
    static final class PingOnIdle extends ChannelInboundHandlerAdapter implements Runnable {
        private final DemoCounters counters;
        private final long timeoutNanos;
        private final int maxMissedPings;
        private final Probe probe;
        private final PingRtt rtt;

        private ChannelHandlerContext ctx;
        private boolean awaitingAnswer;
        private int missed;
        private ScheduledFuture<?> answerDeadline;
        private long token;
        private long pingWrittenAt;

        PingOnIdle(DemoCounters counters, long timeoutNanos, int maxMissedPings, Probe probe, PingRtt rtt) {
            this.counters = counters;
            this.timeoutNanos = timeoutNanos;
            this.maxMissedPings = maxMissedPings;
            this.probe = probe;
            this.rtt = rtt;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (awaitingAnswer) {
                rtt.record(System.nanoTime() - pingWrittenAt);
                answered();
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                // Later reader-idle events while a ping waits are ignored: the answer deadline rules.
                if (((IdleStateEvent) evt).state() == IdleState.READER_IDLE && !awaitingAnswer) {
                    awaitingAnswer = true;
                    missed = 0;
                    sendPing();
                }
                return;
            }
            ctx.fireUserEventTriggered(evt);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            answered();
            ctx.fireChannelInactive();
        }

        /** The answer deadline passed without a read. */
        @Override
        public void run() {
            answerDeadline = null;
            if (!awaitingAnswer || !ctx.channel().isOpen()) {
                return;
            }
            if (++missed >= maxMissedPings) {
                awaitingAnswer = false;
                counters.closedPingTimeout.increment();
                close(ctx, CloseReason.PING_TIMEOUT);
            } else {
                sendPing();
            }
        }

        private void sendPing() {
            Object ping;
            try {
                ping = probe.newPing(ctx, token++);
            } catch (Exception e) {
                ctx.fireExceptionCaught(e);
                return;
            }
            counters.pingsSent.increment();
            pingWrittenAt = System.nanoTime();
            ctx.channel().writeAndFlush(ping, ctx.channel().voidPromise()); // from the tail: every encoder sees it
            answerDeadline = ctx.executor().schedule(this, timeoutNanos, TimeUnit.NANOSECONDS);
        }

        private void answered() {
            awaitingAnswer = false;
            missed = 0;
            ScheduledFuture<?> deadline = answerDeadline;
            if (deadline != null) {
                answerDeadline = null;
                deadline.cancel(false);
            }
        }
    }

    /**
     * MQTT's keep-alive rule for the netty impl, right after {@code MqttDecoder}, as Heartbeat's
     * {@code MqttKeepAlive}: on the first CONNECT it replaces the channel's {@code IdleStateHandler}
     * (the deadline for CONNECT) by one that fires after {@link ServerConfig#MQTT_MULTIPLIER} times the
     * Keep Alive without a read, for the {@link CloseOnIdle} after it; Keep Alive 0 removes both (no
     * timeout, as the specification says). Then it removes itself. Sharable.
     */
    @ChannelHandler.Sharable
    static final class MqttKeepAliveSwitch extends ChannelInboundHandlerAdapter {
        private static final double NANOS_PER_SECOND = 1e9;

        private final String idleName;
        private final String policyName;

        MqttKeepAliveSwitch(String idleName, String policyName) {
            this.idleName = idleName;
            this.policyName = policyName;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof MqttConnectMessage connect && connect.decoderResult().isSuccess()) {
                ChannelPipeline p = ctx.pipeline();
                p.remove(this);
                int keepAlive = connect.variableHeader().keepAliveTimeSeconds();
                if (keepAlive > 0) {
                    long nanos = (long) Math.ceil(keepAlive * ServerConfig.MQTT_MULTIPLIER * NANOS_PER_SECOND);
                    p.replace(idleName, idleName, new IdleStateHandler(false, nanos, 0, 0, TimeUnit.NANOSECONDS));
                } else {
                    p.remove(idleName);
                    p.remove(policyName);
                }
            }
            ctx.fireChannelRead(msg);
        }
    }
}
