/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The load test's view of one demo server's HTTP endpoint: {@code POST /debug/gc} (heap used after a
 * full GC, and the open connections) and {@code GET /metrics} (Prometheus text, parsed into
 * {@code name{labels} -> value}). Thread-safe.
 */
final class ServerProbe {

    /** The heap and connections {@code /debug/gc} reports. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Heap(long heapUsedBytes, long connections) {
    }

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String base;

    ServerProbe(String hostPort) {
        this.base = "http://" + hostPort;
    }

    /**
     * Runs a full GC on the server and reads its heap.
     *
     * @throws IOException if the endpoint does not answer as the demo server does
     */
    Heap gc() throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/debug/gc"))
                .timeout(Duration.ofMinutes(2)).POST(HttpRequest.BodyPublishers.noBody()).build();
        String body = send(req);
        try {
            return JsonCodec.read(body.trim(), Heap.class);
        } catch (IllegalArgumentException e) {
            throw new IOException(base + "/debug/gc answered no heap JSON: " + JsonCodec.abbreviate(body), e);
        }
    }

    /**
     * Asks the server to drain: {@code POST /drain?window=...}, every connection closed over the window.
     *
     * @return the connections it is draining
     * @throws IOException if the endpoint does not answer as the demo server does (409: not Heartbeat)
     */
    long drain(Duration window) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/drain?window=" + window.toMillis() + "ms"))
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.noBody()).build();
        String body = send(req);
        try {
            return JsonCodec.read(body.trim(), Drain.class).draining();
        } catch (IllegalArgumentException e) {
            throw new IOException(base + "/drain answered no drain JSON: " + JsonCodec.abbreviate(body), e);
        }
    }

    /** What {@code /drain} answers. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Drain(long draining, long windowMs) {
    }

    /** The server's metrics now. */
    Map<String, Double> metrics() throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/metrics")).timeout(Duration.ofSeconds(30))
                .GET().build();
        return parseMetrics(send(req));
    }

    private String send(HttpRequest req) throws IOException, InterruptedException {
        HttpResponse<String> res = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() != 200) {
            throw new IOException(req.method() + " " + req.uri() + " answered " + res.statusCode() + ": "
                    + JsonCodec.abbreviate(res.body()));
        }
        return res.body();
    }

    /** Samples of the Prometheus text format, keyed by name with its labels as written; comments skipped. */
    static Map<String, Double> parseMetrics(String text) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String line : text.split("\n", -1)) {
            String l = line.trim();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            int space = l.lastIndexOf(' ');
            if (space <= 0) {
                continue;
            }
            String value = l.substring(space + 1);
            try {
                out.put(l.substring(0, space).trim(), value.equals("+Inf") ? Double.POSITIVE_INFINITY
                        : value.equals("-Inf") ? Double.NEGATIVE_INFINITY : Double.parseDouble(value));
            } catch (NumberFormatException e) {
                // not a sample line
            }
        }
        return out;
    }

    /** A sample's value, or NaN if the server does not report it. */
    static double value(Map<String, Double> metrics, String key) {
        Double v = metrics.get(key);
        return v == null ? Double.NaN : v;
    }
}
