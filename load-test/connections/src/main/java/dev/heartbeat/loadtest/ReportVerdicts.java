/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.util.ArrayList;
import java.util.List;

/**
 * The two verdicts at the top of a report, kept apart: <em>correctness</em>, what {@code --check} judges (the
 * list of what was checked, and what failed), and <em>performance</em>, the goals met or missed with their
 * ratios, where a missed goal of a run disturbed by other processes is not judged. Built from a
 * {@link Report}; one thread.
 */
final class ReportVerdicts {

    private final Report report;

    ReportVerdicts(Report report) {
        this.report = report;
    }

    /** What {@code --check} judged in this scenario, one item each. */
    List<String> checked() {
        Scenario s = report.scenario;
        List<String> c = new ArrayList<>();
        c.add("no premature close");
        c.add("every connection due to be closed (silent, dying" + (s.mix.percent(Role.HALFOPEN) > 0 ? ", halfopen"
                : "") + ") closed, none left open");
        c.add("no unexpected close");
        c.add("every close told the reason its role requires, and counted so by the servers");
        c.add("every connection opened");
        if (s.mix.percent(Role.FLOODER) > 0) {
            c.add("every flooder closed for PING_ABUSE, no one else");
        }
        if (s.agesConnections()) {
            c.add("every max-age close within its bounds");
        }
        if (s.mix.percent(Role.STALLED) > 0) {
            c.add("every stalled connection closed for WRITE_STALL (Heartbeat), no one else");
        }
        if (s.mix.percent(Role.SLOWREADER) > 0) {
            c.add("no slowreader closed, and one backed up");
        }
        if (s.storm && s.actionBudget > 0) {
            c.add("no second over the action budget, no close later than it allows");
        }
        if (s.drains()) {
            c.add("every connection drained, told DRAIN, the closes spread over the window");
        }
        return c;
    }

    /** "PASSED" or "FAILED (N)": the correctness verdict's headline. */
    String correctnessHeadline() {
        List<String> f = report.checkFailures();
        return f.isEmpty() ? "PASSED" : "FAILED (" + f.size() + (f.size() == 1 ? " failure)" : " failures)");
    }

    /** e.g. "3 met, 1 MISSED, 1 not judged (disturbed)": the performance verdict's headline. */
    String performanceHeadline() {
        int met = 0;
        int missed = 0;
        int notJudged = 0;
        int na = 0;
        for (String t : report.transports()) {
            for (Report.Goal g : report.goals(t)) {
                if (g.met() == null) {
                    na++;
                } else if (g.met()) {
                    met++;
                } else if (g.missed()) {
                    missed++;
                } else {
                    notJudged++;
                }
            }
        }
        List<String> parts = new ArrayList<>();
        parts.add(met + " met");
        parts.add(missed + " MISSED");
        if (notJudged > 0) {
            parts.add(notJudged + " not judged (the run was disturbed by other processes)");
        }
        if (na > 0) {
            parts.add(na + " n/a");
        }
        return String.join(", ", parts);
    }

    /** Both verdicts for the terminal, within {@link TextTable#WIDTH} columns. */
    String text() {
        StringBuilder s = new StringBuilder();
        s.append("CORRECTNESS (what --check judges): ").append(correctnessHeadline()).append('\n');
        wrapped(s, "checked: " + String.join("; ", checked()), "  ", "    ");
        for (String f : report.checkFailures()) {
            wrapped(s, "FAILED: " + f, "  ", "    ");
        }
        s.append('\n');
        s.append("PERFORMANCE (goals, from this run's measurements): ").append(performanceHeadline()).append('\n');
        for (String t : report.transports()) {
            for (Report.Goal g : report.goals(t)) {
                wrapped(s, t + "  " + g.verdict() + "  " + g.goal() + ": " + g.measured() + " (target " + g.target()
                        + ")", "  ", "    ");
            }
        }
        return s.toString();
    }

    /** Both verdicts as Markdown. */
    String markdown() {
        StringBuilder s = new StringBuilder();
        s.append("## Correctness (what --check judges): ").append(correctnessHeadline()).append("\n\n");
        s.append("Checked: ").append(String.join("; ", checked())).append(".\n\n");
        for (String f : report.checkFailures()) {
            s.append("- FAILED: ").append(f).append('\n');
        }
        s.append("\n## Performance (goals, from this run's measurements): ").append(performanceHeadline())
                .append("\n\n");
        for (String t : report.transports()) {
            for (Report.Goal g : report.goals(t)) {
                s.append("- ").append(t).append(", ").append(g.verdict()).append(": ").append(g.goal()).append(": ")
                        .append(g.measured()).append(" (target ").append(g.target()).append(")\n");
            }
        }
        return s.append('\n').toString();
    }

    /** Both verdicts as two HTML sections, side by side. */
    String html() {
        StringBuilder s = new StringBuilder();
        boolean passed = report.checkFailures().isEmpty();
        s.append("<div class=\"verdicts\">\n<section class=\"verdict\" id=\"correctness\">\n<h2>Correctness "
                + "<small>what --check judges</small>: <span class=\"").append(passed ? "met" : "missed").append("\">")
                .append(esc(correctnessHeadline())).append("</span></h2>\n<p>Checked:</p>\n<ul>\n");
        for (String c : checked()) {
            s.append("<li>").append(esc(c)).append("</li>\n");
        }
        s.append("</ul>\n");
        if (!passed) {
            s.append("<p>Failed:</p>\n<ul>\n");
            for (String f : report.checkFailures()) {
                s.append("<li class=\"missed\">").append(esc(f)).append("</li>\n");
            }
            s.append("</ul>\n");
        }
        s.append("</section>\n<section class=\"verdict\" id=\"performance\">\n<h2>Performance <small>goals, from "
                + "this run's measurements</small>: ").append(esc(performanceHeadline())).append("</h2>\n<ul>\n");
        for (String t : report.transports()) {
            for (Report.Goal g : report.goals(t)) {
                String cls = g.met() == null ? "na" : g.met() ? "met" : g.missed() ? "missed" : "na";
                s.append("<li>").append(esc(t)).append(", <span class=\"").append(cls).append("\">")
                        .append(esc(g.verdict())).append("</span>: ").append(esc(g.goal())).append(": ")
                        .append(esc(g.measured())).append(" (target ").append(esc(g.target())).append(")</li>\n");
            }
        }
        return s.append("</ul>\n</section>\n</div>\n").toString();
    }

    private static void wrapped(StringBuilder s, String text, String first, String next) {
        List<String> lines = TextTable.wrap(text, TextTable.WIDTH - next.length());
        for (int i = 0; i < lines.size(); i++) {
            s.append(i == 0 ? first : next).append(lines.get(i)).append('\n');
        }
    }

    private static String esc(String s) {
        return SvgChart.escape(s);
    }
}
