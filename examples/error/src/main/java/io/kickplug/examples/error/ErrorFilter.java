package io.kickplug.examples.error;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.ForwardingAsyncBackend;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Function;

/**
 * nbdkit's error filter as a Kickplug {@link BackendFilter}: each operation of a disk fails, at its kind's rate,
 * before it reaches the backend, completed at once with an IOException naming the errno (the device answers the
 * guest VIRTIO_BLK_S_IOERR). Everything else passes through untouched, in order. {@code submit} runs on the queue's
 * I/O thread: it draws a random number and, with a trigger file set, checks that the file exists (one access(2)-like
 * call, as nbdkit does), and never blocks otherwise.
 */
public class ErrorFilter implements BackendFilter {

    public static final String NAME = "error";

    private final Function<String, ErrorSettings> settings;
    private final Map<String, AtomicLongArray> injected = new ConcurrentHashMap<>();

    /** Injects nothing (every disk at {@link ErrorSettings#NONE}). */
    public ErrorFilter() {
        this(disk -> ErrorSettings.NONE);
    }

    public ErrorFilter(Function<String, ErrorSettings> settings) {
        this.settings = settings;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
        AtomicLongArray counts = injected.computeIfAbsent(disk, d -> new AtomicLongArray(
                ErrorSettings.Kind.values().length));
        return new ForwardingAsyncBackend(backend) {
            @Override
            public void submit(BackendIo io) {
                ErrorSettings.Kind kind = ErrorSettings.Kind.of(io.op());
                ErrorSettings.Injection inj = settings.apply(disk).injection(kind);
                if (fails(inj)) {
                    counts.incrementAndGet(kind.ordinal());
                    io.complete(new IOException(inj.errno() + ": " + kind.key() + " failed, injected by the error "
                            + "filter"));
                    return;
                }
                view.submit(io);
            }
        };
    }

    private static boolean fails(ErrorSettings.Injection inj) {
        if (inj.rate() <= 0) {
            return false;
        }
        if (inj.rate() < 1 && ThreadLocalRandom.current().nextDouble() >= inj.rate()) {
            return false;
        }
        return inj.file() == null || Files.exists(Path.of(inj.file()));
    }

    /** Errors injected per kind: injected_pread, injected_pwrite, ... (for kp:stats). */
    @Override
    public Map<String, Long> stats(String disk) {
        AtomicLongArray counts = injected.get(disk);
        Map<String, Long> out = new LinkedHashMap<>();
        for (ErrorSettings.Kind k : ErrorSettings.Kind.values()) {
            out.put("injected_" + k.key(), counts == null ? 0 : counts.get(k.ordinal()));
        }
        return out;
    }
}
