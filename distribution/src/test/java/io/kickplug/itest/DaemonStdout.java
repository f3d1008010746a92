package io.kickplug.itest;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A daemon's stdout read on a thread of its own (a daemon thread): every line lands in {@link #lines};
 * {@link #running} completes at the launcher's {@code kickplug: running} line, or fails when stdout ends first.
 */
final class DaemonStdout {
    final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    final CompletableFuture<Void> running = new CompletableFuture<>();
    final Thread reader;

    /** Starts reading; {@code what} names the daemon in the failure ("daemon", "daemon a"). */
    DaemonStdout(Process process, String what) {
        reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    lines.add(line);
                    if (line.startsWith("kickplug: running")) {
                        running.complete(null);
                    }
                }
            } catch (IOException e) {
                running.completeExceptionally(e);
            }
            running.completeExceptionally(new AssertionError(what + " ended before it was running: " + lines));
        }, what.replace(' ', '-') + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }
}
