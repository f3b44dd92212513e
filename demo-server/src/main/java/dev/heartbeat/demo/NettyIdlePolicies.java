/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.demo;

import java.util.concurrent.TimeUnit;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleState;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.concurrent.ScheduledFuture;

/**
 * The {@code --idle-impl netty} baseline: the handlers that go right after Netty's
 * {@code IdleStateHandler} (reader idle only) and give it the semantics of Heartbeat's policies,
 * counting into the same {@link DemoCounters} so both impls show the same metrics.
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
                    ctx.close();
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

    /**
     * Ping policy, one per channel, as Heartbeat's: {@code IdleStateHandler} fires reader idle after
     * {@code interval} without a read; then PING is written and awaits an answer (any read) for
     * {@code timeout}. Each unanswered ping counts as missed; on the {@code maxMissedPings}-th the
     * channel is closed, otherwise another PING is written. Placed before the line decoder, so any
     * inbound bytes answer, as with Heartbeat.
     */
    static final class PingOnIdle extends ChannelInboundHandlerAdapter implements Runnable {
        private final DemoCounters counters;
        private final long timeoutNanos;
        private final int maxMissedPings;

        private ChannelHandlerContext ctx;
        private boolean awaitingAnswer;
        private int missed;
        private ScheduledFuture<?> answerDeadline;

        PingOnIdle(DemoCounters counters, long timeoutNanos, int maxMissedPings) {
            this.counters = counters;
            this.timeoutNanos = timeoutNanos;
            this.maxMissedPings = maxMissedPings;
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (awaitingAnswer) {
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
                ctx.close();
            } else {
                sendPing();
            }
        }

        private void sendPing() {
            counters.pingsSent.increment();
            ctx.channel().writeAndFlush(LineHandler.pingLine(), ctx.channel().voidPromise());
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
}
