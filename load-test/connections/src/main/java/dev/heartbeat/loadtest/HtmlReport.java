/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code report.html}: one self-contained page (inline CSS and SVG, no script, nothing fetched): at its
 * top the two verdicts ({@link ReportVerdicts}: correctness, performance), then for each transport the
 * side-by-side table with how to read it beside it, and the charts: close lateness and echo
 * latency distributions, heap per connection, and CPU. Built from a {@link Report}; one thread.
 */
final class HtmlReport {

    private final Report report;

    HtmlReport(Report report) {
        this.report = report;
    }

    String render() {
        StringBuilder s = new StringBuilder(64 * 1024);
        s.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
                .append("<title>Heartbeat load test</title>\n<style>\n")
                .append("body{font-family:system-ui,sans-serif;max-width:1400px;margin:24px auto;padding:0 16px;")
                .append("color:#222}\n")
                .append("table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #ccc;padding:4px 10px}")
                .append("td{text-align:right}td:first-child,th:first-child{text-align:left}th{background:#f4f4f4}\n")
                .append(".met{color:#1e8449}.missed{color:#c0392b;font-weight:600}.na{color:#888}\n")
                .append(".charts{display:flex;flex-wrap:wrap;gap:16px}code{background:#f4f4f4;padding:1px 4px}\n")
                .append(".verdicts{display:flex;flex-wrap:wrap;gap:16px}.verdict{flex:1 1 400px;border:2px solid #ccc;")
                .append("border-radius:6px;padding:0 16px}.verdict small{font-weight:normal;color:#666}\n")
                .append(".explained{display:flex;gap:24px;align-items:flex-start}.explained aside{flex:0 1 420px;")
                .append("font-size:90%;color:#444}\n")
                .append("</style>\n</head>\n<body>\n");
        s.append("<h1>Heartbeat load test</h1>\n<p>").append(esc(report.summary())).append("</p>\n");
        s.append("<p>Command: <code>").append(esc(report.command)).append("</code></p>\n");
        s.append(new ReportVerdicts(report).html());
        for (String t : report.transports()) {
            transport(s, t);
        }
        s.append("</body>\n</html>\n");
        return s.toString();
    }

    private void transport(StringBuilder s, String t) {
        List<RunResult> runs = report.of(t);
        boolean ratios = report.find(Scenario.HEARTBEAT, t) != null && report.find(Scenario.NETTY, t) != null;
        s.append("<h2>").append(esc(t)).append("</h2>\n<div class=\"explained\">\n<table>\n<tr><th></th>");
        for (RunResult r : runs) {
            s.append("<th>").append(esc(Report.displayName(r.impl))).append("</th>");
        }
        if (ratios) {
            s.append("<th>heartbeat / netty</th>");
        }
        s.append("</tr>\n");
        for (Report.Row row : report.table(t)) {
            s.append("<tr><td>").append(esc(row.label)).append("</td>");
            for (String c : row.cells) {
                s.append("<td>").append(esc(c)).append("</td>");
            }
            if (ratios) {
                s.append("<td>").append(row.ratio == null ? "" : esc(row.ratio)).append("</td>");
            }
            s.append("</tr>\n");
        }
        s.append("</table>\n<aside>\n<h3>How to read it</h3>\n<ul>\n");
        for (String[] item : Report.HOW_TO_READ) {
            s.append("<li><b>").append(esc(item[0])).append("</b>: ").append(esc(item[1])).append("</li>\n");
        }
        s.append("</ul>\n</aside>\n</div>\n");
        for (RunResult r : runs) {
            for (String note : r.notes) {
                s.append("<p class=\"na\">Note (").append(esc(r.impl)).append("): ").append(esc(note)).append("</p>\n");
            }
        }
        s.append("<div class=\"charts\">\n");
        List<SvgChart.Series> lateness = new ArrayList<>();
        List<SvgChart.Series> echo = new ArrayList<>();
        for (RunResult r : runs) {
            lateness.add(new SvgChart.Series(Report.displayName(r.impl), SvgChart.color(r.impl),
                    scaled(Histograms.percentileSeries(r.client.lateness), 1e-3)));
            echo.add(new SvgChart.Series(Report.displayName(r.impl), SvgChart.color(r.impl),
                    Histograms.percentileSeries(r.client.echoLatency)));
        }
        s.append(SvgChart.percentiles("Close lateness of silent and dying connections (" + t + ")", "ms", lateness));
        // microseconds, as in the table
        s.append(SvgChart.percentiles("Echo latency of active connections (" + t + ")", "us", echo));
        List<SvgChart.Series> bars = new ArrayList<>();
        double[][] heap = new double[runs.size()][1];
        double[][] cpu = new double[runs.size()][3];
        for (int i = 0; i < runs.size(); i++) {
            RunResult r = runs.get(i);
            bars.add(new SvgChart.Series(Report.displayName(r.impl), SvgChart.color(r.impl), List.of()));
            heap[i][0] = r.heapBytesPerConnection();
            cpu[i][0] = r.serverCpuSeconds;
            cpu[i][1] = r.connectServerCpuSeconds;
            cpu[i][2] = r.workerCpuSeconds;
        }
        s.append(SvgChart.bars("Heap per connection (" + t + ")", "bytes", List.of("server heap / connection"), bars,
                heap));
        s.append(SvgChart.bars("CPU (" + t + ")", "CPU seconds", List.of("server, run window", "server, connecting",
                "Heartbeat worker, run window"), bars, cpu));
        s.append("</div>\n");
    }

    private static List<double[]> scaled(List<double[]> series, double factor) {
        List<double[]> out = new ArrayList<>();
        for (double[] p : series) {
            out.add(new double[] {p[0], p[1] * factor});
        }
        return out;
    }

    private static String esc(String s) {
        return SvgChart.escape(s);
    }
}
