package io.kickplug.guest.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The real guest's serial console: lines QEMU prints ({@code -serial stdio}) and lines sent to the guest
 * (QEMU's stdin). {@link #start} runs QEMU; tests drive {@link RealGuestSteps} with their own console.
 */
interface GuestConsole extends AutoCloseable {

    /** Returned by {@link #readLine} when the guest's output ended (QEMU exited). */
    String END = "\u0000end";

    /** The next line, null when none came within {@code timeoutNanos}, {@link #END} when the output ended. */
    String readLine(long timeoutNanos) throws InterruptedException;

    /** Sends one line to the guest's console. */
    void writeLine(String line) throws IOException;

    /** The last lines read (at most 40), for error messages. */
    List<String> tail();

    @Override
    void close();

    /** Starts {@code command} (QEMU), its stderr merged into the console's lines. */
    static GuestConsole start(List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        return new ProcessConsole(p);
    }

    /** A console over a process's stdout and stdin; a daemon thread reads the lines. */
    final class ProcessConsole implements GuestConsole {
        private final Process process;
        private final OutputStream in;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final Deque<String> tail = new ArrayDeque<>();

        ProcessConsole(Process process) {
            this.process = process;
            this.in = process.getOutputStream();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = r.readLine(); line != null; line = r.readLine()) {
                        lines.add(line.replace("\r", ""));
                    }
                } catch (IOException e) {
                    lines.add("RG-CONSOLE-ERROR " + e.getMessage());
                } finally {
                    lines.add(END);
                }
            }, "kp-real-guest-console");
            reader.setDaemon(true);
            reader.start();
        }

        @Override
        public String readLine(long timeoutNanos) throws InterruptedException {
            String line = lines.poll(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS);
            if (line == END) {
                lines.add(END); // every later read sees the end too
            } else if (line != null) {
                synchronized (tail) {
                    tail.addLast(line);
                    if (tail.size() > 40) {
                        tail.removeFirst();
                    }
                }
            }
            return line;
        }

        @Override
        public void writeLine(String line) throws IOException {
            in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            in.flush();
        }

        @Override
        public List<String> tail() {
            synchronized (tail) {
                return List.copyOf(tail);
            }
        }

        /** Kills QEMU (the guest powers itself off after its last step; this is for errors and timeouts). */
        @Override
        public void close() {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
