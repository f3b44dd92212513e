/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * The built-in probes: HTTP/2 PING, WebSocket Ping and Pong, MQTT PINGREQ and PINGRESP, and probes
 * made from a {@link dev.heartbeat.netty.PingFactory}. {@link dev.heartbeat.netty.probe.Probes} is the
 * only public class: each probe is a package-private class of its own, built on the protected API of
 * {@link dev.heartbeat.netty.Probe} alone (the same a probe for another protocol has). Each protocol probe
 * needs its Netty codec on the class path, an optional dependency of heartbeat-netty. This package
 * depends on {@code dev.heartbeat.netty} and never the other way round.
 */
package dev.heartbeat.netty.probe;
