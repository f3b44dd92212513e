/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.netty.util.Version;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The check a monitor makes when it is built: whether every Netty jar on the class path has the same version,
 * as Netty's {@code Version.identify()} reads them from the jars' {@code META-INF/io.netty.versions.properties}.
 * Maven resolves each jar's version on its own, so a library that brings other Netty jars (gRPC-java 1.85 brings
 * 4.2 codecs) can leave a 4.1 transport beside a 4.2 HTTP/2 codec; nothing fails until a class is missing at run
 * time. Importing {@code io.netty:netty-bom} aligns them. One WARN per class loader naming each version and its
 * jars; nothing when they agree.
 */
final class NettyVersions {

    private static final Logger LOG = LoggerFactory.getLogger(NettyVersions.class);
    private static final AtomicBoolean CHECKED = new AtomicBoolean();

    private NettyVersions() {
    }

    /** From {@code HeartbeatMonitor.Builder.build()}: checks the Netty jars once, warning if their versions differ. */
    static void checkOnce() {
        if (!CHECKED.get() && CHECKED.compareAndSet(false, true)) {
            check(NettyVersions::identify, LOG::warn);
        }
    }

    /**
     * Checks the versions {@code artifacts} gives (artifact id to version) and tells {@code warn} the
     * problem, if any.
     *
     * @return the warning, or null if the versions agree (or none were found)
     */
    static String check(Supplier<Map<String, String>> artifacts, Consumer<String> warn) {
        Map<String, String> versions;
        try {
            versions = artifacts.get();
        } catch (RuntimeException | LinkageError e) {
            return null; // a Netty without Version, or a class path it cannot read: nothing to say
        }
        Map<String, TreeMap<String, String>> byVersion = new TreeMap<>();
        versions.forEach((artifact, version) ->
                byVersion.computeIfAbsent(version, v -> new TreeMap<>()).put(artifact, version));
        if (byVersion.size() < 2) {
            return null;
        }
        StringBuilder s = new StringBuilder("Netty jars of ").append(byVersion.size())
                .append(" versions on the class path:");
        byVersion.forEach((version, jars) -> s.append(' ').append(version).append(' ').append(jars.keySet())
                .append(';'));
        s.setLength(s.length() - 1);
        s.append(". Mixed Netty versions fail at run time (missing classes and methods): import io.netty:netty-bom "
                + "(4.1 or 4.2) in your build so that every Netty jar has one version");
        String warning = s.toString();
        warn.accept(warning);
        return warning;
    }

    private static Map<String, String> identify() {
        Map<String, String> versions = new TreeMap<>();
        Version.identify(NettyVersions.class.getClassLoader())
                .forEach((artifact, v) -> versions.put(artifact, v.artifactVersion()));
        return versions;
    }
}
