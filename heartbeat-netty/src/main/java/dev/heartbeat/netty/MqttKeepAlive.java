/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.HeartbeatHandler;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.mqtt.MqttConnectMessage;

/**
 * The server side of MQTT's keep-alive: reads the Keep Alive a client announces in CONNECT and
 * switches the channel's Heartbeat handler to close the connection after {@code multiplier} times
 * that long without a packet from the client (MQTT 3.1.1 section 3.1.2.10, 5.0 section 3.1.2.10:
 * one and a half times). Only the idle policy changes: the channel's lifecycle settings (maximum
 * age, write stall, unwritable bound, goodbye, close veto) go on as they were (see
 * {@link #configFor(HeartbeatConfig, int)}). PINGREQ, like any packet, is traffic; answering it with PINGRESP stays the
 * application's job. MQTT has no server-initiated ping, so this is a timeout, not a {@link Probe}.
 *
 * <pre>{@code
 * MqttKeepAlive keepAlive = MqttKeepAlive.of(monitor);                  // sharable: one per server
 * HeartbeatConfig connectDeadline = HeartbeatConfig.closeWhenIdle()
 *         .readerIdle(Duration.ofSeconds(10)).build();                  // until CONNECT arrives
 * ch.pipeline().addLast("heartbeat", monitor.newHandler(connectDeadline));
 * ch.pipeline().addLast(new MqttDecoder(), MqttEncoder.INSTANCE);
 * ch.pipeline().addLast(keepAlive);                                     // right after MqttDecoder
 * ch.pipeline().addLast(new MyBroker());
 * }</pre>
 *
 * <table>
 * <caption>Settings</caption>
 * <tr><th>Setting</th><th>Default</th><th>Meaning</th></tr>
 * <tr><td>{@link Builder#multiplier}</td><td>1.5</td><td>the timeout is this times the Keep Alive
 *     (EMQX's {@code keepalive_multiplier}); in [1, 1000]</td></tr>
 * <tr><td>{@link Builder#whenKeepAliveDisabled}</td><td>none</td><td>the configuration for a
 *     client that announces Keep Alive 0; without one, the Heartbeat handler is removed</td></tr>
 * <tr><td>{@link Builder#handlerName}</td><td>none</td><td>the Heartbeat handler's name, for
 *     pipelines with more than one</td></tr>
 * </table>
 *
 * <p><b>Keep Alive 0</b> "has the effect of turning off the Keep Alive mechanism" (both versions of
 * the specification): by default the channel's Heartbeat handler is removed, so the server never
 * closes such a client for silence, as the specification says. A server that wants a limit anyway
 * (most brokers cap the Keep Alive) sets {@link Builder#whenKeepAliveDisabled}; an MQTT 5 server
 * that answers with a different Server Keep Alive in CONNACK calls
 * {@code monitor.reconfigure(channel, keepAlive.configFor(monitor.configOf(channel), serverKeepAlive))}
 * itself. The configuration for Keep Alive 0 replaces the channel's whole configuration, as given.
 *
 * <p>It acts on the first well-formed CONNECT, then removes itself from the pipeline; every message
 * is passed on unchanged. If the channel has no Heartbeat handler of the monitor, the error goes to
 * {@code exceptionCaught} and the CONNECT still goes on. Runs on the channel's event loop; sharable.
 */
@ChannelHandler.Sharable
public final class MqttKeepAlive extends ChannelInboundHandlerAdapter {

    /** The specification's multiplier: one and a half times the Keep Alive. */
    public static final double DEFAULT_MULTIPLIER = 1.5;
    /** The largest multiplier: 1000 times the largest Keep Alive (18 h) is 2 years, far within a timeout. */
    public static final double MAX_MULTIPLIER = 1000;
    private static final double NANOS_PER_SECOND = 1e9;

    private final HeartbeatMonitor monitor;
    private final double multiplier;
    private final String handlerName;
    private final HeartbeatConfig whenKeepAliveDisabled;
    /**
     * The configuration made last, with what it was made from: clients of one fleet announce the same
     * value on channels that start with the same configuration, so most CONNECTs reuse it. Any event
     * loop reads and writes it (volatile; a lost race only builds an equal configuration twice).
     */
    private volatile Made last;

    /** {@code config} made from {@code base} (null for {@link #configFor(int)}) for {@code keepAliveSeconds}. */
    private record Made(HeartbeatConfig base, int keepAliveSeconds, HeartbeatConfig config) {
    }

    private MqttKeepAlive(Builder b) {
        this.monitor = b.monitor;
        this.multiplier = b.multiplier;
        this.handlerName = b.handlerName;
        this.whenKeepAliveDisabled = b.whenKeepAliveDisabled;
    }

    /** With the defaults: 1.5 times the Keep Alive; Keep Alive 0 removes the Heartbeat handler. */
    public static MqttKeepAlive of(HeartbeatMonitor monitor) {
        return builder(monitor).build();
    }

    /** A builder for non-default settings. */
    public static Builder builder(HeartbeatMonitor monitor) {
        return new Builder(Objects.requireNonNull(monitor, "monitor"));
    }

    /** The multiplier. */
    public double multiplier() {
        return multiplier;
    }

    /**
     * A configuration with nothing but the keep-alive rule for a client that announced
     * {@code keepAliveSeconds}: close after {@code multiplier} times that long without a read, rounded
     * up to the nanosecond. It has no lifecycle settings: to switch a channel that has some (a maximum
     * age, a write stall, a veto), use {@link #configFor(HeartbeatConfig, int)}, as the CONNECT does.
     *
     * @throws IllegalArgumentException if {@code keepAliveSeconds} is not in [1, 65535]
     */
    public HeartbeatConfig configFor(int keepAliveSeconds) {
        long nanos = timeoutNanos(keepAliveSeconds);
        Made made = last;
        if (made != null && made.base == null && made.keepAliveSeconds == keepAliveSeconds) {
            return made.config;
        }
        HeartbeatConfig config = HeartbeatConfig.closeWhenIdle().readerIdle(Duration.ofNanos(nanos)).build();
        last = new Made(null, keepAliveSeconds, config);
        return config;
    }

    /**
     * {@code current} with its idle policy replaced by the keep-alive rule for a client that announced
     * {@code keepAliveSeconds}: close after {@code multiplier} times that long without a read (with
     * timeout exceptions if {@code current} has them), rounded up to the nanosecond. Every lifecycle
     * setting of {@code current} is kept: maximum age (jitter, grace), write stall, unwritable bound,
     * goodbye (a ping probe's included), close veto and its bound. The old timeouts, or pings, are
     * replaced: MQTT's server has no ping.
     *
     * @param current the channel's configuration now, e.g. {@code monitor.configOf(channel)}
     * @throws IllegalArgumentException if {@code keepAliveSeconds} is not in [1, 65535]
     */
    public HeartbeatConfig configFor(HeartbeatConfig current, int keepAliveSeconds) {
        Objects.requireNonNull(current, "current");
        long nanos = timeoutNanos(keepAliveSeconds);
        Made made = last;
        if (made != null && made.base == current && made.keepAliveSeconds == keepAliveSeconds) {
            return made.config;
        }
        HeartbeatConfig config = current.withReaderIdleClose(nanos);
        last = new Made(current, keepAliveSeconds, config);
        return config;
    }

    /** The timeout for {@code keepAliveSeconds}: {@code multiplier} times it, rounded up to the nanosecond. */
    private long timeoutNanos(int keepAliveSeconds) {
        if (keepAliveSeconds < 1 || keepAliveSeconds > 0xFFFF) {
            throw new IllegalArgumentException("an MQTT Keep Alive with a timeout must be in [1, 65535] s: "
                    + keepAliveSeconds);
        }
        // With 1.5 the product is exact (below 2^53); with any multiplier it is within one ulp (at most
        // 8 ns) of the real product, and rounded up.
        return (long) Math.ceil(keepAliveSeconds * multiplier * NANOS_PER_SECOND);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof MqttConnectMessage connect && connect.decoderResult().isSuccess()) {
            ctx.pipeline().remove(this); // its events still reach the next handler through ctx
            try {
                apply(ctx.channel(), connect.variableHeader().keepAliveTimeSeconds());
            } catch (RuntimeException e) {
                ctx.fireExceptionCaught(e);
            }
        }
        ctx.fireChannelRead(msg);
    }

    private void apply(Channel channel, int keepAliveSeconds) {
        if (keepAliveSeconds > 0) {
            HeartbeatConfig current = handlerName == null ? monitor.configOf(channel)
                    : monitor.configOf(channel, handlerName);
            reconfigure(channel, configFor(current, keepAliveSeconds));
        } else if (whenKeepAliveDisabled != null) {
            reconfigure(channel, whenKeepAliveDisabled);
        } else {
            removeHeartbeatHandler(channel);
        }
    }

    private void reconfigure(Channel channel, HeartbeatConfig config) {
        if (handlerName == null) {
            monitor.reconfigure(channel, config);
        } else {
            monitor.reconfigure(channel, handlerName, config);
        }
    }

    /** Event loop: stops watching the channel, which is how Heartbeat turns idleness off. */
    private void removeHeartbeatHandler(Channel channel) {
        ChannelPipeline pipeline = channel.pipeline();
        if (handlerName != null) {
            monitor.configOf(channel, handlerName); // throws a clear error if it is not ours
            pipeline.remove(handlerName);
            return;
        }
        monitor.configOf(channel); // throws a clear error unless there is exactly one of ours
        for (Map.Entry<String, ChannelHandler> e : pipeline) {
            if (e.getValue() instanceof HeartbeatHandler h && h.monitor() == monitor.engine) {
                pipeline.remove(h);
                return;
            }
        }
    }

    @Override
    public String toString() {
        return "MqttKeepAlive[multiplier=" + multiplier + (whenKeepAliveDisabled == null ? ", keepAlive 0: unwatched"
                : ", keepAlive 0: " + whenKeepAliveDisabled) + "]";
    }

    /** Configures an {@link MqttKeepAlive}; each setter checks its value. */
    public static final class Builder {
        private final HeartbeatMonitor monitor;
        private double multiplier = DEFAULT_MULTIPLIER;
        private String handlerName;
        private HeartbeatConfig whenKeepAliveDisabled;

        private Builder(HeartbeatMonitor monitor) {
            this.monitor = monitor;
        }

        /**
         * The timeout as a multiple of the client's Keep Alive; 1.5 by default, as the specification
         * says. Below 1 would close clients that keep the rule.
         *
         * @throws IllegalArgumentException if not in [1, {@link #MAX_MULTIPLIER}]
         */
        public Builder multiplier(double multiplier) {
            if (!(multiplier >= 1 && multiplier <= MAX_MULTIPLIER)) { // also refuses NaN
                throw new IllegalArgumentException("multiplier must be in [1, " + MAX_MULTIPLIER + "]: " + multiplier);
            }
            this.multiplier = multiplier;
            return this;
        }

        /** The name of the Heartbeat handler to reconfigure, for pipelines with more than one. */
        public Builder handlerName(String name) {
            this.handlerName = Objects.requireNonNull(name, "handlerName");
            return this;
        }

        /**
         * The configuration for clients that announce Keep Alive 0, instead of removing the Heartbeat
         * handler (the specification's "no timeout"): a server-side limit on silent clients. It
         * replaces the channel's whole configuration, as given: give it the lifecycle settings (maximum
         * age, write stall...) the channel should keep.
         */
        public Builder whenKeepAliveDisabled(HeartbeatConfig config) {
            this.whenKeepAliveDisabled = Objects.requireNonNull(config, "config");
            return this;
        }

        /** The handler: sharable, add the same instance to every channel. */
        public MqttKeepAlive build() {
            return new MqttKeepAlive(this);
        }
    }
}
