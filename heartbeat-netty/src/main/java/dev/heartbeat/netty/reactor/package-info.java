/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * Heartbeat on Reactor Netty's {@code HttpServer} and {@code TcpServer}, and so under Spring WebFlux:
 * {@link dev.heartbeat.netty.reactor.ReactorHeartbeat}. Needs {@code io.projectreactor.netty:reactor-netty-http}
 * on the class path, which {@code heartbeat-netty} declares optional. Everything here runs on the connection's
 * event loop, as Reactor's own pipeline configuration does; it uses only Heartbeat's public API.
 */
package dev.heartbeat.netty.reactor;
