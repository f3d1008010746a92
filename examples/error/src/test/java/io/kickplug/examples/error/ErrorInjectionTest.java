package io.kickplug.examples.error;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.sdk.testkit.InProcessDevice;
import io.kickplug.sdk.testkit.KitIo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** nbdkit-error-filter(1)'s rules, on a backend that records what reaches it, and through the real device. */
class ErrorInjectionTest {

    /** Completes everything at once, counting what reached it. */
    static final class CountingBackend implements AsyncBlockBackend {
        int reached;

        @Override
        public void submit(BackendIo io) {
            reached++;
            for (var b : io.buffers()) {
                b.position(b.limit());
            }
            io.complete(null);
        }

        @Override
        public String kind() {
            return "counting";
        }

        @Override
        public long size() {
            return 1 << 20;
        }

        @Override
        public boolean readOnly() {
            return false;
        }

        @Override
        public void close() {
        }
    }

    private static IOException run(AsyncBlockBackend b, KitIo io) {
        b.submit(io);
        return io.await(5);
    }

    @Test
    void aKindAtFullRateFailsWithItsErrnoAndOtherKindsPass() {
        AtomicReference<ErrorSettings> s = new AtomicReference<>(ErrorSettings.NONE.with(Map.of(
                "error", "EIO", "error-pwrite", "ENOSPC", "error-pwrite-rate", "100%")));
        CountingBackend inner = new CountingBackend();
        AsyncBlockBackend b = new ErrorFilter(d -> s.get()).wrap("d0", inner);
        IOException e = run(b, KitIo.write(0, new byte[4096]));
        assertNotNull(e);
        assertTrue(e.getMessage().startsWith("ENOSPC"), e.getMessage());
        assertEquals(0, inner.reached, "a failed write never reaches the backend");
        assertNull(run(b, KitIo.read(0, 4096)));
        assertNull(run(b, KitIo.flush()));
        assertEquals(2, inner.reached);
    }

    @Test
    void aRateFailsThatShareOfOperations() {
        ErrorSettings s = ErrorSettings.NONE.with(Map.of("error-rate", "0.25"));
        CountingBackend inner = new CountingBackend();
        ErrorFilter filter = new ErrorFilter(d -> s);
        AsyncBlockBackend b = filter.wrap("d0", inner);
        int failed = 0;
        for (int i = 0; i < 4000; i++) {
            failed += run(b, KitIo.read(0, 512)) == null ? 0 : 1;
        }
        // binomial(4000, 0.25): mean 1000, standard deviation 27; 8 deviations either way
        assertTrue(failed > 780 && failed < 1220, "failed " + failed);
        assertEquals(4000 - failed, inner.reached);
        assertEquals((long) failed, filter.stats("d0").get("injected_pread"));
    }

    @Test
    void withATriggerFileErrorsComeOnlyWhileItExists(@TempDir Path dir) throws Exception {
        Path trigger = dir.resolve("fail-now");
        ErrorSettings s = ErrorSettings.NONE.with(Map.of("error-rate", "100%", "error-file", trigger.toString()));
        AsyncBlockBackend b = new ErrorFilter(d -> s).wrap("d0", new CountingBackend());
        assertNull(run(b, KitIo.write(0, new byte[512])));
        Files.createFile(trigger);
        assertNotNull(run(b, KitIo.write(0, new byte[512])));
        Files.delete(trigger);
        assertNull(run(b, KitIo.write(0, new byte[512])));
    }

    @Test
    void settingsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> ErrorSettings.NONE.with(Map.of("error-rate", "120%")));
        assertThrows(IllegalArgumentException.class, () -> ErrorSettings.NONE.with(Map.of("error", "EAGAIN")));
        assertThrows(IllegalArgumentException.class, () -> ErrorSettings.NONE.with(Map.of("error-read-rate", "1%")));
        ErrorSettings s = ErrorSettings.NONE.with(Map.of("error-rate", "1%", "error-flush-rate", "0"));
        assertEquals(0.01, s.injection(ErrorSettings.Kind.PWRITE).rate(), 1e-12);
        assertEquals(0, s.injection(ErrorSettings.Kind.FLUSH).rate());
        assertEquals(ErrorSettings.NONE.asMap(), s.with(Map.of("error-rate", "", "error-flush-rate", "")).asMap());
    }

    /**
     * The simulated guest's fio through the real device with 1% write errors: fio reports the errors and ends (no
     * request hangs); with the filter gone the disk serves fio verify again.
     */
    @Test
    void aGuestSeesTheErrorsAndTheDiskServesAgainWithoutTheFilter() {
        ErrorSettings onePercent = ErrorSettings.NONE.with(Map.of("error-pwrite-rate", "1%"));
        ErrorFilter filter = new ErrorFilter(d -> onePercent);
        try (InProcessDevice device = new InProcessDevice()) {
            device.addFilter(filter);
            device.attachMemory(1, 1);
            List<String> writes = List.of("--rw=randwrite", "--bs=4k", "--size=4m", "--ioengine=libaio",
                    "--iodepth=16", "--name=w");
            FioReport failing = device.fio(InProcessDevice.machine(1, true), writes);
            JobResult job = failing.jobs().get(0);
            long injected = filter.stats(InProcessDevice.DISK).get("injected_pwrite");
            assertTrue(injected > 0, "1% of 1024 writes failed: " + injected);
            assertEquals(JobResult.EIO, job.error(), "fio reports EIO:\n" + InProcessDevice.format(failing));
            assertTrue(!job.errors().isEmpty(), InProcessDevice.format(failing));

            device.removeFilter(filter);
            FioReport clean = device.fio(InProcessDevice.machine(1, true), List.of("--rw=randwrite", "--bs=4k",
                    "--size=1m", "--ioengine=libaio", "--iodepth=16", "--verify=crc32c", "--name=v"));
            InProcessDevice.checkVerified(clean, io.kickplug.sdk.testkit.Rule.FILTER_TRANSPARENT, "after removal");
        }
    }
}
