/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty.probe;

import java.util.Objects;
import java.util.function.Predicate;

import dev.heartbeat.netty.AckMode;
import dev.heartbeat.netty.CloseReason;
import dev.heartbeat.netty.MqttKeepAlive;
import dev.heartbeat.netty.PingFactory;
import dev.heartbeat.netty.Probe;

/**
 * The built-in {@link Probe}s. Each protocol probe needs its Netty codec on the class path
 * ({@code netty-codec-http2}, {@code netty-codec-http}, {@code netty-codec-mqtt}), which Heartbeat
 * declares optional: a probe's codec classes load only when its factory is first called.
 *
 * <table>
 * <caption>Probes, their pings and answers</caption>
 * <tr><th>Factory</th><th>Ping</th><th>Answer</th><th>Matching</th><th>Handler goes</th></tr>
 * <tr><td>{@link #http2()}</td><td>{@code Http2PingFrame}, the token as its 8 bytes</td>
 *     <td>{@code Http2PingFrame} with {@code ack()}, same content</td><td>by token</td>
 *     <td>after {@code Http2FrameCodec} (before or after {@code Http2MultiplexHandler})</td></tr>
 * <tr><td>{@link #http2ConnectionHandler()}</td><td>PING through the {@code Http2ConnectionHandler}'s
 *     encoder, the token as its 8 bytes</td><td>PING ACK with the same bytes, seen by the handler's decoder</td>
 *     <td>by token</td><td>after the {@code Http2ConnectionHandler} (gRPC-java's {@code NettyServerHandler},
 *     Netty's subclasses), with no {@code Http2FrameCodec}</td></tr>
 * <tr><td>{@link #webSocket()}</td><td>{@code PingWebSocketFrame}, the token as 8 bytes</td>
 *     <td>{@code PongWebSocketFrame} with the same 8 bytes</td><td>by token</td>
 *     <td>before {@code WebSocketServerProtocolHandler}, or after it with {@code dropPongFrames(false)}</td></tr>
 * <tr><td>{@link #mqttClient()}</td><td>PINGREQ</td><td>PINGRESP</td><td>in order</td>
 *     <td>after {@code MqttDecoder}</td></tr>
 * <tr><td>{@link #custom}</td><td>the factory's message</td><td>what the predicate accepts</td>
 *     <td>in order</td><td>after the decoder that makes the answer</td></tr>
 * <tr><td>{@link #of(PingFactory)}</td><td>the factory's message</td><td>not recognised</td><td>none</td>
 *     <td>anywhere reads pass</td></tr>
 * </table>
 *
 * <p>The three protocol probes check where the handler goes when the channel starts: a ping probe on
 * the wrong side of its codec, under an ack mode that needs its answers, is refused (an
 * {@code IllegalStateException} down the pipeline, and the channel closed); other doubtful placements
 * are logged as one WARN per probe (see {@code docs/protocols-and-probes.md}).
 *
 * <p>Peers' own pings are not answers: Netty's HTTP/2 codec and WebSocket protocol handler answer
 * them by themselves, and an MQTT server answers PINGREQ in the application (see {@link MqttKeepAlive}
 * for the server side of MQTT's keep-alive).
 *
 * <p>Each built-in probe is a class of this package, reached only through these factories. A probe
 * for another protocol subclasses {@link Probe}, whose protected methods are the whole contract the
 * built-in probes use too (including {@code placement} and {@code placementAdvice}, for a probe that
 * can tell where the handler must sit).
 *
 * @since 0.2 (before, {@code dev.heartbeat.netty.Probes}, now deprecated)
 */
public final class Probes {

    /** The goodbye words of ping abuse: gRPC clients back off their keep-alive when they read them. */
    static final String TOO_MANY_PINGS = "too_many_pings";

    private Probes() {
    }

    /** The words a goodbye for {@code reason} says: its name, or {@code too_many_pings} for ping abuse. */
    static String words(CloseReason reason) {
        return reason == CloseReason.PING_ABUSE ? TOO_MANY_PINGS : reason.name();
    }

    /**
     * HTTP/2 PING frames for a channel with Netty's {@code Http2FrameCodec}: each ping carries its
     * token as the frame's 8 opaque bytes and is answered by a PING ACK with the same bytes (RFC 9113
     * section 6.7). Netty acknowledges the peer's pings itself; those, and acks of pings the
     * application sent, are passed on.
     */
    public static Probe http2() {
        return Http2Probe.INSTANCE;
    }

    /**
     * HTTP/2 PING and GOAWAY for a channel whose HTTP/2 is an {@code Http2ConnectionHandler} without
     * {@code Http2FrameCodec}: Netty's own subclasses, gRPC-java's {@code NettyServerHandler} and others built
     * the same way, which read frames into a listener and may refuse any message written to them. Each ping
     * goes out through the handler's own encoder, with the token as its 8 bytes; the first one decorates the
     * handler's decoder's frame listener, which from then on keeps the PING ACKs of our waiting pings from the
     * handler's listener and fires them to the Heartbeat handler (acks of the handler's own pings go to the
     * handler as before). The goodbye is the handler's own GOAWAY, with the error code and debug data of
     * {@link #http2()}'s (at maximum age with a grace, in gRPC's two phases, as {@link #http2()}'s), and the
     * close after it goes through the handler's graceful shutdown (see {@code docs/integrations/grpc.md}). The
     * Heartbeat handler goes after the connection handler. It
     * sees as reads only the acks of its pings (and whatever the handler passes on), so use it with the ping
     * policy, not an idle policy.
     *
     * @since 0.2
     */
    public static Probe http2ConnectionHandler() {
        return Http2HandlerProbe.INSTANCE;
    }

    /**
     * WebSocket Ping frames carrying the token as 8 bytes of application data, answered by a Pong
     * with the same data (RFC 6455 section 5.5.3). Netty's {@code WebSocketServerProtocolHandler}
     * (and the client's) drops Pongs by default: put the Heartbeat handler before it, or build it with
     * {@code dropPongFrames(false)} (see {@code docs/protocols-and-probes.md}). Pongs with other data (unsolicited
     * heartbeats, answers to the application's pings) are passed on.
     */
    public static Probe webSocket() {
        return WebSocketProbe.INSTANCE;
    }

    /**
     * MQTT's client keep-alive: PINGREQ, answered by PINGRESP. PINGRESP carries nothing, and a
     * server answers in order, so each settles the oldest PINGREQ waiting (MQTT 3.1.1 section 3.13,
     * 5.0 section 3.13). Use it with the ping policy driven by writer idleness at the keep-alive the
     * client announced in CONNECT. For the server side, see {@link MqttKeepAlive}.
     */
    public static Probe mqttClient() {
        return MqttClientProbe.INSTANCE;
    }

    /**
     * A probe for any protocol whose answer carries no token, such as a line protocol's
     * {@code PING} / {@code PONG}: answers are matched in order; those that answer a waiting ping
     * are consumed (released, not passed on), any other goes on to the application.
     *
     * @param ping makes each ping, as the ping policy's factory
     * @param isAnswer whether an inbound message (as decoded where the handler sits) is the answer
     *     to a ping; called for every inbound message on the event loop, so it must be cheap
     */
    public static Probe custom(PingFactory ping, Predicate<Object> isAnswer) {
        return custom(ping, isAnswer, true);
    }

    /**
     * {@link #custom(PingFactory, Predicate)}, choosing whether the answers are kept from the
     * application: pass {@code false} when the answer is an ordinary message the application wants
     * too (the reply to a status request, say).
     */
    public static Probe custom(PingFactory ping, Predicate<Object> isAnswer, boolean consumeAnswers) {
        return new CustomProbe(Objects.requireNonNull(ping, "ping"), Objects.requireNonNull(isAnswer, "isAnswer"),
                Probe.Matching.IN_ORDER, consumeAnswers);
    }

    /**
     * Today's {@link PingFactory} as a probe that does not recognise answers: any inbound read is
     * the answer, so it works with {@link AckMode#ANY_INBOUND} only.
     */
    public static Probe of(PingFactory factory) {
        return new CustomProbe(Objects.requireNonNull(factory, "factory"), msg -> false, Probe.Matching.NONE, false);
    }
}
