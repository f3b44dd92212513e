package dev.heartbeat.netty; class ComposedPoliciesTest {}
