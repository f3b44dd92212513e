/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;

/**
 * A child process's side of {@link ChildProcess}: JSON messages out on stdout, one per line;
 * commands in on stdin, one per line; and the promises that bound the child's life. It ends itself
 * (exit status 3) when its parent exits, when stdin closes, or when its own deadline passes, so no
 * child outlives the load test even if the coordinator is killed outright.
 *
 * <p>Thread-safe: {@link #send} may be called from any thread.
 */
final class ParentLink {

    /** Exit status of a child that ended itself because its parent or its deadline went. */
    static final int ORPHANED = 3;

    private final PrintStream out;
    private final BlockingQueue<String> commands = new LinkedBlockingQueue<>();

    private ParentLink(PrintStream out) {
        this.out = out;
    }

    /**
     * Takes over stdout and stdin, and starts the watchers.
     *
     * @param deadlineNanos on the {@link System#nanoTime()} clock, when this process halts regardless
     */
    static ParentLink start(long deadlineNanos) {
        ParentLink link = new ParentLink(new PrintStream(System.out, false, StandardCharsets.UTF_8));
        // Anything else printing to stdout would break the protocol: route it to stderr.
        System.setOut(System.err);
        Thread stdin = new Thread(link::readCommands, "parent-link-stdin");
        stdin.setDaemon(true);
        stdin.start();
        ProcessHandle.current().parent().ifPresent(p -> p.onExit().thenRun(() -> halt("the parent process exited")));
        Thread watchdog = new Thread(() -> {
            long left;
            while ((left = deadlineNanos - System.nanoTime()) > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
                } catch (InterruptedException e) {
                    return;
                }
            }
            halt("its deadline passed");
        }, "parent-link-deadline");
        watchdog.setDaemon(true);
        watchdog.start();
        return link;
    }

    /** The body of a child process: its spec, and the link to report through. */
    interface ChildBody<S> {
        void run(S spec, ParentLink link) throws Exception;
    }

    /**
     * A child process's {@code main}: reads the spec (JSON, the one argument), starts the link with
     * the spec's deadline, runs the body and exits: 0 when it returns, 1 after reporting what it threw,
     * 2 for a bad command line.
     */
    static <S> void runChild(String name, String[] args, Class<S> specType, ToLongFunction<S> deadlineNs,
            ChildBody<S> body) {
        if (args.length != 1) {
            System.err.println("usage: " + name + " SPEC_JSON (started by the load test, not by hand)");
            System.exit(2);
        }
        S spec = JsonCodec.read(args[0], specType);
        ParentLink link = start(deadlineNs.applyAsLong(spec));
        try {
            body.run(spec, link);
            System.exit(0);
        } catch (Throwable t) {
            t.printStackTrace();
            link.sendError(t);
            System.exit(1);
        }
    }

    private static void halt(String why) {
        System.err.println("load-test child: stopping: " + why);
        System.err.flush();
        Runtime.getRuntime().halt(ORPHANED);
    }

    private void readCommands() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                commands.add(line.trim());
            }
        } catch (IOException e) {
            // treated as the end of input
        }
        halt("stdin closed");
    }

    /** Prints one message. */
    void send(ChildMessage message) {
        String line = JsonCodec.write(message);
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    /** Reports a failure the coordinator shows with the child's log. */
    void sendError(Throwable t) {
        send(new ChildMessage.Failed(t.toString()));
    }

    /**
     * Waits for the next command starting with {@code word}, ignoring others.
     *
     * @throws IllegalStateException if none comes within the timeout
     */
    String awaitCommand(String word, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException("no '" + word + "' command from the coordinator in time");
            }
            String c = commands.poll(left, TimeUnit.NANOSECONDS);
            if (c != null && (c.equals(word) || c.startsWith(word + " "))) {
                return c;
            }
        }
    }

    /** Prints {@code progress.get()} every {@code periodMillis} on a daemon thread, until the process ends. */
    void sendEvery(long periodMillis, Supplier<? extends ChildMessage> progress) {
        Thread t = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(periodMillis);
                } catch (InterruptedException e) {
                    return;
                }
                send(progress.get());
            }
        }, "parent-link-progress");
        t.setDaemon(true);
        t.start();
    }

    /** Sleeps until a moment on the shared clock. */
    static void sleepUntil(long nanos) throws InterruptedException {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
        }
    }
}
