package io.kickplug.sdk.testkit;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.guest.engine.MachineConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * The contract of a {@link BackendFilter}: transparent to data (fio verify through it on the real device), passes the
 * backend's errors through, and completes a FLUSH only after the writes that completed before it reached the
 * backend. The filter is checked as configured by {@code filters} (a filter that injects faults is checked with its
 * faults off). {@link FilterContractTest} runs it all from a plugin's tests.
 */
public final class FilterContract {

    private final Supplier<? extends BackendFilter> filters;

    private FilterContract(Supplier<? extends BackendFilter> filters) {
        this.filters = Objects.requireNonNull(filters);
    }

    public static FilterContract of(Supplier<? extends BackendFilter> filters) {
        return new FilterContract(filters);
    }

    /** The real device with the filter in its chain, and the simulated guest's fio write-and-verify through it. */
    public void checkTransparentUnderFio(long seed) {
        BackendFilter filter = filters.get();
        try (InProcessDevice device = new InProcessDevice()) {
            device.addFilter(filter);
            device.attachMemory(2, 1);
            SplittableRandom r = new SplittableRandom(seed);
            MachineConfig config = InProcessDevice.machine(2, r.nextBoolean());
            for (int pass = 0; pass < StrategyContract.passes(); pass++) {
                List<String> args = List.of("--rw=randwrite", "--bs=" + (r.nextBoolean() ? "4k" : "16k"),
                        "--size=512k", "--ioengine=libaio", "--verify=crc32c", "--randseed=" + r.nextInt(1 << 20),
                        "--name=a", "--offset=0", "--iodepth=" + (1 + r.nextInt(32)),
                        "--name=b", "--offset=4m", "--iodepth=" + (1 + r.nextInt(8)));
                InProcessDevice.checkVerified(device.fio(config, args), Rule.FILTER_TRANSPARENT, filter.name()
                        + " pass " + pass + " " + args);
            }
            device.removeFilter(filter);
        }
    }

    /** A backend that fails every operation: each one through the filter fails too, exactly once. */
    public void checkPassesErrors() {
        BackendFilter filter = filters.get();
        RecordingBackend inner = new RecordingBackend(true);
        AsyncBlockBackend wrapped = filter.wrap(InProcessDevice.DISK, inner);
        try {
            for (KitIo io : List.of(KitIo.read(0, 4096), KitIo.write(4096, new byte[4096]), KitIo.flush())) {
                IOException e = Ops.run(wrapped, io);
                ContractViolation.check(e != null, Rule.FILTER_PASSES_ERRORS, io
                        + " succeeded through the filter although the backend failed it");
            }
        } finally {
            closeQuietly(wrapped);
        }
    }

    /**
     * Writes, each completed before the next is submitted, with FLUSHes among them: each FLUSH reaches the backend
     * after every write that completed successfully before it, and completes after it.
     */
    public void checkFlushOrder(long seed) {
        BackendFilter filter = filters.get();
        RecordingBackend inner = new RecordingBackend(false);
        AsyncBlockBackend wrapped = filter.wrap(InProcessDevice.DISK, inner);
        try {
            SplittableRandom r = new SplittableRandom(seed);
            List<String> completedWrites = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                if (r.nextInt(5) == 0) {
                    List<String> seenBefore = inner.seen();
                    KitIo flush = KitIo.flush();
                    IOException e = Ops.run(wrapped, flush);
                    if (e == null) {
                        List<String> seen = inner.seen();
                        int at = seen.lastIndexOf("FLUSH#" + inner.flushes());
                        ContractViolation.check(at >= 0, Rule.FILTER_KEEPS_FLUSH_ORDER,
                                "a FLUSH completed successfully without reaching the backend");
                        List<String> before = seen.subList(0, at);
                        for (String w : completedWrites) {
                            ContractViolation.check(before.contains(w), Rule.FILTER_KEEPS_FLUSH_ORDER, "the FLUSH "
                                    + "reached the backend before " + w + ", which completed before it was submitted"
                                    + " (backend saw " + seenBefore.size() + " operations before)");
                        }
                    }
                } else {
                    long offset = 4096L * r.nextInt(256);
                    KitIo write = KitIo.write(offset, Ops.pattern(4096, i));
                    if (Ops.run(wrapped, write) == null) {
                        completedWrites.add("WRITE@" + offset + "#" + i);
                        inner.label(write, "WRITE@" + offset + "#" + i);
                    }
                }
            }
        } finally {
            closeQuietly(wrapped);
        }
    }

    private static void closeQuietly(AsyncBlockBackend b) {
        try {
            b.close();
        } catch (IOException e) {
            throw new AssertionError("the filter's wrapper failed to close", e);
        }
    }

    /** An in-memory backend that logs what reaches it, completing later from another thread, or failing all. */
    static final class RecordingBackend implements AsyncBlockBackend {
        private final boolean failAll;
        private final List<String> seen = new ArrayList<>();
        private int flushes;
        private final java.util.concurrent.ExecutorService completer = java.util.concurrent.Executors
                .newSingleThreadExecutor(r -> {
                    Thread t = new Thread(r, "kit-recording-backend");
                    t.setDaemon(true);
                    return t;
                });

        RecordingBackend(boolean failAll) {
            this.failAll = failAll;
        }

        synchronized List<String> seen() {
            return List.copyOf(seen);
        }

        synchronized int flushes() {
            return flushes;
        }

        /** Names the entry a write made, once it completed (the filter may pass on another object). */
        synchronized void label(KitIo write, String label) {
            for (int i = seen.size() - 1; i >= 0; i--) {
                if (seen.get(i).equals("WRITE@" + write.offset())) {
                    seen.set(i, label);
                    return;
                }
            }
        }

        @Override
        public void submit(BackendIo io) {
            synchronized (this) {
                seen.add(io.op() == BackendIo.Op.FLUSH ? "FLUSH#" + ++flushes : io.op() + "@" + io.offset());
            }
            completer.execute(() -> {
                if (failAll) {
                    io.complete(new IOException("injected by the kit's failing backend"));
                    return;
                }
                if (io.op() == BackendIo.Op.READ) {
                    for (java.nio.ByteBuffer b : io.buffers()) {
                        b.position(b.limit());
                    }
                }
                if (io.op() == BackendIo.Op.WRITE) {
                    for (java.nio.ByteBuffer b : io.buffers()) {
                        b.position(b.limit());
                    }
                }
                io.complete(null);
            });
        }

        @Override
        public String kind() {
            return "kit-recording";
        }

        @Override
        public long size() {
            return BackendContract.SIZE;
        }

        @Override
        public boolean readOnly() {
            return false;
        }

        @Override
        public void close() {
            completer.shutdown();
        }
    }
}
