/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.List;
import java.util.Locale;

/**
 * Inline SVG charts for the HTML report, drawn here so the page needs no script, no library and no
 * network: percentile distributions (HdrHistogram style, x = percentile on a log scale of
 * {@code 1 / (1 - p)}) and grouped bars. Stateless; any thread.
 */
final class SvgChart {

    static final int WIDTH = 660;
    static final int HEIGHT = 330;
    private static final int LEFT = 70;
    private static final int RIGHT = 40;
    private static final int TOP = 36;
    private static final int BOTTOM = 56;
    /** x of 99.9999%: the right end of a percentile chart at most. */
    private static final double MAX_NINES = 6;

    /** A named line or bar series. */
    static final class Series {
        final String name;
        final String color;
        /** Percentile charts: {@code [percentile, value]} pairs. */
        final List<double[]> points;

        Series(String name, String color, List<double[]> points) {
            this.name = name;
            this.color = color;
            this.points = points;
        }
    }

    private SvgChart() {
    }

    /** The colour of an implementation, the same in every chart. */
    static String color(String impl) {
        switch (impl) {
            case Scenario.HEARTBEAT:
                return "#c0392b";
            case Scenario.NETTY:
                return "#2471a3";
            default:
                return "#7f8c8d";
        }
    }

    /** x position of a percentile: log10(1 / (1 - p/100)), capped at six nines. */
    static double nines(double percentile) {
        if (percentile >= 100) {
            return MAX_NINES;
        }
        return Math.min(MAX_NINES, Math.log10(1 / (1 - percentile / 100)));
    }

    /** A percentile distribution chart; values in {@code unit}, stepped as HdrHistogram plots them. */
    static String percentiles(String title, String unit, List<Series> series) {
        double maxX = 1;
        double maxY = 0;
        for (Series s : series) {
            for (double[] p : s.points) {
                maxX = Math.max(maxX, Math.ceil(nines(p[0]) - 1e-9));
                maxY = Math.max(maxY, p[1]);
            }
        }
        maxX = Math.min(MAX_NINES, Math.max(2, maxX));
        double top = niceCeiling(maxY);
        StringBuilder s = open(title);
        plotArea(s);
        // y grid
        for (int i = 0; i <= 5; i++) {
            double v = top * i / 5;
            double y = y(v, top);
            s.append(line(LEFT, y, WIDTH - RIGHT, y, "#e5e5e5"));
            s.append(text(LEFT - 6, y + 4, label(v), "end", 11));
        }
        // x grid: 0%, 90%, 99%, ...
        for (int k = 0; k <= maxX; k++) {
            double x = x(k, maxX);
            s.append(line(x, TOP, x, HEIGHT - BOTTOM, "#e5e5e5"));
            s.append(text(x, HEIGHT - BOTTOM + 16, k == 0 ? "0%" : percentLabel(k), "middle", 11));
        }
        s.append(text(LEFT + (WIDTH - LEFT - RIGHT) / 2.0, HEIGHT - BOTTOM + 34, "percentile", "middle", 12));
        s.append(yTitle(unit));
        if (series.stream().allMatch(x -> x.points.isEmpty())) {
            s.append(text(WIDTH / 2.0, HEIGHT / 2.0, "no samples", "middle", 13));
        }
        int legend = 0;
        for (Series se : series) {
            if (se.points.isEmpty()) {
                continue;
            }
            StringBuilder path = new StringBuilder();
            double prevX = x(0, maxX);
            boolean first = true;
            for (double[] p : se.points) {
                double px = x(nines(p[0]), maxX);
                double py = y(p[1], top);
                if (first) {
                    path.append(String.format(Locale.ROOT, "M%.1f %.1f", prevX, py));
                    first = false;
                }
                path.append(String.format(Locale.ROOT, " L%.1f %.1f", px, py));
                prevX = px;
            }
            s.append("<path d=\"").append(path).append("\" fill=\"none\" stroke=\"").append(se.color)
                    .append("\" stroke-width=\"2\"/>\n");
            s.append(legendEntry(legend++, se.name, se.color));
        }
        return close(s);
    }

    /** Bars grouped by category: {@code values[series][group]}; NaN values are left out. */
    static String bars(String title, String unit, List<String> groups, List<Series> series, double[][] values) {
        double maxY = 0;
        for (double[] row : values) {
            for (double v : row) {
                if (!Double.isNaN(v)) {
                    maxY = Math.max(maxY, v);
                }
            }
        }
        double top = niceCeiling(maxY);
        StringBuilder s = open(title);
        plotArea(s);
        for (int i = 0; i <= 5; i++) {
            double v = top * i / 5;
            double y = y(v, top);
            s.append(line(LEFT, y, WIDTH - RIGHT, y, "#e5e5e5"));
            s.append(text(LEFT - 6, y + 4, label(v), "end", 11));
        }
        s.append(yTitle(unit));
        double groupWidth = (WIDTH - LEFT - RIGHT) / (double) Math.max(1, groups.size());
        double barWidth = Math.min(60, groupWidth * 0.8 / Math.max(1, series.size()));
        for (int g = 0; g < groups.size(); g++) {
            double gx = LEFT + g * groupWidth;
            double start = gx + (groupWidth - barWidth * series.size()) / 2;
            for (int k = 0; k < series.size(); k++) {
                double v = values[k][g];
                if (Double.isNaN(v)) {
                    continue;
                }
                double y = y(Math.max(0, v), top);
                double bx = start + k * barWidth;
                s.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        + "fill=\"%s\"><title>%s: %s %s</title></rect>\n", bx + 2, y, barWidth - 4,
                        HEIGHT - BOTTOM - y, series.get(k).color, escape(series.get(k).name), label(v), escape(unit)));
                s.append(text(bx + barWidth / 2, y - 4, label(v), "middle", 10));
            }
            s.append(text(gx + groupWidth / 2, HEIGHT - BOTTOM + 16, groups.get(g), "middle", 11));
        }
        for (int k = 0; k < series.size(); k++) {
            s.append(legendEntry(k, series.get(k).name, series.get(k).color));
        }
        return close(s);
    }

    private static StringBuilder open(String title) {
        StringBuilder s = new StringBuilder();
        s.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" "
                + "width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"%s\" "
                + "font-family=\"system-ui, sans-serif\">\n", WIDTH, HEIGHT, WIDTH, HEIGHT, escape(title)));
        s.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
        s.append(text(LEFT, 20, title, "start", 14).replace("<text ", "<text font-weight=\"600\" "));
        return s;
    }

    private static void plotArea(StringBuilder s) {
        s.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#999\"/>\n", LEFT, TOP, WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM));
    }

    private static String close(StringBuilder s) {
        return s.append("</svg>\n").toString();
    }

    private static String yTitle(String unit) {
        return String.format(Locale.ROOT, "<text x=\"16\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" "
                + "transform=\"rotate(-90 16 %.1f)\">%s</text>\n", (TOP + HEIGHT - BOTTOM) / 2.0,
                (TOP + HEIGHT - BOTTOM) / 2.0, escape(unit));
    }

    private static String legendEntry(int i, String name, String color) {
        double x = LEFT + 10 + i * 210;
        double y = HEIGHT - 12;
        return String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>\n",
                x, y - 9, color) + text(x + 19, y, name, "start", 11);
    }

    private static double x(double nines, double maxX) {
        return LEFT + (WIDTH - LEFT - RIGHT) * nines / maxX;
    }

    private static double y(double v, double top) {
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * (top == 0 ? 0 : v / top);
    }

    private static String line(double x1, double y1, double x2, double y2, String color) {
        return String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n",
                x1, y1, x2, y2, color);
    }

    private static String text(double x, double y, String t, String anchor, int size) {
        return String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\">%s</text>\n",
                x, y, size, anchor, escape(t));
    }

    /** 90%, 99%, 99.9%, 99.99%... for one, two, three, four nines. */
    static String percentLabel(int nines) {
        if (nines == 1) {
            return "90%";
        }
        StringBuilder s = new StringBuilder("99");
        if (nines > 2) {
            s.append('.');
            for (int i = 2; i < nines; i++) {
                s.append('9');
            }
        }
        return s.append('%').toString();
    }

    /** The smallest of 1, 2, 2.5, 5 times a power of ten at or above {@code v} (1 for 0). */
    static double niceCeiling(double v) {
        if (!(v > 0)) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String label(double v) {
        // whole numbers (0, and the byte and count axes) without decimals
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%,.0f", v) : Report.num(v);
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
