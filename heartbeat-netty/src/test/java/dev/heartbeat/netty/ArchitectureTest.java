/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.netty;

import dev.heartbeat.netty.engine.ApiAccess;
import dev.heartbeat.netty.engine.Rule;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

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
    static final String ENGINE = "dev.heartbeat.netty.engine..";

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
     * The base package is the API the leaves build on, and the engine runs it: they reach the leaves only
     * through the base package's deprecated forwarders (its configuration makes its own probe for a
     * {@code PingFactory}).
     */
    @ArchTest
    static final ArchRule BASE_REACHES_THE_LEAVES_ONLY_THROUGH_ITS_FORWARDERS = noClasses()
            .that().resideInAnyPackage(BASE, ENGINE)
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

    /**
     * The monitor is a facade over the engine ({@code dev.heartbeat.netty.engine}: {@link MonitorEngine}, the
     * handler, the rules, the close sequence, the batches, the budget, which {@code module-info} does not
     * export): the engine never calls back into the facade, so the public API can change without touching
     * what runs.
     */
    @ArchTest
    static final ArchRule THE_ENGINE_DOES_NOT_DEPEND_ON_THE_FACADE = noClasses()
            .that().resideInAPackage(ENGINE)
            .should().dependOnClassesThat().belongToAnyOf(HeartbeatMonitor.class)
            .because("HeartbeatMonitor is the facade over MonitorEngine: the engine never calls it");

    /**
     * The engine reaches the public API's members that are not public through {@link ApiAccess} only, whose
     * one implementation lives in the API package: no other class of the API package extends an engine class.
     */
    @ArchTest
    static final ArchRule ONLY_THE_BRIDGE_IMPLEMENTS_API_ACCESS = classes()
            .that().areAssignableTo(ApiAccess.class).and().doNotHaveFullyQualifiedName(ApiAccess.class.getName())
            .should().haveFullyQualifiedName("dev.heartbeat.netty.EngineAccess");

    /** heartbeat-core (the timing wheel and its worker) is Netty-free: any event loop could host it. */
    @ArchTest
    static final ArchRule CORE_USES_NO_NETTY = noClasses()
            .that().resideInAPackage("dev.heartbeat.core..")
            .should().dependOnClassesThat().resideInAPackage("io.netty..")
            .because("heartbeat-core must not depend on Netty");

    /**
     * Rules compose through the engine only (the handler's judge and perform, {@link CloseSequence}):
     * a rule never calls or names another rule, so a rule is added or changed without an edit to the
     * others. The abstract bases ({@link Rule}, {@link HandlerPolicy}, {@link IdlePolicy}) and the
     * shared helpers ({@link ActionBits}, {@link CheckOrder}, {@link CloseSequence}) are not rules.
     */
    @ArchTest
    static final ArchRule A_RULE_DOES_NOT_DEPEND_ON_ANOTHER_RULE = classes()
            .that(concreteRules())
            .should(new ArchCondition<JavaClass>("not depend on another rule") {
                @Override
                public void check(JavaClass rule, ConditionEvents events) {
                    for (Dependency d : rule.getDirectDependenciesFromSelf()) {
                        JavaClass target = d.getTargetClass();
                        if (!target.equals(rule) && concreteRules().test(target)
                                && !target.getName().startsWith(rule.getName() + "$")
                                && !rule.getName().startsWith(target.getName() + "$")) {
                            events.add(SimpleConditionEvent.violated(rule, d.getDescription()));
                        }
                    }
                }
            })
            .because("rules compose through the engine, never through each other");

    /** The concrete rules: subclasses of {@link Rule} other than its abstract bases. */
    private static DescribedPredicate<JavaClass> concreteRules() {
        return DescribedPredicate.describe("are concrete rules", c -> c.isAssignableTo(Rule.class)
                && !c.getModifiers().contains(JavaModifier.ABSTRACT));
    }
}
