/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.lang.reflect.Field;
import java.util.Objects;
import java.util.function.Predicate;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.ServerChannel;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectDecoder;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrameDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerProtocolHandler;
import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.DefaultHttp2PingFrame;
import io.netty.handler.codec.http2.Http2ConnectionHandler;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2PingFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.mqtt.MqttDecoder;
import io.netty.handler.codec.mqtt.MqttFixedHeader;
import io.netty.handler.codec.mqtt.MqttMessage;
import io.netty.handler.codec.mqtt.MqttMessageBuilders;
import io.netty.handler.codec.mqtt.MqttMessageType;
import io.netty.handler.codec.mqtt.MqttProperties;
import io.netty.handler.codec.mqtt.MqttQoS;
import io.netty.handler.codec.mqtt.MqttVersion;
import io.netty.util.AttributeKey;

// Over 500 lines (listed in checkstyle.xml): the built-in probes, one nested class each, with their goodbyes for
// every close reason; they move to a probe package of their own, one file each, with the restructure of issue 26.
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
 * are logged as one WARN per probe (see {@code PROBES.md}).
 *
 * <p>Peers' own pings are not answers: Netty's HTTP/2 codec and WebSocket protocol handler answer
 * them by themselves, and an MQTT server answers PINGREQ in the application (see {@link MqttKeepAlive}
 * for the server side of MQTT's keep-alive).
 */
public final class Probes {

    /** The goodbye words of ping abuse: gRPC clients back off their keep-alive when they read them. */
    static final String TOO_MANY_PINGS = "too_many_pings";
    private static final ByteBuf TOO_MANY_PINGS_BYTES = io.netty.buffer.Unpooled.unreleasableBuffer(
            io.netty.buffer.Unpooled.copiedBuffer(TOO_MANY_PINGS, java.nio.charset.StandardCharsets.US_ASCII))
            .asReadOnly();

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
     * WebSocket Ping frames carrying the token as 8 bytes of application data, answered by a Pong
     * with the same data (RFC 6455 section 5.5.3). Netty's {@code WebSocketServerProtocolHandler}
     * (and the client's) drops Pongs by default: put the Heartbeat handler before it, or build it with
     * {@code dropPongFrames(false)} (see {@code PROBES.md}). Pongs with other data (unsolicited
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

    private static final class Http2Probe extends Probe {
        static final Http2Probe INSTANCE = new Http2Probe();

        @Override
        public String name() {
            return "http2";
        }

        private Http2Probe() {
            super(Matching.BY_TOKEN, true);
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) {
            return new DefaultHttp2PingFrame(token); // 24 B per ping: the frame holds the token, not a buffer
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return msg instanceof Http2PingFrame ping && ping.ack();
        }

        @Override
        protected long tokenOf(Object answer) {
            return ((Http2PingFrame) answer).content();
        }

        @Override
        protected boolean isPeerPing(Object msg) {
            return msg instanceof Http2PingFrame ping && !ping.ack();
        }

        @Override
        public boolean recognisesPeerPings() {
            return true;
        }

        @Override
        protected boolean isApplicationMessage(Object msg) {
            return msg instanceof Http2HeadersFrame || msg instanceof Http2DataFrame;
        }

        /**
         * GOAWAY with the reason's name as debug data: {@code NO_ERROR} for the closes that end a
         * connection with nothing wrong on the wire (idleness, ping timeout, maximum age, drain, as gRPC-java
         * and Go's {@code x/net/http2} send for theirs); {@code ENHANCE_YOUR_CALM} for a peer whose behaviour
         * loads the server: ping abuse (with the debug data {@code too_many_pings}, the words gRPC clients look
         * for to back off) and a peer that does not read ({@code WRITE_STALL}, {@code UNWRITABLE}). Netty's
         * {@code Http2FrameCodec} fills in the last stream id, and a GOAWAY with an error code makes it close
         * the connection as soon as the frame is written.
         */
        @Override
        public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
            Http2Error error = switch (reason) {
                case PING_ABUSE, WRITE_STALL, UNWRITABLE -> Http2Error.ENHANCE_YOUR_CALM;
                default -> Http2Error.NO_ERROR;
            };
            return new DefaultHttp2GoAwayFrame(error, ByteBufUtil.writeAscii(ctx.alloc(), words(reason)));
        }

        @Override
        public boolean hasTwoPhaseGoodbye() {
            return true;
        }

        @Override
        protected boolean isTooManyPings(Object msg) {
            return msg instanceof Http2GoAwayFrame goAway && goAway.errorCode() == Http2Error.ENHANCE_YOUR_CALM.code()
                    && ByteBufUtil.equals(goAway.content(), TOO_MANY_PINGS_BYTES);
        }

        @Override
        public boolean recognisesTooManyPings() {
            return true;
        }

        /**
         * GOAWAY {@code NO_ERROR} with the largest stream id (2^31 - 1): the peer learns to open no
         * more streams while those it opened and we have not seen yet still count, as gRPC-java's
         * graceful shutdown begins; the final GOAWAY ({@link #newGoodbye}) then names the real last one.
         */
        @Override
        public Object newGoodbyeWarning(ChannelHandlerContext ctx, CloseReason reason) {
            return new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR, ByteBufUtil.writeAscii(ctx.alloc(), reason.name()))
                    .setExtraStreamIds(Integer.MAX_VALUE);
        }

        @Override
        String placementAdvice() {
            return "put the Heartbeat handler after Http2FrameCodec, whose PING ACK frames it must see";
        }

        @Override
        ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
            String subject = ProbePlacement.subject(ctx, this);
            if (ctx.channel() instanceof Http2StreamChannel) {
                return ProbePlacement.Finding.wrong(subject + " is in the pipeline of an HTTP/2 stream, where PING "
                        + "frames are neither written nor read: add Heartbeat's handler to the connection's pipeline, "
                        + "after Http2FrameCodec");
            }
            ProbePlacement.Place codec = ProbePlacement.first(ctx.pipeline(), Http2FrameCodec.class::isInstance);
            if (codec != null) {
                return codec.index() < ProbePlacement.self(ctx).index() ? ProbePlacement.Finding.FITS
                        : ProbePlacement.Finding.wrong(subject + " is before Http2FrameCodec " + codec.quoted()
                                + ", so it reads bytes, never the PING ACK frames: add Heartbeat's handler after "
                                + "Http2FrameCodec");
            }
            ProbePlacement.Place other = ProbePlacement.first(ctx.pipeline(), Http2ConnectionHandler.class::isInstance);
            return ProbePlacement.Finding.unknown(subject + (other != null
                    ? " has no Http2FrameCodec but " + other.quoted() + ", which may refuse the Http2PingFrame "
                            + "this probe writes"
                    : " has no Http2FrameCodec in its pipeline, so its placement cannot be checked")
                    + ": add Heartbeat's handler after Http2FrameCodec (with ALPN or an h2c upgrade, when the codec is "
                    + "added)");
        }
    }

    private static final class WebSocketProbe extends Probe {
        static final WebSocketProbe INSTANCE = new WebSocketProbe();

        @Override
        public String name() {
            return "websocket";
        }

        private WebSocketProbe() {
            super(Matching.BY_TOKEN, true);
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) {
            ByteBuf data = ctx.alloc().buffer(Long.BYTES, Long.BYTES).writeLong(token);
            return new PingWebSocketFrame(data);
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return msg instanceof PongWebSocketFrame;
        }

        @Override
        protected long tokenOf(Object answer) {
            ByteBuf data = ((PongWebSocketFrame) answer).content();
            // Our pings carry exactly 8 bytes. Other data reads as Long.MIN_VALUE, which, like any foreign
            // token, matches a waiting ping only by a 2^-64 chance per waiting ping (the start is random).
            return data.readableBytes() == Long.BYTES ? data.getLong(data.readerIndex()) : Long.MIN_VALUE;
        }

        @Override
        protected boolean isPeerPing(Object msg) {
            return msg instanceof PingWebSocketFrame;
        }

        @Override
        public boolean recognisesPeerPings() {
            return true;
        }

        @Override
        protected boolean isApplicationMessage(Object msg) {
            return msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame
                    || msg instanceof ContinuationWebSocketFrame;
        }

        @Override
        protected boolean isTooManyPings(Object msg) {
            return msg instanceof CloseWebSocketFrame close
                    && close.statusCode() == WebSocketCloseStatus.POLICY_VIOLATION.code()
                    && TOO_MANY_PINGS.equals(close.reasonText());
        }

        @Override
        public boolean recognisesTooManyPings() {
            return true;
        }

        /** A Close frame is the last frame either side reads: nothing is answered after it. */
        @Override
        public boolean goodbyeEndsConversation() {
            return true;
        }

        /**
         * A Close frame with the reason's name as its text ({@code too_many_pings} for ping abuse): 1008
         * (policy violation) for a peer that broke the server's rules (ping abuse, not reading:
         * {@code WRITE_STALL}, {@code UNWRITABLE}); 1001 (going away) for every other close, none of which
         * is the peer's fault (RFC 6455 section 7.4.1). 1011 (unexpected condition) fits none of them.
         */
        @Override
        public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
            WebSocketCloseStatus status = switch (reason) {
                case PING_ABUSE, WRITE_STALL, UNWRITABLE -> WebSocketCloseStatus.POLICY_VIOLATION;
                default -> WebSocketCloseStatus.ENDPOINT_UNAVAILABLE;
            };
            return new CloseWebSocketFrame(status.code(), words(reason));
        }

        @Override
        String placementAdvice() {
            return "WebSocketServerProtocolHandler (and WebSocketClientProtocolHandler) drop Pong frames by default: "
                    + "put the Heartbeat handler before it, or build it with dropPongFrames(false)";
        }

        /**
         * After the WebSocket frame decoder (or the HTTP codec whose place it takes at the handshake), and
         * not after a protocol handler that drops Pong frames (read from its {@code dropPongFrames} field;
         * UNKNOWN if it cannot be read).
         */
        @Override
        ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
            String subject = ProbePlacement.subject(ctx, this);
            int self = ProbePlacement.self(ctx).index();
            ChannelPipeline p = ctx.pipeline();
            ProbePlacement.Place decoder = ProbePlacement.first(p, WebSocketFrameDecoder.class::isInstance);
            if (decoder == null) {
                decoder = ProbePlacement.first(p, h -> h instanceof HttpServerCodec || h instanceof HttpClientCodec
                        || h instanceof HttpObjectDecoder);
            }
            if (decoder != null && decoder.index() > self) {
                return ProbePlacement.Finding.wrong(subject + " is before " + decoder.quoted() + ", so it reads "
                        + "bytes, never WebSocket frames: add Heartbeat's handler after " + decoder.quoted()
                        + " (the WebSocket frame decoder takes the HTTP codec's place at the handshake)");
            }
            ProbePlacement.Place protocol = ProbePlacement.first(p, h -> h instanceof WebSocketServerProtocolHandler
                    || h instanceof WebSocketClientProtocolHandler);
            if (protocol != null && protocol.index() < self) {
                Boolean drops = dropsPongFrames(protocol.handler());
                String fix = ": put Heartbeat's handler before it, or build it with dropPongFrames(false)";
                if (drops == null) {
                    return ProbePlacement.Finding.unknown(subject + " is after " + protocol.quoted()
                            + ", whose dropPongFrames setting cannot be read" + fix);
                }
                if (drops) {
                    return ProbePlacement.Finding.wrong(subject + " is after " + protocol.quoted()
                            + ", which drops Pong frames (its default), so no answer reaches it" + fix);
                }
            }
            if (decoder == null && protocol == null) {
                return ProbePlacement.Finding.unknown(subject + " has no WebSocket frame decoder, HTTP codec or "
                        + "WebSocket protocol handler in its pipeline, so its placement cannot be checked: add "
                        + "Heartbeat's handler after the HTTP codec, before WebSocketServerProtocolHandler");
            }
            return ProbePlacement.Finding.FITS;
        }

        /**
         * Whether a WebSocket protocol handler drops Pong frames: its {@code dropPongFrames} field (private in
         * Netty 4.1 and 4.2, read by reflection), or null if it cannot be read.
         */
        private static Boolean dropsPongFrames(ChannelHandler protocol) {
            for (Class<?> c = protocol.getClass(); c != null; c = c.getSuperclass()) {
                Field field;
                try {
                    field = c.getDeclaredField("dropPongFrames");
                } catch (NoSuchFieldException e) {
                    continue;
                }
                try {
                    field.setAccessible(true);
                    return field.getBoolean(protocol);
                } catch (ReflectiveOperationException | RuntimeException e) {
                    return null;
                }
            }
            return null;
        }
    }

    private static final class MqttClientProbe extends Probe {
        static final MqttClientProbe INSTANCE = new MqttClientProbe();
        /** Where Netty's MQTT codec keeps the session's version (its {@code MqttCodecUtil.MQTT_VERSION_KEY}). */
        private static final AttributeKey<MqttVersion> MQTT_VERSION = AttributeKey.valueOf("NETTY_CODEC_MQTT_VERSION");
        /** Immutable and never reference counted, so one instance serves every channel. */
        private static final MqttMessage PINGREQ =
                new MqttMessage(new MqttFixedHeader(MqttMessageType.PINGREQ, false, MqttQoS.AT_MOST_ONCE, false, 0));

        @Override
        public String name() {
            return "mqtt";
        }

        private MqttClientProbe() {
            super(Matching.IN_ORDER, true);
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) {
            return PINGREQ;
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return msg instanceof MqttMessage m && m.fixedHeader() != null
                    && m.fixedHeader().messageType() == MqttMessageType.PINGRESP;
        }

        /** PINGREQ: a client's ping, which a server polices. */
        @Override
        protected boolean isPeerPing(Object msg) {
            return msg instanceof MqttMessage m && m.fixedHeader() != null
                    && m.fixedHeader().messageType() == MqttMessageType.PINGREQ;
        }

        @Override
        public boolean recognisesPeerPings() {
            return true;
        }

        /**
         * On an MQTT 5 session (one whose {@code MqttDecoder} or {@code MqttEncoder} saw a CONNECT of
         * version 5), a DISCONNECT with a reason code and the reason's name as its Reason String; on any
         * other, none (null). MQTT 3.1.1 has no DISCONNECT from the server, and a client's DISCONNECT is a
         * clean end that makes the server discard its Will, which a close for idleness or a broken
         * connection must not; so a 3.1.1 channel is closed without a word. The reason codes are those the
         * specification allows the side that sends them (MQTT 5.0 section 3.14.2.1); a server is a channel
         * accepted by a {@code ServerChannel}:
         * <ul>
         * <li>server: 0x8D Keep Alive timeout (idleness, ping timeout), 0xA0 Maximum connect time (maximum
         *     age), 0x8B Server shutting down (drain), 0x96 Message rate too high (ping abuse), 0x97 Quota
         *     exceeded (write stall, unwritable), 0x80 Unspecified error for any other reason;</li>
         * <li>client: 0x00 Normal disconnection (maximum age, drain: planned ends), 0x04 Disconnect with Will
         *     Message (idleness, ping timeout: the Will is still published, as after a close without a word),
         *     0x96 and 0x97 as the server, 0x04 for any other reason.</li>
         * </ul>
         */
        @Override
        @SuppressWarnings("deprecation") // MqttPropertyType: deprecated in Netty 4.2, whose int constants 4.1 lacks
        public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
            Channel channel = ctx.channel();
            if (!channel.hasAttr(MQTT_VERSION) || channel.attr(MQTT_VERSION).get() != MqttVersion.MQTT_5) {
                return null;
            }
            MqttProperties properties = new MqttProperties();
            properties.add(new MqttProperties.StringProperty(MqttProperties.MqttPropertyType.REASON_STRING.value(),
                    reason.name()));
            int code = channel.parent() instanceof ServerChannel ? serverReasonCode(reason) : clientReasonCode(reason);
            return MqttMessageBuilders.disconnect().reasonCode((byte) code).properties(properties).build();
        }

        private static int serverReasonCode(CloseReason reason) {
            return switch (reason) {
                case READER_IDLE, WRITER_IDLE, ALL_IDLE, PING_TIMEOUT -> 0x8D;
                case MAX_AGE -> 0xA0;
                case DRAIN -> 0x8B;
                case PING_ABUSE -> 0x96;
                case WRITE_STALL, UNWRITABLE -> 0x97;
                default -> 0x80;
            };
        }

        private static int clientReasonCode(CloseReason reason) {
            return switch (reason) {
                case MAX_AGE, DRAIN -> 0x00;
                case PING_ABUSE -> 0x96;
                case WRITE_STALL, UNWRITABLE -> 0x97;
                default -> 0x04;
            };
        }

        @Override
        String placementAdvice() {
            return "put the Heartbeat handler after MqttDecoder, whose PINGRESP messages it must see";
        }

        @Override
        ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
            String subject = ProbePlacement.subject(ctx, this);
            ProbePlacement.Place decoder = ProbePlacement.first(ctx.pipeline(), MqttDecoder.class::isInstance);
            if (decoder == null) {
                return ProbePlacement.Finding.unknown(subject + " has no MqttDecoder in its pipeline, so its placement "
                        + "cannot be checked: add Heartbeat's handler after MqttDecoder");
            }
            return decoder.index() < ProbePlacement.self(ctx).index() ? ProbePlacement.Finding.FITS
                    : ProbePlacement.Finding.wrong(subject + " is before MqttDecoder " + decoder.quoted() + ", so it "
                            + "reads bytes, never PINGRESP messages: add Heartbeat's handler after MqttDecoder");
        }
    }

    /** A probe around a {@link PingFactory}: answers in order, or not recognised at all. */
    private static final class CustomProbe extends Probe {
        private final PingFactory ping;
        private final Predicate<Object> isAnswer;

        CustomProbe(PingFactory ping, Predicate<Object> isAnswer, Matching matching, boolean consumeAnswers) {
            super(matching, consumeAnswers);
            this.ping = ping;
            this.isAnswer = isAnswer;
        }

        @Override
        public Object newPing(ChannelHandlerContext ctx, long token) throws Exception {
            return ping.newPing(ctx.channel());
        }

        @Override
        protected boolean isAnswer(Object msg) {
            return isAnswer.test(msg);
        }
    }
}
