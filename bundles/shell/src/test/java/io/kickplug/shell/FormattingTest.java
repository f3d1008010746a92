package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.DeviceStatus;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FormattingTest {

    static DiskInfo disk(String name, long size, String backend, int queues, int status, long completed) {
        return new DiskInfo(name, size, backend, false, TransportKind.MMIO, queues, 256, 1, status, completed, 0, null,
                queues == 1 ? List.of(List.of(0)) : List.of(List.of(0, 2), List.of(1, 3)),
                queues == 1 ? TrackedLockKind.MUTEX : TrackedLockKind.SHARDED);
    }

    @Test
    void diskTableAlignsColumns() {
        String table = DiskTable.format(List.of(disk("d1", 64 << 20, "memory", 1, 0, 0),
                disk("scratch", 1L << 30, "null", 4, 15, 123456)));
        assertEquals(String.join("\n",
                "NAME     SIZE    BACKEND  TRANSPORT  QUEUES  STATUS  COMPLETED  LOCK     MAPPING",
                "d1       64 MiB  memory   mmio       1x256   reset           0  mutex    0",
                "scratch  1 GiB   null     mmio       4x256   live       123456  sharded  0,2;1,3"), table);
    }

    @Test
    void emptyDiskTableSaysSo() {
        assertEquals("no disks attached", DiskTable.format(List.of()));
    }

    @Test
    void statusNamesTheBits() {
        assertEquals("reset", DeviceStatusText.describe(0));
        assertEquals("live", DeviceStatusText.describe(15));
        assertEquals("ACK|DRIVER|FEATURES_OK", DeviceStatusText.describe(11));
        assertEquals("ACK|DRIVER|FEATURES_OK|DRIVER_OK|NEEDS_RESET",
                DeviceStatusText.describe(15 | DeviceStatus.DEVICE_NEEDS_RESET));
        assertEquals("ACK|DRIVER|FAILED|0x20", DeviceStatusText.describe(3 | 128 | 32));
    }

    @Test
    void ioReportShowsRatesAndCounters() {
        IoPassResult r = new IoPassResult("d1", 512, 1 << 20, 50_000_000L, 0, 100, 256);
        String text = IoReport.format(new IoPassOptions(4096, 32, 512 << 10), r);
        assertEquals(String.join("\n",
                "d1: write+read+verify of 512 KiB, bs 4 KiB, depth 32",
                "requests    512",
                "elapsed     50.0 ms",
                "IOPS        10240",
                "MiB/s       20.0",
                "mismatches  0",
                "interrupts  100 (0.20 per request)",
                "notifies    256 (0.50 per request)"), text.replace(System.lineSeparator(), "\n"));
    }

    @Test
    void mismatchErrorIsOneLine() {
        IoPassResult r = new IoPassResult("d1", 512, 1 << 20, 1, 3, 1, 1);
        assertEquals("d1: 3 blocks read back differently from what was written (512 requests, 512 KiB)",
                IoReport.mismatchError(r));
    }

    @Test
    void attachArgsBuildASpec() {
        DiskSpec spec = AttachArgs.spec("d1", "64M", "2", "128", "1", "mmio", "null");
        assertEquals("d1", spec.name());
        assertEquals(64 << 20, spec.backend().sizeBytes());
        assertEquals("null", spec.backend().kind());
        assertEquals(TransportKind.MMIO, spec.transport());
        assertEquals(2, spec.numQueues());
        assertEquals(128, spec.queueSize());
        assertEquals(DiskSpec.DEFAULT_GUEST_MEMORY, spec.guestMemoryBytes());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "abc | 1 | 1 | mmio | memory | invalid size 'abc': expected bytes with an optional K, M, G or T suffix",
        "1M  | x | 1 | mmio | memory | invalid --queues 'x': expected a positive integer",
        "1M  | 1 | 0 | mmio | memory | invalid --iothreads '0': expected a positive integer",
        "1M  | 1 | 1 | mmio | disk   | unknown backend 'disk' (expected file, memory, null, nbd or rbd)",
        "1M  | 1 | 1 | mmio | file   | the file backend needs --file PATH",
        "1M  | 1 | 1 | usb  | memory | unknown transport 'usb' (expected mmio, pci or vhost-user)",
    })
    void attachArgsRejectBadValuesWithOneLine(String size, String queues, String ioThreads, String transport,
            String backend, String message) {
        assertEquals(message, assertThrows(IllegalArgumentException.class,
                () -> AttachArgs.spec("d1", size, queues, "256", ioThreads, transport, backend)).getMessage());
    }

    @Test
    void attachDescriptionNamesWhatWasAttached() {
        DiskInfo info = new DiskInfo("d1", 64 << 20, "memory", false, TransportKind.MMIO, 2, 256, 1, 0, 0, 0);
        assertEquals("attached d1: 64 MiB memory disk on mmio, 2 queues of 256, 1 I/O thread",
                AttachArgs.describe(info));
    }
}
