/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.EnumMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The share of each {@link Role} among the connections, in whole percent adding up to 100, as
 * {@code --mix silent=20,active=20,pong=50,dying=10} gives it. Roles not named get 0.
 * Immutable; any thread.
 */
final class Mix {

    /** The mix of the main scenario. */
    static final String DEFAULT = "silent=20,active=20,pong=50,dying=10";

    private final int[] percent = new int[Role.values().length];

    private Mix() {
    }

    /**
     * Parses {@code role=percent,...}.
     *
     * @throws IllegalArgumentException naming the bad part: an unknown role, a repeated one, a
     *     percentage that is not a whole number in 0-100, or a sum other than 100
     */
    static Mix parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("--mix is empty: expected e.g. " + DEFAULT);
        }
        Mix mix = new Mix();
        boolean[] seen = new boolean[Role.values().length];
        int sum = 0;
        for (String part : text.split(",", -1)) {
            int eq = part.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("--mix part '" + part.trim() + "' is not role=percent (in '" + text
                        + "'): expected e.g. " + DEFAULT);
            }
            Role role;
            try {
                role = Role.of(part.substring(0, eq));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--mix '" + text + "': " + e.getMessage(), e);
            }
            if (seen[role.ordinal()]) {
                throw new IllegalArgumentException("--mix names " + role + " twice: '" + text + "'");
            }
            seen[role.ordinal()] = true;
            String value = part.substring(eq + 1).trim();
            if (value.endsWith("%")) {
                value = value.substring(0, value.length() - 1).trim();
            }
            int p;
            try {
                p = Integer.parseInt(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--mix share of " + role + " is not a whole percentage: '"
                        + part.substring(eq + 1).trim() + "'", e);
            }
            if (p < 0 || p > 100) {
                throw new IllegalArgumentException("--mix share of " + role + " must be in 0-100: " + p);
            }
            mix.percent[role.ordinal()] = p;
            sum += p;
        }
        if (sum != 100) {
            throw new IllegalArgumentException("--mix shares must add up to 100, not " + sum + ": '" + text + "'");
        }
        return mix;
    }

    /** The percentage of a role. */
    int percent(Role role) {
        return percent[role.ordinal()];
    }

    /**
     * How many of {@code n} connections get each role: {@code floor(n * percent / 100)} each, and the
     * few left over by the rounding go one each to the roles with the largest remainders (ties: the
     * earlier role). The counts add up to {@code n}.
     */
    Map<Role, Integer> counts(int n) {
        Role[] roles = Role.values();
        int[] count = new int[roles.length];
        long[] remainder = new long[roles.length];
        int assigned = 0;
        for (Role r : roles) {
            long exact = (long) n * percent[r.ordinal()];
            count[r.ordinal()] = (int) (exact / 100);
            remainder[r.ordinal()] = exact % 100;
            assigned += count[r.ordinal()];
        }
        for (int left = n - assigned; left > 0; left--) {
            int best = -1;
            for (Role r : roles) {
                if (percent[r.ordinal()] > 0 && (best < 0 || remainder[r.ordinal()] > remainder[best])) {
                    best = r.ordinal();
                }
            }
            count[best]++;
            remainder[best] = -1;
        }
        Map<Role, Integer> out = new EnumMap<>(Role.class);
        for (Role r : roles) {
            out.put(r, count[r.ordinal()]);
        }
        return out;
    }

    /**
     * The role of each of {@code n} connections, by global index: exactly {@link #counts} of each,
     * in an order shuffled by {@code seed} (the same seed gives the same roles in every process), so
     * every client process, server and connect second gets the same mix.
     */
    byte[] assign(int n, long seed) {
        byte[] roles = new byte[n];
        int i = 0;
        for (Map.Entry<Role, Integer> e : counts(n).entrySet()) {
            for (int k = 0; k < e.getValue(); k++) {
                roles[i++] = (byte) e.getKey().ordinal();
            }
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (int j = n - 1; j > 0; j--) { // Fisher-Yates
            int k = random.nextInt(j + 1);
            byte t = roles[j];
            roles[j] = roles[k];
            roles[k] = t;
        }
        return roles;
    }

    /**
     * The canonical text: the four main roles with their shares, then the edge roles that have one,
     * e.g. {@code active=20,silent=20,pong=50,dying=0,halfopen=10}.
     */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder();
        for (Role r : Role.values()) {
            if (r.isEdge() && percent[r.ordinal()] == 0) {
                continue;
            }
            s.append(s.length() == 0 ? "" : ",").append(r).append('=').append(percent[r.ordinal()]);
        }
        return s.toString();
    }
}
