/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;

/**
 * The package rules of heartbeat-core and heartbeat-netty (issue 26), checked on the main classes of both
 * (heartbeat-core from its jar or the reactor's classes; tests are not held to them). One field per rule:
 * a new rule is a new {@code @ArchTest} constant with a sentence saying what it protects. A rule that selects
 * no class fails (ArchUnit's default), so a rule cannot pass by matching nothing.
 */
@AnalyzeClasses(packages = "dev.heartbeat", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    static final String BASE = "dev.heartbeat.netty";
    static final String PROBE = "dev.heartbeat.netty.probe..";
    static final String MICROMETER = "dev.heartbeat.netty.micrometer..";

    /** The deprecated classes left at the old names, the only way from the base package to the others. */
    static final String[] FORWARDERS = {"dev.heartbeat.netty.Probes", "dev.heartbeat.netty.HeartbeatMetrics"};

    /**
     * Micrometer is an optional dependency: only the micrometer package (and the deprecated forwarder to
     * it) may touch it, so an application without Micrometer never loads a class that needs it.
     */
    @ArchTest
    static final ArchRule ONLY_THE_MICROMETER_PACKAGE_USES_MICROMETER = noClasses()
            .that().resideOutsideOfPackage(MICROMETER)
            .and().doNotHaveFullyQualifiedName("dev.heartbeat.netty.HeartbeatMetrics")
            .should().dependOnClassesThat().resideInAPackage("io.micrometer..")
            .because("Micrometer is optional: dev.heartbeat.netty.micrometer isolates it");

    /** The probes and the metrics binding are two leaves on the base package: neither knows the other. */
    @ArchTest
    static final ArchRule PROBE_AND_MICROMETER_DO_NOT_DEPEND_ON_EACH_OTHER = CompositeArchRule
            .of(noClasses().that().resideInAPackage(PROBE)
                    .should().dependOnClassesThat().resideInAPackage(MICROMETER))
            .and(noClasses().that().resideInAPackage(MICROMETER)
                    .should().dependOnClassesThat().resideInAPackage(PROBE))
            .because("the probe and micrometer packages are independent leaves on dev.heartbeat.netty");

    /**
     * The base package is the API the leaves build on: it reaches them only through its deprecated
     * forwarders (its configuration makes its own probe for a {@code PingFactory}).
     */
    @ArchTest
    static final ArchRule BASE_REACHES_THE_LEAVES_ONLY_THROUGH_ITS_FORWARDERS = noClasses()
            .that().resideInAPackage(BASE)
            .and().doNotHaveFullyQualifiedName(FORWARDERS[0])
            .and().doNotHaveFullyQualifiedName(FORWARDERS[1])
            .should().dependOnClassesThat().resideInAnyPackage(PROBE, MICROMETER)
            .because("dev.heartbeat.netty must not depend on its leaf packages, except in the deprecated "
                    + "forwarders left at the old names");

    /** The forwarders are deprecated: they go once users have moved, and with them the exceptions above. */
    @ArchTest
    static final ArchRule THE_FORWARDERS_ARE_DEPRECATED = classes()
            .that().haveFullyQualifiedName(FORWARDERS[0]).or().haveFullyQualifiedName(FORWARDERS[1])
            .should().beAnnotatedWith(Deprecated.class);

    /** heartbeat-core (the timing wheel and its worker) is Netty-free: any event loop could host it. */
    @ArchTest
    static final ArchRule CORE_USES_NO_NETTY = noClasses()
            .that().resideInAPackage("dev.heartbeat.core..")
            .should().dependOnClassesThat().resideInAPackage("io.netty..")
            .because("heartbeat-core must not depend on Netty");
}
