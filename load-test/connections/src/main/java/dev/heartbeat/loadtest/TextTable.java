/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.List;

/**
 * A table in aligned columns for the terminal, within a given width: columns too wide for it are narrowed,
 * widest first, and their cells wrapped at spaces onto more lines. The first column is left-aligned, the
 * others right-aligned; a rule follows the first row. Stateless.
 */
final class TextTable {

    /** The terminal width the load test's console output keeps within. */
    static final int WIDTH = 120;
    private static final int GAP = 2;
    private static final int MIN_COLUMN = 8;

    private TextTable() {
    }

    /** The rows, the first being the header, within {@code width} columns (as far as {@link #MIN_COLUMN} allows). */
    static String render(List<String[]> rows, int width) {
        int n = 0;
        for (String[] r : rows) {
            n = Math.max(n, r.length);
        }
        int[] w = new int[n];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        while (total(w) > width) {
            int widest = 0;
            for (int i = 1; i < n; i++) {
                if (w[i] > w[widest]) {
                    widest = i;
                }
            }
            if (w[widest] <= MIN_COLUMN) {
                break;
            }
            w[widest]--;
        }
        StringBuilder s = new StringBuilder();
        for (int ri = 0; ri < rows.size(); ri++) {
            String[] r = rows.get(ri);
            List<List<String>> cells = new ArrayList<>();
            int height = 1;
            for (int i = 0; i < n; i++) {
                List<String> lines = wrap(i < r.length ? r[i] : "", w[i]);
                cells.add(lines);
                height = Math.max(height, lines.size());
            }
            for (int line = 0; line < height; line++) {
                StringBuilder l = new StringBuilder();
                for (int i = 0; i < n; i++) {
                    List<String> c = cells.get(i);
                    String text = line < c.size() ? c.get(line) : "";
                    String pad = " ".repeat(w[i] - text.length());
                    l.append(i == 0 ? text + pad : " ".repeat(GAP) + pad + text);
                }
                s.append(l.toString().stripTrailing()).append('\n');
            }
            if (ri == 0) {
                s.append("-".repeat(total(w))).append('\n');
            }
        }
        return s.toString();
    }

    /** {@code text} in lines of at most {@code width}, broken at spaces where it can be, else mid-word. */
    static List<String> wrap(String text, int width) {
        List<String> lines = new ArrayList<>();
        String rest = text;
        while (rest.length() > width) {
            int cut = rest.lastIndexOf(' ', width);
            if (cut <= 0) {
                lines.add(rest.substring(0, width));
                rest = rest.substring(width);
            } else {
                lines.add(rest.substring(0, cut));
                rest = rest.substring(cut + 1);
            }
        }
        lines.add(rest);
        return lines;
    }

    private static int total(int[] w) {
        int t = 0;
        for (int x : w) {
            t += x;
        }
        return t + GAP * (w.length - 1);
    }
}
