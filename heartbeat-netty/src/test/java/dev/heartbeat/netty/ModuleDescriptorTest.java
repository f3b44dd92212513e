/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.FlightEvents;
import dev.heartbeat.netty.engine.HeartbeatHandler;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolvedModule;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * The module {@code dev.heartbeat.netty} (src/main/java/module-info.java) as a user on the module path gets it:
 * exactly the four API packages exported, no package opened, the optional dependencies {@code requires static},
 * and a module graph that resolves from this build's dependencies. The tests themselves run on the class path
 * (the parent pom's useModulePath false), so this reads the compiled descriptor and resolves it in a layer of
 * its own.
 */
class ModuleDescriptorTest {

    private static final String MODULE = "dev.heartbeat.netty";

    /** The API. A new package stays internal unless it is exported in module-info.java and listed here. */
    private static final Set<String> EXPORTED = Set.of("dev.heartbeat.netty", "dev.heartbeat.netty.micrometer",
            "dev.heartbeat.netty.probe", "dev.heartbeat.netty.reactor");

    /** The optional Maven dependencies (heartbeat-netty's pom), by module name. */
    private static final Set<String> OPTIONAL = Set.of("io.netty.codec.http", "io.netty.codec.http2",
            "io.netty.codec.mqtt", "micrometer.core", "reactor.netty.core", "reactor.netty.http");
    /** The optional JDK modules: the flight recorder, for {@link FlightEvents} (which checks it is there). */
    private static final Set<String> OPTIONAL_JDK = Set.of("jdk.jfr");

    @Test
    void exportsExactlyTheApiPackagesToEveryoneAndOpensNone() throws URISyntaxException {
        ModuleDescriptor descriptor = compiledDescriptor();
        assertEquals(MODULE, descriptor.name());
        assertFalse(descriptor.isOpen() || descriptor.isAutomatic());
        assertEquals(new TreeSet<>(EXPORTED), descriptor.exports().stream()
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toCollection(TreeSet::new)));
        assertTrue(descriptor.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified),
                () -> "qualified exports: " + descriptor.exports());
        assertEquals(Set.of(), descriptor.opens());
    }

    /**
     * The optional dependencies are {@code requires static} and not transitive: javac 17 fails to compile a
     * module that requires this one ("module not found: micrometer.core") when a {@code static transitive}
     * dependency is missing from its module path, which would make the optional ones mandatory.
     */
    @Test
    void optionalDependenciesAreStaticNotTransitiveAndTheRestAreNotStatic() throws URISyntaxException {
        Set<String> statics = new TreeSet<>();
        for (ModuleDescriptor.Requires requires : compiledDescriptor().requires()) {
            if (requires.modifiers().contains(ModuleDescriptor.Requires.Modifier.STATIC)) {
                statics.add(requires.name());
                assertFalse(requires.modifiers().contains(ModuleDescriptor.Requires.Modifier.TRANSITIVE),
                        () -> "requires static transitive " + requires.name());
            }
        }
        Set<String> optional = new TreeSet<>(OPTIONAL);
        optional.addAll(OPTIONAL_JDK);
        assertEquals(optional, statics);
    }

    /**
     * The module resolves on a module path made of this build's test class path less the optional dependencies'
     * jars (Netty 4.1's jars are automatic modules, 4.2's explicit ones), its graph has what its dependencies
     * need at run time, and its classes load from a layer as members of the named module.
     */
    @Test
    void resolvesOnTheModulePathWithoutItsOptionalDependencies() throws ClassNotFoundException {
        Path[] path = Arrays.stream(System.getProperty("java.class.path").split(java.io.File.pathSeparator))
                .map(Path::of)
                .filter(p -> Files.isRegularFile(p) || Files.isRegularFile(p.resolve("module-info.class")))
                .filter(p -> ModuleFinder.of(p).findAll().stream()
                        .noneMatch(m -> OPTIONAL.contains(m.descriptor().name())))
                .toArray(Path[]::new);
        // The graph of an application whose only root is this module: the JDK's modules only where required.
        Set<String> graph = Configuration.empty()
                .resolve(ModuleFinder.compose(ModuleFinder.ofSystem(), ModuleFinder.of(path)), ModuleFinder.of(),
                        List.of(MODULE))
                .modules().stream().map(ResolvedModule::name).collect(Collectors.toCollection(TreeSet::new));
        assertTrue(graph.contains("jdk.unsupported"), () -> "JCTools needs sun.misc.Unsafe but requires "
                + "jdk.unsupported only static, so dev.heartbeat.core requires it: " + graph);
        for (String optional : OPTIONAL) {
            assertFalse(graph.contains(optional), optional);
        }
        assertFalse(graph.contains("jdk.jfr"), "jdk.jfr only where the application resolves it");

        Configuration configuration = ModuleLayer.boot().configuration()
                .resolve(ModuleFinder.of(path), ModuleFinder.of(), List.of(MODULE));
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(configuration,
                ClassLoader.getPlatformClassLoader());

        Module module = layer.findModule(MODULE).orElseThrow();
        for (String pkg : EXPORTED) {
            assertTrue(module.isExported(pkg), pkg);
        }
        Class<?> handler = Class.forName(HeartbeatHandler.class.getName(), false, layer.findLoader(MODULE));
        assertEquals(module, handler.getModule());
        // The flight recorder's gate initialises in the module whether or not it reads jdk.jfr.
        Class.forName(FlightEvents.class.getName(), true, layer.findLoader(MODULE));
        assertTrue(layer.findModule("dev.heartbeat.core").isPresent());
    }

    /** The descriptor in target/classes (or the jar) HeartbeatHandler is loaded from, with its packages. */
    private static ModuleDescriptor compiledDescriptor() throws URISyntaxException {
        Path classes = Path.of(HeartbeatHandler.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        return ModuleFinder.of(classes).find(MODULE).orElseThrow().descriptor();
    }
}
