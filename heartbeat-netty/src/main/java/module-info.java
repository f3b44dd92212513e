/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * Heartbeat for Netty: the handler that replaces {@code IdleStateHandler}, its monitor and configuration
 * ({@code dev.heartbeat.netty}), the protocol probes ({@code dev.heartbeat.netty.probe}), the Micrometer
 * binding ({@code dev.heartbeat.netty.micrometer}) and the Reactor Netty integration
 * ({@code dev.heartbeat.netty.reactor}). Only these four packages are exported; any other package is internal.
 *
 * <p>{@code dev.heartbeat.core} and Netty's buffer, codec, common, handler and transport modules are required
 * transitively: a module that requires this one reads them. The HTTP, HTTP/2 and MQTT codecs,
 * Micrometer, Reactor Netty and {@code jdk.jfr} (the flight recorder events of hosted cycles and hand-off
 * batches) are optional dependencies ({@code requires static}): an application that uses the
 * probe, binding or integration that needs one has it on its module path already, and adds it to the graph
 * with its own {@code requires} (or {@code --add-modules}). Micrometer, Reactor Netty and, before 4.2, Netty
 * have no module descriptor of their own: they are named by their {@code Automatic-Module-Name}s.
 */
// Requiring an automatic module is what javac's two lints below warn of, and -Werror would fail the build; these
// modules have no descriptor yet, and the names are the ones their jars declare.
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.heartbeat.netty {
    requires transitive dev.heartbeat.core;
    requires transitive io.netty.buffer;
    requires transitive io.netty.codec;
    requires transitive io.netty.common;
    requires transitive io.netty.handler;
    requires transitive io.netty.transport;
    requires java.management; // the CPU time of the JFR events' runs (CycleEvents)
    requires org.jctools.core;
    requires org.slf4j;

    requires static io.netty.codec.http;
    requires static io.netty.codec.http2;
    requires static io.netty.codec.mqtt;
    requires static jdk.jfr;
    requires static micrometer.core;
    requires static reactor.netty.core;
    requires static reactor.netty.http;

    exports dev.heartbeat.netty;
    exports dev.heartbeat.netty.micrometer;
    exports dev.heartbeat.netty.probe;
    exports dev.heartbeat.netty.reactor;
}
