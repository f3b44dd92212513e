/*
 * Copyright 2026 the Heartbeat authors.
 * Licensed under the Apache License, Version 2.0; see the LICENSE file at the root of the project.
 */
package dev.heartbeat.loadtest;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A process the load test started (a demo server, a client worker, a local run), and the guarantee
 * that it does not outlive the load test: every live child is in one registry that a shutdown hook
 * destroys (Ctrl-C, SIGTERM, an exception leaving {@code main}), and {@link #close} destroys it in
 * the normal course. The children also stop by themselves when this process exits
 * ({@code --stop-with-parent}, or the workers' own watch of their parent).
 *
 * <p>The child's stderr goes to its log file. Its stdout is read line by line on a daemon thread:
 * JSON objects become {@link ChildMessage}s in {@link #messages()} (the latest progress update is kept apart
 * in {@link #lastProgress()}); other lines are copied to the log and kept for {@link #awaitLine}.
 * Thread-safe.
 */
final class ChildProcess implements AutoCloseable {

    private static final Set<ChildProcess> LIVE = ConcurrentHashMap.newKeySet();
    /** Every child this process started, live or not: a later run's window checks they are gone. */
    private static final Set<Long> STARTED = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ChildProcess::destroyAll, "load-test-children-cleanup"));
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final PrintStream logOut;
    private final BlockingQueue<ChildMessage> messages = new LinkedBlockingQueue<>();
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private volatile ChildMessage.ProgressUpdate lastProgress;
    private Thread reader;

    private ChildProcess(String name, Process process, Path log, PrintStream logOut) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.logOut = logOut;
    }

    /**
     * Starts a child; its stderr (and stdout lines that are not JSON) go to {@code log}.
     *
     * @throws IOException if it cannot be started
     */
    static ChildProcess start(String name, List<String> command, Path log) throws IOException {
        Files.createDirectories(log.getParent());
        Files.writeString(log, "# " + String.join(" ", command) + "\n", StandardCharsets.UTF_8);
        // Appending, as the child's stderr does: both writers' lines land whole, in order.
        PrintStream logOut = new PrintStream(Files.newOutputStream(log, StandardOpenOption.APPEND), true,
                StandardCharsets.UTF_8);
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.PIPE)
                .redirectOutput(ProcessBuilder.Redirect.PIPE);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            logOut.close();
            throw e;
        }
        ChildProcess child = new ChildProcess(name, p, log, logOut);
        LIVE.add(child);
        STARTED.add(p.pid());
        Thread reader = new Thread(child::readStdout, "load-test-stdout-" + name);
        reader.setDaemon(true);
        child.reader = reader;
        reader.start();
        return child;
    }

    private void readStdout() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("{")) {
                    ChildMessage m;
                    try {
                        m = JsonCodec.read(line, ChildMessage.class);
                    } catch (IllegalArgumentException e) {
                        logOut.println("# unparsable: " + line);
                        continue;
                    }
                    if (m instanceof ChildMessage.ProgressUpdate) {
                        lastProgress = (ChildMessage.ProgressUpdate) m;
                    } else {
                        logOut.println(JsonCodec.abbreviate(line));
                        messages.add(m);
                    }
                } else {
                    logOut.println(line);
                    lines.add(line);
                }
            }
        } catch (IOException e) {
            // the process is gone: its exit status tells the rest
        }
    }

    String name() {
        return name;
    }

    Path log() {
        return log;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** The latest progress message, or null before the first. */
    ChildMessage.ProgressUpdate lastProgress() {
        return lastProgress;
    }

    /** The child's JSON messages other than progress, in order. */
    BlockingQueue<ChildMessage> messages() {
        return messages;
    }

    /**
     * Waits for a stdout line (not JSON) starting with {@code prefix}.
     *
     * @throws IllegalStateException if the child exits or the timeout passes first, with its log's tail
     */
    String awaitLine(String prefix, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (System.nanoTime() - deadline < 0) {
            String line = lines.poll(50, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith(prefix)) {
                return line;
            }
            if (line == null && isGone() && lines.isEmpty()) {
                throw failure("exited with status " + process.exitValue() + " before printing '" + prefix + "...'");
            }
        }
        throw failure("printed no '" + prefix + "...' line within " + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos)
                + " s");
    }

    /**
     * Waits for the next JSON message of a type; an {@code error} message or the child's exit fails.
     *
     * @throws IllegalStateException with the child's error or its log's tail
     */
    <T extends ChildMessage> T awaitMessage(Class<T> type, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        String name = type.getSimpleName();
        while (System.nanoTime() - deadline < 0) {
            ChildMessage m = messages.poll(50, TimeUnit.MILLISECONDS);
            if (type.isInstance(m)) {
                return type.cast(m);
            }
            if (m instanceof ChildMessage.Failed) {
                throw failure("failed: " + ((ChildMessage.Failed) m).message());
            }
            if (m == null && isGone() && messages.isEmpty()) {
                throw failure("exited with status " + process.exitValue() + " before its " + name + " message");
            }
        }
        throw failure("sent no " + name + " message within " + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos) + " s");
    }

    /**
     * Checks the child is still running.
     *
     * @throws IllegalStateException if it exited, with its log's tail
     */
    void requireAlive() {
        if (isGone() && messages.isEmpty()) {
            throw failure("exited unexpectedly with status " + process.exitValue());
        }
        for (ChildMessage m : messages) {
            if (m instanceof ChildMessage.Failed) {
                throw failure("failed: " + ((ChildMessage.Failed) m).message());
            }
        }
    }

    /** Whether the child has exited and everything it printed has been read. */
    private boolean isGone() {
        if (process.isAlive()) {
            return false;
        }
        try {
            reader.join(TimeUnit.SECONDS.toMillis(2));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    /** Sends a line to the child's stdin; ignored if the child is gone. */
    void send(String line) {
        try {
            OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        } catch (IOException e) {
            // gone: requireAlive and the awaits report it
        }
    }

    IllegalStateException failure(String what) {
        return new IllegalStateException(name + " (pid " + process.pid() + ") " + what + "; its log " + log
                + " ends with:\n" + tail(log, 15));
    }

    static String tail(Path file, int lines) {
        try {
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            List<String> last = new ArrayList<>(all.subList(Math.max(0, all.size() - lines), all.size()));
            return "    " + String.join("\n    ", last);
        } catch (IOException | RuntimeException e) {
            return "    (unreadable: " + e + ")";
        }
    }

    /**
     * Asks the child to stop (SIGTERM), waits up to {@code graceNanos}, then kills it and anything it
     * started. Idempotent.
     *
     * @return the exit status, or -1 if it had to be killed
     */
    int stop(long graceNanos) {
        try {
            process.getOutputStream().close();
        } catch (IOException e) {
            // already closed
        }
        process.destroy();
        int status = -1;
        try {
            if (process.waitFor(graceNanos, TimeUnit.NANOSECONDS)) {
                status = process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (process.isAlive()) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            try {
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        LIVE.remove(this);
        logOut.flush();
        return status;
    }

    /**
     * Waits up to {@code timeoutNanos} for the child to exit by itself, then stops it.
     *
     * @return its exit status, or -1 if it had to be killed
     */
    int awaitExit(long timeoutNanos) throws InterruptedException {
        if (process.waitFor(timeoutNanos, TimeUnit.NANOSECONDS)) {
            LIVE.remove(this);
            return process.exitValue();
        }
        return stop(TimeUnit.SECONDS.toNanos(5));
    }

    @Override
    public void close() {
        stop(TimeUnit.SECONDS.toNanos(6));
    }

    /** The pids of every child started so far. */
    static Set<Long> started() {
        return Set.copyOf(STARTED);
    }

    /**
     * Waits up to {@code timeoutNanos} until no child started so far has a {@code /proc} entry left
     * (exited and reaped), so that one run's exiting processes do not run in the next run's window.
     *
     * @return the pids still there at the end (empty where there is no {@code /proc})
     */
    static List<Long> awaitAllGone(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            List<Long> left = new ArrayList<>();
            for (long pid : STARTED) {
                if (MachineCpu.process(pid) != null) {
                    left.add(pid);
                }
            }
            if (left.isEmpty() || System.nanoTime() - deadline >= 0) {
                return left;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    /** Kills every live child at once: the shutdown hook's job. */
    static void destroyAll() {
        for (ChildProcess c : LIVE) {
            c.process.descendants().forEach(ProcessHandle::destroyForcibly);
            c.process.destroyForcibly();
        }
        LIVE.clear();
    }
}
