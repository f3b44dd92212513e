/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.HeartbeatHandler;
import dev.heartbeat.netty.engine.Plan;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.Executor;

import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.SingleThreadEventExecutor;

/**
 * What the netty-side jcstress tests share: one monitor that is never started (its worker thread
 * never runs; the tests play the worker themselves), two configurations, and handlers outside any
 * pipeline, made with the package-private constructor.
 */
final class Fixture {

    /**
     * The time the monitor's ticker reads on the calling thread: an actor sets it, then calls real
     * event-loop code that stamps from the ticker ({@link HeartbeatHandler#resetReadTimeout}).
     */
    private static final ThreadLocal<long[]> NOW = ThreadLocal.withInitial(() -> new long[1]);

    static final HeartbeatMonitor MONITOR = HeartbeatMonitor.builder().manual()
            .ticker(() -> NOW.get()[0])
            .threadName("jcstress-unstarted")
            .build();
    static final Plan CONFIG_A = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(1)).build().plan;
    static final Plan CONFIG_B = HeartbeatConfig.events().readerIdle(Duration.ofSeconds(2)).build().plan;

    private Fixture() {
    }

    /** Sets what the monitor's ticker reads on this thread. */
    static void setNow(long nanos) {
        NOW.get()[0] = nanos;
    }

    static HeartbeatHandler handler() {
        return new HeartbeatHandler(MONITOR.engine, CONFIG_A);
    }

    /**
     * A stand-in for an event loop and a handler's context, counting calls: {@code execute} (a batch
     * submitted) and {@code executor} (once per {@link HeartbeatHandler#perform}, which starts with
     * it). Its executor is always in its event loop. Counts are plain: read them in the arbiter.
     */
    static final class Stub implements InvocationHandler {
        private final EventExecutor executor;
        int executes;
        int executorCalls;

        private Stub(EventExecutor executor) {
            this.executor = executor;
        }

        /** An event loop that counts the tasks submitted to it and never runs them. */
        static Stub eventLoop() {
            return new Stub(null);
        }

        /** A context on {@code loop}, counting {@code executor()} calls. */
        static Stub context(EventExecutor loop) {
            return new Stub(loop);
        }

        EventExecutor asExecutor() {
            return (EventExecutor) Proxy.newProxyInstance(Fixture.class.getClassLoader(),
                    new Class<?>[] {EventExecutor.class}, this);
        }

        ChannelHandlerContext asContext() {
            return (ChannelHandlerContext) Proxy.newProxyInstance(Fixture.class.getClassLoader(),
                    new Class<?>[] {ChannelHandlerContext.class}, this);
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) {
            switch (method.getName()) {
                case "execute":
                    executes++;
                    return null;
                case "executor":
                    executorCalls++;
                    return executor;
                case "inEventLoop":
                    return true;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "stub";
                default:
                    throw new UnsupportedOperationException(method.getName());
            }
        }
    }

    /**
     * An event loop that tells its two hand-offs apart, as a Netty loop does: {@code execute} (wakes
     * it) and {@code lazyExecute} (does not). It never runs what it is handed; it keeps the latest
     * task handed with {@code execute} for the arbiter. Always in its event loop; its thread never
     * starts. Plain fields: read them in the arbiter.
     */
    static final class LazyLoop extends SingleThreadEventExecutor {
        int executes;
        int lazyExecutes;
        Runnable executed;

        LazyLoop() {
            super(null, (Executor) command -> {
                throw new IllegalStateException("never started: both hand-offs are overridden");
            }, false);
        }

        @Override
        protected void run() {
            // never started
        }

        @Override
        public void execute(Runnable task) {
            executes++;
            executed = task;
        }

        @Override
        public void lazyExecute(Runnable task) {
            lazyExecutes++;
        }

        @Override
        public boolean inEventLoop(Thread thread) {
            return true;
        }
    }
}
