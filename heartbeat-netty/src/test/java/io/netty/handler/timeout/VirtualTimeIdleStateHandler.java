/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package io.netty.handler.timeout;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.Future;

/**
 * Netty's own {@link IdleStateHandler}, unchanged, made to run in a test's virtual time and to
 * report every check it schedules. It lives in Netty's package only to reach two package-private
 * hooks:
 * <ul>
 * <li>{@code long ticksInNanos()}: Netty 4.1 reads its clock here ({@code System.nanoTime()});
 *     this class returns the test's virtual clock instead. It is declared without
 *     {@code @Override} on purpose: Netty 4.2 has no such method (it reads the executor's ticker,
 *     which {@code EmbeddedChannel.freezeTime()/advanceTimeBy()} move), so there it is simply
 *     unused and the class still compiles;</li>
 * <li>{@code schedule(ctx, task, delay, unit)}: on both versions every timeout task is
 *     (re)scheduled through it, which tells the test when each check runs.</li>
 * </ul>
 * The virtual clock must move in step with the channel's event loop clock (both are advanced
 * together by the test).
 */
public final class VirtualTimeIdleStateHandler extends IdleStateHandler {

    /** Told of every check the handler schedules. */
    @FunctionalInterface
    public interface CheckListener {
        /**
         * The handler scheduled a check of {@code state} {@code delayNanos} from now.
         *
         * @param state the kind of the timeout task, or null if Netty renamed its task classes
         */
        void scheduled(IdleState state, long delayNanos);
    }

    private final LongSupplier nanoClock;
    private final CheckListener listener;

    public VirtualTimeIdleStateHandler(boolean observeOutput, long readerIdleTime, long writerIdleTime,
            long allIdleTime, TimeUnit unit, LongSupplier nanoClock, CheckListener listener) {
        super(observeOutput, readerIdleTime, writerIdleTime, allIdleTime, unit);
        this.nanoClock = nanoClock;
        this.listener = listener;
    }

    /** Netty 4.1's clock hook (not an override on 4.2, which has no such method). */
    @SuppressWarnings("MissingOverride") // an @Override would not compile against Netty 4.2
    long ticksInNanos() {
        return nanoClock.getAsLong();
    }

    @Override
    Future<?> schedule(ChannelHandlerContext ctx, Runnable task, long delay, TimeUnit unit) {
        listener.scheduled(stateOf(task), unit.toNanos(delay));
        return super.schedule(ctx, task, delay, unit);
    }

    private static IdleState stateOf(Runnable task) {
        String name = task.getClass().getSimpleName();
        if (name.startsWith("Reader")) {
            return IdleState.READER_IDLE;
        }
        if (name.startsWith("Writer")) {
            return IdleState.WRITER_IDLE;
        }
        if (name.startsWith("All")) {
            return IdleState.ALL_IDLE;
        }
        return null;
    }
}
