/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.PrintStream;
import java.util.Collections;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The live progress line on the terminal: rewritten in place on an interactive terminal, otherwise
 * (a pipe, CI) printed as a new line every few seconds so logs stay short. Used by the coordinator's
 * thread only.
 */
final class Progress {

    private static final long PLAIN_PERIOD_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final PrintStream out;
    private final boolean interactive;
    private long lastPlain = System.nanoTime() - PLAIN_PERIOD_NANOS;
    private int lastLength;

    Progress(PrintStream out, boolean interactive) {
        this.out = out;
        this.interactive = interactive;
    }

    /** Shows the current state; may be called as often as wished. */
    void show(String line) {
        if (interactive) {
            StringBuilder s = new StringBuilder("\r").append(line);
            for (int i = line.length(); i < lastLength; i++) {
                s.append(' ');
            }
            lastLength = line.length();
            out.print(s);
            out.flush();
        } else if (System.nanoTime() - lastPlain >= PLAIN_PERIOD_NANOS) {
            lastPlain = System.nanoTime();
            out.println(line);
        }
    }

    /** Prints a line that stays: ends the in-place line first. */
    void println(String line) {
        if (interactive && lastLength > 0) {
            out.print("\r");
            for (int i = 0; i < lastLength; i++) {
                out.print(' ');
            }
            out.print("\r");
            lastLength = 0;
        }
        out.println(line);
        out.flush();
        lastPlain = System.nanoTime() - PLAIN_PERIOD_NANOS;
    }

    /** 12,345 */
    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** 1m05s, 42s */
    static String seconds(double s) {
        if (Double.isNaN(s) || s < 0) {
            return "?";
        }
        long whole = Math.round(s);
        return whole >= 60 ? (whole / 60) + "m" + String.format(Locale.ROOT, "%02d", whole % 60) + "s" : whole + "s";
    }

    /** The line that follows a run window: elapsed of total, and the children's counts so far. */
    static String runLine(String label, String verb, long start, long end, ChildMessage.ProgressUpdate p) {
        ChildMessage.ProgressUpdate t = ChildMessage.ProgressUpdate.sum(Collections.singletonList(p));
        double elapsed = Math.min(end - start, Math.max(0, System.nanoTime() - start)) / 1e9;
        return String.format(Locale.ROOT, "%s%s%s / %s: %s closed by the server, %s premature, %s unexpected, "
                + "%s echoes", label, verb, seconds(elapsed), seconds((end - start) / 1e9), count(t.closed()),
                count(t.premature()), count(t.unexpected()), count(t.echoes()));
    }
}
