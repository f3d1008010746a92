package io.kickplug.virtio.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A child process (the real-guest harness: QEMU after the script's exec) whose output, stderr included, is
 * collected line by line by a daemon thread, so a test can wait for a line, search the output and show it
 * all when an assertion fails. Its stdin is writable ({@link #say}), which for QEMU is the guest's serial
 * console.
 */
public final class OutputProcess {

    public final Process process;
    private final List<String> out = Collections.synchronizedList(new ArrayList<>());
    private final CompletableFuture<Void> eof = new CompletableFuture<>();
    /** The exit status once {@link #finish} returned; -1 before. */
    public int exitCode = -1;

    private OutputProcess(Process process, String name) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    out.add(line);
                    synchronized (this) {
                        notifyAll();
                    }
                }
            } catch (IOException e) {
                out.add("(output ended: " + e + ")");
            } finally {
                eof.complete(null);
                synchronized (this) {
                    notifyAll();
                }
            }
        }, name + "-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code command} in the C locale (so tools print what the test parses). */
    public static OutputProcess start(String name, List<String> command) throws IOException {
        return start(name, command, java.util.Map.of());
    }

    /** Starts {@code command} in the C locale with {@code env} added to the environment. */
    public static OutputProcess start(String name, List<String> command, java.util.Map<String, String> env)
            throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("LC_ALL", "C");
        pb.environment().putAll(env);
        return new OutputProcess(pb.start(), name);
    }

    /** Writes a line to the process's stdin. */
    public void say(String line) throws IOException {
        OutputStream in = process.getOutputStream();
        in.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
        in.flush();
    }

    /** Waits for the process to end (killing it after {@code seconds}) and for the rest of its output. */
    public void finish(long seconds) throws Exception {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            out.add("(killed after " + seconds + " s)");
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
        eof.get(30, TimeUnit.SECONDS);
        exitCode = process.exitValue();
    }

    /**
     * Waits up to {@code seconds} for a line containing {@code text}; false when it did not come (or the output
     * ended without it).
     */
    public synchronized boolean awaitLine(String text, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!has(text)) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || eof.isDone()) {
                return has(text);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    /** Whether a line contains {@code text}. */
    public boolean has(String text) {
        synchronized (out) {
            return out.stream().anyMatch(l -> l.contains(text));
        }
    }

    /** The lines starting with {@code prefix} (a modifiable copy). */
    public List<String> lines(String prefix) {
        synchronized (out) {
            return out.stream().filter(l -> l.startsWith(prefix)).collect(Collectors.toCollection(ArrayList::new));
        }
    }

    /** The whole output so far. */
    public String text() {
        synchronized (out) {
            return String.join("\n", out);
        }
    }
}
