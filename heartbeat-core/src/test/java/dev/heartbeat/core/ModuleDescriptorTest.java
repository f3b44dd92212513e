/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * The module {@code dev.heartbeat.core} (src/main/java/module-info.java): it exports its one package to everyone
 * and opens nothing. The tests run on the class path (the parent pom's useModulePath false), so this reads the
 * compiled descriptor.
 */
class ModuleDescriptorTest {

    @Test
    void exportsOnlyItsPackageToEveryoneAndOpensNone() throws URISyntaxException {
        Path classes = Path.of(TimingWheel.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ModuleDescriptor descriptor = ModuleFinder.of(classes).find("dev.heartbeat.core").orElseThrow().descriptor();
        assertFalse(descriptor.isOpen() || descriptor.isAutomatic());
        assertEquals(Set.of("dev.heartbeat.core"), descriptor.exports().stream()
                .map(ModuleDescriptor.Exports::source).collect(Collectors.toSet()));
        assertTrue(descriptor.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified),
                () -> "qualified exports: " + descriptor.exports());
        assertEquals(Set.of(), descriptor.opens());
    }
}
