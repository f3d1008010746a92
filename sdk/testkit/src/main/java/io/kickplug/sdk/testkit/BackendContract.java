package io.kickplug.sdk.testkit;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.guest.engine.MachineConfig;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;

/**
 * The contract of a backend ({@link BackendFactory} and the {@link BlockBackend} or {@link AsyncBlockBackend} it
 * opens): data written reads back, a FLUSH completes after the writes before it, every operation completes exactly
 * once (from several submitting threads at once), failures are IOExceptions (the device's VIRTIO_BLK_S_IOERR),
 * operations beyond the size and writes to a read-only backend are refused, and the real device with the simulated
 * guest's fio verify works on it. {@link BackendContractTest} runs it all from a plugin's tests.
 */
public final class BackendContract {

    static final long SIZE = 16L << 20;

    private final BackendFactory factory;
    private BiFunction<Long, Boolean, BackendSpec> specs;

    private BackendContract(BackendFactory factory) {
        this.factory = Objects.requireNonNull(factory);
        this.specs = (size, readOnly) -> new BackendSpec(factory.kind(), null, size, readOnly);
    }

    /** The contract of the backends {@code factory} opens (by default from a spec with no path). */
    public static BackendContract of(BackendFactory factory) {
        return new BackendContract(factory);
    }

    /** How to describe a backend of a size, read-only or not (a path, an export name, ...). */
    public BackendContract specs(BiFunction<Long, Boolean, BackendSpec> specs) {
        this.specs = Objects.requireNonNull(specs);
        return this;
    }

    private BlockBackend open(boolean readOnly) {
        try {
            BlockBackend b = factory.open(specs.apply(SIZE, readOnly));
            ContractViolation.check(b.size() == SIZE, Rule.BOUNDS_REFUSED, "opened for " + SIZE + " bytes, size() is "
                    + b.size());
            ContractViolation.check(b.readOnly() == readOnly, Rule.READ_ONLY_REFUSED, "opened read-only="
                    + readOnly + ", readOnly() is " + b.readOnly());
            return b;
        } catch (IOException e) {
            throw new AssertionError("the factory cannot open " + specs.apply(SIZE, readOnly), e);
        }
    }

    private static void close(BlockBackend b) {
        try {
            b.close();
        } catch (IOException e) {
            throw new AssertionError("close failed", e);
        }
    }

    /** Random writes, each read back; a FLUSH after them; everything reads back after it. */
    public void checkDataAndFlush(long seed) {
        BlockBackend b = open(false);
        try {
            SplittableRandom r = new SplittableRandom(seed);
            List<long[]> written = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                int length = 512 * (1 + r.nextInt(64));
                long offset = 512L * r.nextInt((int) ((SIZE - length) / 512));
                long dataSeed = r.nextLong();
                IOException e = Ops.run(b, KitIo.write(offset, Ops.pattern(length, dataSeed)));
                ContractViolation.check(e == null, Rule.DATA_INTACT, "write of " + length + " at " + offset
                        + " failed: " + e);
                written.removeIf(w -> w[0] < offset + length && offset < w[0] + w[1]);
                written.add(new long[] {offset, length, dataSeed});
                ContractViolation.check(Arrays.equals(Ops.pattern(length, dataSeed), Ops.read(b, offset, length)),
                        Rule.DATA_INTACT, length + " bytes written at " + offset + " read back different");
            }
            KitIo flush = KitIo.flush();
            IOException e = Ops.run(b, flush);
            ContractViolation.check(e == null, Rule.FLUSH_ORDER, "FLUSH failed: " + e);
            for (long[] w : written) {
                ContractViolation.check(Arrays.equals(Ops.pattern((int) w[1], w[2]), Ops.read(b, w[0], (int) w[1])),
                        Rule.FLUSH_ORDER, w[1] + " bytes written at " + w[0] + " before the FLUSH read back different");
            }
        } finally {
            close(b);
        }
    }

    /** 4 threads submit 250 random operations each at once; each completes exactly once. */
    public void checkExactlyOnce(long seed) {
        BlockBackend b = open(false);
        try {
            List<KitIo> all = java.util.Collections.synchronizedList(new ArrayList<>());
            List<CompletableFuture<Void>> threads = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                SplittableRandom r = new SplittableRandom(seed + t);
                threads.add(CompletableFuture.runAsync(() -> {
                    for (int i = 0; i < 250; i++) {
                        int length = 512 * (1 + r.nextInt(16));
                        long offset = 512L * r.nextInt((int) ((SIZE - length) / 512));
                        KitIo io = switch (r.nextInt(5)) {
                            case 0, 1 -> KitIo.write(offset, Ops.pattern(length, i));
                            case 2 -> KitIo.flush();
                            default -> KitIo.read(offset, length);
                        };
                        all.add(io);
                        if (b instanceof AsyncBlockBackend async) {
                            async.submit(io);
                            if (r.nextInt(4) == 0) {
                                async.unplug();
                            }
                        } else {
                            Ops.run(b, io);
                        }
                    }
                    if (b instanceof AsyncBlockBackend async) {
                        async.unplug();
                    }
                }));
            }
            CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            for (KitIo io : all) {
                ContractViolation.check(io.await(Ops.WAIT_SECONDS) == null, Rule.COMPLETED_EXACTLY_ONCE,
                        io + " failed");
            }
            // Late duplicates: one more round trip through the backend lets a stray second completion show.
            Ops.run(b, KitIo.flush());
            for (KitIo io : all) {
                io.checkOnce();
            }
        } catch (ContractViolation v) {
            throw v;
        } catch (Exception e) {
            throw new AssertionError("submitting threads failed", e);
        } finally {
            close(b);
        }
    }

    /** Beyond the size: refused with an IOException; read-only: writes, write-zeroes and discards refused. */
    public void checkRefusals() {
        BlockBackend rw = open(false);
        try {
            for (KitIo io : List.of(KitIo.read(SIZE, 512), KitIo.write(SIZE - 512, new byte[1024]),
                    KitIo.read(SIZE - 512, 1024))) {
                ContractViolation.check(Ops.run(rw, io) != null, Rule.BOUNDS_REFUSED, io + " on a backend of "
                        + SIZE + " bytes succeeded");
            }
        } finally {
            close(rw);
        }
        BlockBackend ro = open(true);
        try {
            List<KitIo> writes = new ArrayList<>(List.of(KitIo.write(0, new byte[4096])));
            if (ro.supportsWriteZeroes()) {
                writes.add(KitIo.writeZeroes(0, 4096));
            }
            if (ro.supportsDiscard()) {
                writes.add(KitIo.discard(0, 4096));
            }
            for (KitIo io : writes) {
                ContractViolation.check(Ops.run(ro, io) != null, Rule.READ_ONLY_REFUSED, io
                        + " on a read-only backend succeeded");
            }
            ContractViolation.check(Ops.run(ro, KitIo.read(0, 4096)) == null, Rule.READ_ONLY_REFUSED,
                    "a read-only backend refused a read");
        } finally {
            close(ro);
        }
    }

    /** The real device on the backend, 2 queues, and the simulated guest's fio write-and-verify. */
    public void checkUnderFio(long seed) {
        try (InProcessDevice device = new InProcessDevice(factory)) {
            device.attach(specs.apply(SIZE, false), 2, 1);
            SplittableRandom r = new SplittableRandom(seed);
            MachineConfig config = InProcessDevice.machine(2, true);
            for (int pass = 0; pass < StrategyContract.passes(); pass++) {
                List<String> args = List.of("--rw=randwrite", "--bs=" + (r.nextBoolean() ? "4k" : "64k"),
                        "--size=1m", "--ioengine=libaio", "--verify=crc32c", "--randseed=" + r.nextInt(1 << 20),
                        "--name=a", "--offset=0", "--iodepth=" + (1 + r.nextInt(32)),
                        "--name=b", "--offset=8m", "--iodepth=" + (1 + r.nextInt(8)));
                InProcessDevice.checkVerified(device.fio(config, args), Rule.DATA_INTACT, factory.kind()
                        + " pass " + pass + " " + args);
            }
        }
    }
}
