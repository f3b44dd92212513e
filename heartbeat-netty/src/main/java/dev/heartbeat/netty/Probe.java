/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A protocol's liveness check: makes a ping and recognises its answer, such as an HTTP/2 PING and
 * its ACK, a WebSocket Ping and its Pong, or an MQTT PINGREQ and its PINGRESP. Get one from
 * {@link dev.heartbeat.netty.probe.Probes}. A probe is stateless and shared by every channel that uses
 * it: the per-channel
 * state (the token of the latest ping and how many pings await an answer) is two primitives held
 * by the caller, so writing a ping costs the ping message and recognising an answer allocates
 * nothing.
 *
 * <h2>Tokens and matching</h2>
 * The caller numbers a channel's pings consecutively from a random start: the ping written
 * {@code i} pings before the latest carries {@code latestToken - i} (wrapping around as longs do).
 * How an answer is matched to its ping is the probe's {@link Matching}:
 * <ul>
 * <li>{@link Matching#BY_TOKEN}: the answer echoes the token (HTTP/2 PING ACK, WebSocket Pong);</li>
 * <li>{@link Matching#IN_ORDER}: the answer carries nothing and the peer answers in order, so it
 *     answers the oldest ping still waiting (MQTT PINGRESP, most line protocols);</li>
 * <li>{@link Matching#NONE}: answers are not recognised at all
 *     ({@link dev.heartbeat.netty.probe.Probes#of(PingFactory)}):
 *     only {@link AckMode#ANY_INBOUND} can work with it.</li>
 * </ul>
 *
 * <h2>The caller's part</h2>
 * On the channel's event loop, for every inbound message: {@code int c = probe.classify(msg,
 * latestToken, unanswered)}; if {@code c >= 0} the message answers one of our pings, written
 * {@code c} pings before the latest, and the pings older than it are settled too: set
 * {@code unanswered = c}. If {@link #consumes(int) consumes(c)}, release the message and do not pass
 * it on; anything else goes on through the pipeline. {@code docs/protocols-and-probes.md} has the full contract.
 *
 * <p>Thread-safe: a probe holds no per-channel state. Its methods are called on the channel's event
 * loop.
 *
 * <h2>Writing a probe</h2>
 * For a protocol {@link dev.heartbeat.netty.probe.Probes} does not cover, subclass this with the
 * {@link Matching} its answers allow and implement {@link #newPing}, {@link #isAnswer} and, for
 * {@link Matching#BY_TOKEN}, {@link #tokenOf}; or use
 * {@link dev.heartbeat.netty.probe.Probes#custom(PingFactory, java.util.function.Predicate)}. The protected
 * methods are the whole contract: the built-in probes (package {@code dev.heartbeat.netty.probe}) use
 * nothing else. A probe that can tell from the pipeline whether the handler sits where its answers reach
 * it overrides {@link #placement} (with {@link ProbePlacement}'s helpers) and {@link #placementAdvice}.
 */
public abstract class Probe {

    /* Implementation notes.
     *
     * The result of classify is an int so that matching a message allocates nothing and the age of
     * the answered ping travels with the verdict: an enum could not say "the ping three before the
     * latest". Consecutive tokens (rather than a random token per ping, as Go's HTTP/2 client uses)
     * let one long stand for every outstanding ping: the answer to an older ping is recognised as
     * ours, consumed instead of leaking to the application, and settles the pings before it. A stray
     * answer collides with a live token with probability unanswered / 2^64 when the start is random.
     */

    private static final Logger LOG = LoggerFactory.getLogger(Probe.class);

    /** Per probe class: whether it writes its pings with {@link #writePing}'s default (see {@link #writesFromTail}). */
    private static final ClassValue<Boolean> WRITES_FROM_TAIL = new ClassValue<>() {
        @Override
        protected Boolean computeValue(Class<?> type) {
            return !overridesWritePing(type);
        }
    };

    /** {@link #classify} result: not an answer of this protocol; application traffic. */
    public static final int NOT_AN_ANSWER = -1;
    /**
     * {@link #classify} result: an answer of this protocol to none of our waiting pings (the
     * application's own ping, an unsolicited Pong, a duplicate); it goes on to the application.
     */
    public static final int UNSOLICITED = -2;
    /**
     * Pings written without any answer, on a channel that never saw one, after which inbound traffic
     * means the answers are lost before the handler (see {@link #reportMissingAnswers}).
     */
    static final int MISPLACEMENT_PINGS = 3;

    /** How a probe's answers are matched to its pings. */
    public enum Matching {
        /** Answers are not recognised: only {@link AckMode#ANY_INBOUND} applies. */
        NONE,
        /** Each answer echoes its ping's token: HTTP/2 PING ACK, WebSocket Pong. */
        BY_TOKEN,
        /** Answers carry nothing; the peer answers in order, so an answer settles the oldest ping (FIFO). */
        IN_ORDER
    }

    private final Matching matching;
    private final boolean consumesAnswers;
    /** Set once, by the first event loop to see answers go missing: one WARN per probe, not per channel. */
    private final AtomicBoolean reportedMissingAnswers = new AtomicBoolean();
    /** Set once, by the first placement check that warns (see {@link ProbePlacement}): one WARN per probe. */
    private final AtomicBoolean reportedPlacement = new AtomicBoolean();
    /** See {@link #writesFromTail}: per probe class, looked up once ({@link #WRITES_FROM_TAIL}). */
    private final boolean writesFromTail = WRITES_FROM_TAIL.get(getClass());

    /**
     * @param matching how answers are matched to pings
     * @param consumesAnswers whether answers to our pings are kept from the application (and
     *     released by the caller); false when the answer is a message the application also wants
     */
    protected Probe(Matching matching, boolean consumesAnswers) {
        this.matching = Objects.requireNonNull(matching, "matching");
        this.consumesAnswers = consumesAnswers;
    }

    /**
     * A new ping for the channel of {@code ctx}, carrying {@code token} if the protocol can. Called
     * on the channel's event loop, once per ping; the caller writes the result from the tail of the
     * pipeline (so every encoder sees it), and the write releases it.
     *
     * @param ctx the context of the calling handler: for its {@code alloc()} and {@code channel()}
     * @param token the ping's token; ignored unless {@link #matching()} is {@link Matching#BY_TOKEN}
     * @throws Exception if no ping can be made
     */
    public abstract Object newPing(ChannelHandlerContext ctx, long token) throws Exception;

    /**
     * Writes and flushes {@code ping}, made by {@link #newPing} for the handler at {@code ctx}; called right after
     * it, on the channel's event loop. By default from the tail of the pipeline, so every encoder (and the
     * handler's write stamp) sees it. Override it only for a protocol whose pings are not messages for the
     * pipeline: {@link dev.heartbeat.netty.probe.Probes#http2ConnectionHandler()} pings through an
     * {@code Http2ConnectionHandler}'s own encoder, because such a handler may refuse every message it does
     * not know (gRPC-java's does).
     *
     * @param ctx the context of the calling handler
     * @param ping what {@link #newPing} returned
     * @return the write: the ping counts as sent when it succeeds, as failed when it fails
     */
    protected ChannelFuture writePing(ChannelHandlerContext ctx, Object ping) {
        return ctx.channel().writeAndFlush(ping);
    }

    /**
     * Whether this probe writes its pings as {@link #writePing}'s default does (from the tail of the
     * pipeline), so the caller may give the write a promise of its own ({@code PingPolicy}: one that
     * carries the handler, instead of a listener object per ping). False for a probe whose class
     * overrides {@link #writePing}: that write is its own.
     */
    final boolean writesFromTail() {
        return writesFromTail;
    }

    /** Whether {@code type} (a subclass of this) or a class between it and this overrides {@link #writePing}. */
    private static boolean overridesWritePing(Class<?> type) {
        for (Class<?> c = type; c != Probe.class && c != null; c = c.getSuperclass()) {
            for (java.lang.reflect.Method m : c.getDeclaredMethods()) {
                Class<?>[] p = m.getParameterTypes();
                if (m.getName().equals("writePing") && p.length == 2
                        && p[0] == ChannelHandlerContext.class && p[1] == Object.class) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Whether {@code msg} is an answer of this protocol (to anyone's ping). Never called for {@link Matching#NONE}. */
    protected abstract boolean isAnswer(Object msg);

    /**
     * Whether {@code msg} is a ping from the peer (not an answer to one): what {@link PingPolicing}
     * polices. None by default; a probe that recognises peer pings overrides this and
     * {@link #recognisesPeerPings()}.
     */
    protected boolean isPeerPing(Object msg) {
        return false;
    }

    /** Whether {@link #isPeerPing} recognises anything: the built-in protocol probes do. */
    public boolean recognisesPeerPings() {
        return false;
    }

    /**
     * Whether {@code msg} is application traffic rather than the protocol's keep-alive chatter (for
     * {@link PingPolicing}). By default anything that is neither a peer ping nor an answer; protocols
     * with other control messages narrow it (HTTP/2: only HEADERS and DATA, as gRPC counts them).
     */
    protected boolean isApplicationMessage(Object msg) {
        return !isPeerPing(msg) && (matching == Matching.NONE || !isAnswer(msg));
    }

    /**
     * The protocol's goodbye before Heartbeat closes the channel for {@code reason}, whatever the
     * reason, or null to close without one (the default; MQTT 3.1.1). The close sequence calls it at most
     * once per channel, on the channel's event loop, writes the result from the tail of the pipeline (so
     * every encoder sees it) and closes once the write completes or its wait's cap passes. Each call
     * makes a new message, which the write releases.
     *
     * <table>
     * <caption>The built-in probes' goodbyes</caption>
     * <tr><th>Probe</th><th>Goodbye</th><th>Says</th></tr>
     * <tr><td>{@link dev.heartbeat.netty.probe.Probes#http2()}</td><td>GOAWAY</td>
     *     <td>{@code ENHANCE_YOUR_CALM} for
     *     {@code PING_ABUSE} ({@code too_many_pings}), {@code WRITE_STALL} and {@code UNWRITABLE};
     *     {@code NO_ERROR} for every other reason; the reason's name as debug data</td></tr>
     * <tr><td>{@link dev.heartbeat.netty.probe.Probes#webSocket()}</td><td>Close</td>
     *     <td>1008 (policy violation) for
     *     {@code PING_ABUSE} ({@code too_many_pings}), {@code WRITE_STALL} and {@code UNWRITABLE}; 1001
     *     (going away) for every other reason; the reason's name as text</td></tr>
     * <tr><td>{@link dev.heartbeat.netty.probe.Probes#mqttClient()}</td><td>MQTT 5 DISCONNECT</td>
     *     <td>a reason code for the reason
     *     and the side (see the probe), the reason's name as Reason String; nothing on MQTT 3.1.1</td></tr>
     * <tr><td>{@link dev.heartbeat.netty.probe.Probes#custom},
     *     {@link dev.heartbeat.netty.probe.Probes#of}</td><td>none</td><td>override this for a line
     *     such as {@code BYE <REASON>}</td></tr>
     * </table>
     *
     * @param ctx the context of the calling handler: for its {@code alloc()} and {@code channel()}
     * @param reason why the channel is about to close
     */
    public Object newGoodbye(ChannelHandlerContext ctx, CloseReason reason) {
        return null;
    }

    /**
     * Whether {@code msg} is the peer telling us we ping too often (HTTP/2: GOAWAY
     * {@code ENHANCE_YOUR_CALM} with {@code too_many_pings}, as gRPC servers send; WebSocket: Close 1008
     * {@code too_many_pings}, as Heartbeat's {@link PingPolicing} sends). A ping configuration of this
     * probe then doubles the channel's ping interval, as gRPC clients do. False by default.
     */
    protected boolean isTooManyPings(Object msg) {
        return false;
    }

    /** Whether {@link #isTooManyPings} recognises anything: the HTTP/2 and WebSocket probes do. */
    public boolean recognisesTooManyPings() {
        return false;
    }

    /**
     * Whether this protocol's goodbye is its last word: after it the peer answers nothing but its own
     * goodbye (WebSocket: a Close frame is the last frame, RFC 6455 section 5.5.1, and Netty's frame
     * decoders drop whatever follows one). A channel that has said such a goodbye at its maximum age
     * is not pinged any more, nor judged by its idle policy: its end is set, the close at the grace's
     * end (or the peer's own close before it). False by default: an HTTP/2 GOAWAY leaves pings working,
     * so a peer that dies in the grace is still found by them.
     */
    public boolean goodbyeEndsConversation() {
        return false;
    }

    /**
     * Whether this protocol's goodbye at maximum age has two halves ({@link #newGoodbyeWarning}, then
     * {@link #newGoodbye}), as HTTP/2's has; needs {@link Matching#BY_TOKEN}, to recognise the answer to
     * the ping between them. False by default.
     */
    public boolean hasTwoPhaseGoodbye() {
        return false;
    }

    /**
     * The first half of a two-phase goodbye (see {@link #hasTwoPhaseGoodbye}), or null to say it in
     * one: a notice that lets the peer finish what it has started (HTTP/2: GOAWAY with the largest
     * stream id, as gRPC-java sends first). Heartbeat writes it with a ping of this probe, and the
     * final half ({@link #newGoodbye}) when that ping's answer comes, or after a wait (at most half
     * the grace, at most 10 s) if none does. Called on the channel's event loop.
     *
     * @param ctx the context of the calling handler
     * @param reason why the channel is ending ({@link CloseReason#MAX_AGE})
     */
    public Object newGoodbyeWarning(ChannelHandlerContext ctx, CloseReason reason) {
        return null;
    }

    /**
     * The token an answer carries; called only for messages {@link #isAnswer} accepted, and only when
     * {@link #matching()} is {@link Matching#BY_TOKEN}. An answer whose payload cannot be a token of
     * ours (a Pong of another length) returns any value; it then matches no waiting ping unless it
     * collides with one, which a random start makes a 2^-64 event per waiting ping.
     */
    protected long tokenOf(Object answer) {
        throw new UnsupportedOperationException(this + " does not match answers by token");
    }

    /**
     * A short lower-case name for metrics and logs (the {@code probe} tag of the ping meters, see
     * {@link dev.heartbeat.netty.micrometer.HeartbeatMetrics}): {@code http2}, {@code websocket},
     * {@code mqtt} for the built-in probes, {@code custom} unless overridden. Probes that share a name
     * share their counters.
     */
    public String name() {
        return "custom";
    }

    /** How this probe's answers are matched to its pings. */
    public final Matching matching() {
        return matching;
    }

    /**
     * What an inbound message is to a channel whose latest ping carried {@code latestToken} and
     * whose {@code unanswered} latest pings await an answer. Allocates nothing.
     *
     * @param msg an inbound message at the caller's place in the pipeline
     * @param latestToken the token of the channel's latest ping (any value if none was written)
     * @param unanswered how many of the latest pings await an answer: 0 when none does
     * @return {@link #NOT_AN_ANSWER}; {@link #UNSOLICITED}; or, for an answer to one of our waiting
     *     pings, how many pings were written after the one it answers: 0 for the latest (the one
     *     whose write time the caller keeps, so the one that gives an RTT sample)
     */
    public final int classify(Object msg, long latestToken, int unanswered) {
        if (matching == Matching.NONE || !isAnswer(msg)) {
            return NOT_AN_ANSWER;
        }
        if (unanswered <= 0) {
            return UNSOLICITED;
        }
        if (matching == Matching.IN_ORDER) {
            return unanswered - 1; // the oldest waiting ping
        }
        long age = latestToken - tokenOf(msg); // wraps as the tokens do
        return age >= 0 && age < unanswered ? (int) age : UNSOLICITED;
    }

    /**
     * Whether the caller keeps a message of this classification from the application: answers to
     * our pings, unless this probe passes answers on. The caller then releases it
     * ({@code ReferenceCountUtil.release}); a WebSocket Pong holds a buffer.
     */
    public final boolean consumes(int classification) {
        return classification >= 0 && consumesAnswers;
    }

    /**
     * Where the handler must sit for this probe's answers to reach it, as advice to the reader of a
     * log: the WARN about missing answers (a channel that wrote {@value #MISPLACEMENT_PINGS} pings and saw
     * none of their answers while other messages arrived) quotes it. The default names the decoder of the
     * answers in general terms; a protocol probe names its codec. Called at most once per probe.
     *
     * @return one clause, such as {@code "put the Heartbeat handler after MqttDecoder, whose PINGRESP
     *     messages it must see"}
     */
    protected String placementAdvice() {
        return "put the Heartbeat handler after the decoder that produces the answers";
    }

    /**
     * Event loop: where the handler at {@code ctx} sits for this probe: after the decoder of its answers
     * ({@link ProbePlacement.Finding#FITS}), on the wrong side of it ({@link ProbePlacement.Finding#wrong}),
     * or in a pipeline with nothing to judge by ({@link ProbePlacement.Finding#unknown}). Heartbeat's handler
     * asks when it starts and decides what to do about the answer (see {@link ProbePlacement}): a ping probe
     * found WRONG under an ack mode that needs its answers closes the channel. The built-in protocol probes
     * judge; by default a probe FITS (it cannot tell). Override it only for a verdict that is certain from
     * the pipeline: read it (with {@link ProbePlacement#first}, {@link ProbePlacement#self} and
     * {@link ProbePlacement#subject}), do not change it, and allocate only to describe a problem.
     *
     * @param ctx the context of the Heartbeat handler being checked
     * @return the verdict, with the sentence that says what is wrong and the fix unless it fits
     */
    protected ProbePlacement.Finding placement(ChannelHandlerContext ctx) {
        return ProbePlacement.Finding.FITS;
    }

    /**
     * Event loop: logs {@code problem} (a placement the check warns about) as a WARN, once per probe
     * however many channels report it.
     *
     * @return whether this call logged it
     */
    boolean warnPlacement(Channel channel, String problem) {
        if (reportedPlacement.get() || !reportedPlacement.compareAndSet(false, true)) {
            return false;
        }
        LOG.warn("{} (this is logged once per probe)", problem);
        return true;
    }

    /**
     * Event loop: a channel that never saw an answer has written {@code pingsWithoutAnswer} pings and
     * still reads other messages, so its answers are lost before the handler (or its peer ignores
     * pings). Logs one WARN per probe, however many channels report it.
     *
     * @return whether this call logged it
     */
    boolean reportMissingAnswers(Channel channel, int pingsWithoutAnswer) {
        if (pingsWithoutAnswer < MISPLACEMENT_PINGS || reportedMissingAnswers.get()
                || !reportedMissingAnswers.compareAndSet(false, true)) {
            return false;
        }
        LOG.warn("{} wrote {} pings on {} and saw no answer to any of them while other messages arrived: the "
                + "answers are lost before the Heartbeat handler, or the peer ignores pings; {} (this is logged "
                + "once per probe)", this, pingsWithoutAnswer, channel, placementAdvice());
        return true;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + matching + (consumesAnswers ? "" : ", answers passed on") + "]";
    }
}
