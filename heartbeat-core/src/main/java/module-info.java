/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
/**
 * Heartbeat's core: the hierarchical timing wheel and the single worker thread that owns it. No Netty. Its
 * public API names no type of its dependencies, so none is required transitively.
 */
module dev.heartbeat.core {
    requires java.management;
    requires org.jctools.core;
    requires org.slf4j;
    // JCTools' queues need sun.misc.Unsafe, but its descriptor requires jdk.unsupported only static: without this
    // line an application whose graph nothing else adds it to fails with NoClassDefFoundError: sun/misc/Unsafe.
    requires jdk.unsupported;

    exports dev.heartbeat.core;
}
