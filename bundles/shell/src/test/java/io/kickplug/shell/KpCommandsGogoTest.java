package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.guest.GuestWorkloads;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.transport.ExportStatus;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.testkit.StubDiskManager;
import io.kickplug.shell.testkit.GogoShell;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The commands through Gogo's own parser (option names, defaults, conversions), with fake services. */
class KpCommandsGogoTest {

    private final Map<String, DiskInfo> attached = new LinkedHashMap<>();
    private final Map<String, DiskSpec> specs = new LinkedHashMap<>();
    private final List<IoPassOptions> passes = new ArrayList<>();
    private long nextMismatches;

    private final DiskManager disks = new StubDiskManager() {
        @Override
        public DiskInfo attach(DiskSpec spec) {
            specs.put(spec.name(), spec);
            DiskInfo info = new DiskInfo(spec.name(), spec.backend().sizeBytes(), spec.backend().kind(),
                    spec.backend().readOnly(), spec.transport(), spec.numQueues(), spec.queueSize(), spec.ioThreads(),
                    0, 0, 0, spec.backend().path(), spec.mapping(), spec.trackedLock(), spec.ring());
            attached.put(spec.name(), info);
            return info;
        }

        @Override
        public DiskInfo resize(String name, long newSizeBytes) {
            DiskInfo d = info(name);
            DiskInfo resized = new DiskInfo(d.name(), newSizeBytes, d.backend(), d.readOnly(), d.transport(),
                    d.numQueues(), d.queueSize(), d.ioThreads(), 0, 0, 0, d.path(), d.mapping(), d.trackedLock());
            attached.put(name, resized);
            return resized;
        }

        @Override
        public DiskInfo setTrackedLock(String name, TrackedLockKind kind) {
            DiskInfo d = info(name);
            DiskInfo switched = new DiskInfo(d.name(), d.sizeBytes(), d.backend(), d.readOnly(), d.transport(),
                    d.numQueues(), d.queueSize(), d.ioThreads(), 0, 0, 0, d.path(), d.mapping(), kind);
            attached.put(name, switched);
            return switched;
        }

        @Override
        public void detach(String name) {
            if (attached.remove(name) == null) {
                throw new DiskException("no disk named '" + name + "'");
            }
        }

        @Override
        public List<DiskInfo> list() {
            return List.copyOf(attached.values());
        }

        @Override
        public DiskInfo info(String name) {
            DiskInfo d = attached.get(name);
            if (d == null) {
                throw new DiskException("no disk named '" + name + "'");
            }
            return d;
        }
    };

    private final GuestWorkloads guest = (disk, options) -> {
        if (!attached.containsKey(disk)) {
            throw new DiskException("no disk named '" + disk + "'");
        }
        passes.add(options);
        long total = options.totalBytes() == 0 ? attached.get(disk).sizeBytes() : options.totalBytes();
        return new IoPassResult(disk, 2 * total / options.blockSize(), 2 * total, 1_000_000, nextMismatches, 3, 4);
    };

    @RegisterExtension
    final GogoShell shell = new GogoShell();

    @BeforeEach
    void setUp() {
        KpCommands commands = new KpCommands(disks);
        for (String f : new String[] {"attach", "detach", "disks", "resize"}) {
            shell.add("kp", commands, f);
        }
        shell.add("kp", new IoCommand(guest), "io");
        shell.add("kp", new TrackedLockCommand(disks), "tracked-lock");
    }

    @Test
    void attachWithDefaults() throws Exception {
        assertEquals("attached d1: 64 MiB memory disk on mmio, 1 queue of 256, 1 I/O thread", shell.run("kp:attach d1 64M"));
    }

    @Test
    void attachWithEveryOption() throws Exception {
        assertEquals("attached d2: 1 GiB null disk on mmio, 4 queues of 64, 2 I/O threads",
                shell.run("kp:attach --queues 4 --queue-size 64 --iothreads 2 --transport mmio --backend null d2 1G"));
        DiskInfo d = attached.get("d2");
        assertEquals(4, d.numQueues());
        assertEquals(64, d.queueSize());
        assertEquals(2, d.ioThreads());
        assertEquals("null", d.backend());
        shell.run("kp:attach --backend 'null' d3 1M");
        assertEquals("null", attached.get("d3").backend(), "quoted null is the string");
        shell.run("kp:attach --backend memory d4 1M");
        assertEquals("memory", attached.get("d4").backend());
    }

    @Test
    void attachAnRbdImageWithQemusOptionNames() throws Exception {
        shell.run("kp:attach --backend rbd --pool vms --namespace tenant1 --image disk1 --conf /etc/ceph/c.conf "
                + "--id kp --keyring /etc/ceph/kp.keyring r1");
        DiskSpec spec = specs.get("r1");
        assertEquals("rbd", spec.backend().kind());
        assertEquals(0, spec.backend().sizeBytes(), "the image's size");
        assertEquals(new io.kickplug.api.blk.RbdImage("vms", "tenant1", "disk1", null, "/etc/ceph/c.conf", "kp",
                "/etc/ceph/kp.keyring"), io.kickplug.api.blk.RbdImage.parse(spec.backend().path()));
        shell.run("kp:attach --backend rbd --pool rbd --image disk1 --snapshot s1 r2");
        assertTrue(specs.get("r2").backend().readOnly(), "a snapshot is served read-only");
        Exception missing = assertThrows(IllegalArgumentException.class,
                () -> shell.run("kp:attach --backend rbd --pool rbd r3"));
        assertEquals("an rbd disk needs an image (--pool P --image I)", missing.getMessage());
        Exception other = assertThrows(IllegalArgumentException.class,
                () -> shell.run("kp:attach --pool rbd m1 1M"));
        assertTrue(other.getMessage().contains("only for --backend rbd"), other.getMessage());
    }

    @Test
    void attachOnPci() throws Exception {
        assertEquals("attached p1: 64 MiB memory disk on pci, 4 queues of 256, 1 I/O thread",
                shell.run("kp:attach --transport pci --queues 4 p1 64M"));
        assertEquals(TransportKind.PCI, specs.get("p1").transport());
        shell.run("kp:attach --transport PCI p2 1M");
        assertEquals(TransportKind.PCI, specs.get("p2").transport(), "case-insensitive, as TransportKind.parse");
        Exception e = assertThrows(IllegalArgumentException.class, () -> shell.run("kp:attach --transport isa p3 1M"));
        assertEquals("unknown transport 'isa' (expected mmio, pci or vhost-user)", e.getMessage());
    }

    /** --ring: the virtqueue format the disk offers (VIRTIO 1.2 sections 2.7 and 2.8). */
    @Test
    void attachWithARingFormat() throws Exception {
        assertEquals("attached k1: 1 MiB memory disk on mmio, 1 queue of 256, 1 I/O thread, packed ring",
                shell.run("kp:attach --ring packed k1 1M"));
        assertEquals(io.kickplug.api.virtio.RingFormat.PACKED, specs.get("k1").ring());
        shell.run("kp:attach k2 1M");
        assertEquals(io.kickplug.api.virtio.RingFormat.SPLIT, specs.get("k2").ring(), "split by default");
        Exception e = assertThrows(IllegalArgumentException.class, () -> shell.run("kp:attach --ring ring k3 1M"));
        assertEquals("--ring: unknown ring format 'ring' (expected split or packed)", e.getMessage());
    }

    /** --avail-event: when the disk's split rings publish avail_event (VIRTIO 1.2 section 2.7.10). */
    @Test
    void attachWithAnAvailEventMode() throws Exception {
        shell.run("kp:attach --avail-event pop e1 1M");
        assertEquals(io.kickplug.api.virtio.AvailEventMode.POP, specs.get("e1").availEvent());
        shell.run("kp:attach e2 1M");
        assertEquals(io.kickplug.api.virtio.AvailEventMode.ENABLE, specs.get("e2").availEvent(), "as Linux vhost by default");
        Exception e = assertThrows(IllegalArgumentException.class,
                () -> shell.run("kp:attach --avail-event never e3 1M"));
        assertEquals("--avail-event: unknown avail_event mode 'never' (expected enable or pop)", e.getMessage());
    }

    @Test
    void attachWithABadSizeFailsWithOneLine() {
        Exception e = assertThrows(IllegalArgumentException.class, () -> shell.run("kp:attach d1 abc"));
        assertEquals("invalid size 'abc': expected bytes with an optional K, M, G or T suffix", e.getMessage());
        assertTrue(attached.isEmpty());
    }

    @Test
    void detachUnknownDiskIsTheDiskManagersMessage() {
        Exception e = assertThrows(DiskException.class, () -> shell.run("kp:detach nosuch"));
        assertEquals("no disk named 'nosuch'", e.getMessage());
    }

    @Test
    void disksListsAttachedDisks() throws Exception {
        shell.run("kp:attach d1 64M");
        shell.run("kp:attach --queues 2 d2 512K");
        String table = (String) shell.run("kp:disks");
        assertTrue(table.startsWith("NAME  SIZE     BACKEND"), table);
        assertTrue(table.contains("\nd2    512 KiB  memory   mmio       2x256"), table);
        assertEquals("detached d1", shell.run("kp:detach d1"));
        assertFalse(((String) shell.run("kp:disks")).contains("d1 "));
    }

    @Test
    void disksShowsEachExportWithItsConnectionState() throws Exception {
        shell.run("kp:attach d1 1M");
        shell.run("kp:attach d2 1M");
        ExportStatus vhost = () -> List.of(
                new ExportStatus.Export("d2", "vhost-user", "/run/d2.sock", "connected"),
                new ExportStatus.Export("gone", "vhost-user", "/run/gone.sock", "listening"));
        String table = new KpCommands(disks, List.of(vhost)).disks(false);
        String[] lines = table.split("\n");
        assertEquals("d2 export vhost-user: /run/d2.sock (connected)", lines[lines.length - 1], table);
        assertFalse(table.contains("gone"), "exports of disks not listed are left out: " + table);
        assertFalse(((String) shell.run("kp:disks")).contains("export"), "no export service: no export lines");
    }

    @Test
    void ioPassesOptionsAndPrintsTheResult() throws Exception {
        shell.run("kp:attach d1 1M");
        String report = (String) shell.run("kp:io --bs 8K --depth 4 --size 256K d1");
        assertEquals(List.of(new IoPassOptions(8192, 4, 256 << 10)), passes);
        assertTrue(report.startsWith("d1: write+read+verify of 256 KiB, bs 8 KiB, depth 4"), report);
        assertTrue(report.contains("requests    64"), report);
        assertTrue(report.contains("mismatches  0"), report);
        shell.run("kp:io d1");
        assertEquals(new IoPassOptions(4096, 32, 0), passes.get(1), "defaults: 4K, depth 32, whole disk");
    }

    @Test
    void ioFailsWhenBlocksMismatch() throws Exception {
        shell.run("kp:attach d1 1M");
        nextMismatches = 2;
        Exception e = assertThrows(IllegalStateException.class, () -> shell.run("kp:io d1"));
        assertEquals("d1: 2 blocks read back differently from what was written (512 requests, 1 MiB)",
                e.getMessage());
    }

    @Test
    void ioRejectsBadOptionValues() {
        assertEquals("invalid --depth 'many': expected a positive integer", shell.refusal("kp:io --depth many d1"));
        assertEquals("--bs: invalid size '4Q': expected bytes with an optional K, M, G or T suffix",
                shell.refusal("kp:io --bs 4Q d1"));
    }

    @Test
    void ioWithoutTheGuestBundleSaysSo() {
        IoCommand noGuest = new IoCommand(null);
        assertEquals("no simulated guest: the io.kickplug.guest bundle is not active",
                assertThrows(IllegalStateException.class, () -> noGuest.io("4K", "1", "0", false, "d1")).getMessage());
    }

    @Test
    void attachWithTheIssueFourOptions() throws Exception {
        assertEquals("attached f1: 0 B file (read-only) disk on mmio, 4 queues of 128, 2 I/O threads (0,2;1,3), "
                + "file /var/img/a.img, sharded tracked lock",
                shell.run("kp:attach --backend file --file /var/img/a.img --readonly --direct --queues 4 --queue-size 128 "
                        + "--iothreads 2 --mapping \"0,2;1,3\" --tracked-lock sharded --serial SN-1 --workers 3 f1"));
        DiskSpec f1 = specs.get("f1");
        assertEquals(new BackendSpec("file", "/var/img/a.img", 0, true, true), f1.backend());
        assertEquals(List.of(List.of(0, 2), List.of(1, 3)), f1.mapping());
        assertEquals(TrackedLockKind.SHARDED, f1.trackedLock());
        assertEquals("SN-1", f1.serial());
        assertEquals(3, f1.workers());
        shell.run("kp:attach --backend file --file /img/b.img f2 1G");
        assertEquals(1L << 30, specs.get("f2").backend().sizeBytes(), "a file disk may be given a size");
        shell.run("kp:attach --backend null --tracked-lock yielding n1 1M");
        DiskSpec n1 = specs.get("n1");
        assertEquals("null", n1.backend().kind(), "unquoted null is Gogo's null literal: the null backend");
        assertEquals(TrackedLockKind.YIELDING, n1.trackedLock());
        assertEquals(List.of(), n1.mapping(), "no --mapping: round-robin");
        assertNull(n1.serial());
        assertEquals(8, n1.workers());
        assertFalse(n1.backend().readOnly());
    }

    @Test
    void attachOptionErrors() {
        assertEquals("usage: kp:attach [options] NAME [SIZE]", shell.refusal("kp:attach m1 1M 2M"));
        assertEquals("the file backend needs --file PATH", shell.refusal("kp:attach --backend file f1"));
        assertEquals("a memory disk needs a SIZE", shell.refusal("kp:attach m1"));
        assertEquals("--file is only for --backend file", shell.refusal("kp:attach --file /x m1 1M"));
        assertEquals("--tracked-lock: unknown tracked lock 'spin' (expected yielding, mutex or sharded)",
                shell.refusal("kp:attach --tracked-lock spin m1 1M"));
        assertEquals("invalid --mapping '0,1;x': 'x' is not a queue number (expected e.g. \"0,2;1,3\")",
                shell.refusal("kp:attach --mapping \"0,1;x\" m1 1M"));
        assertEquals("invalid --workers '0': expected a positive integer",
                shell.refusal("kp:attach --workers 0 m1 1M"));
        assertEquals("unknown backend 'disk' (expected file, memory, null, nbd or rbd)",
                shell.refusal("kp:attach --backend disk m1 1M"));
        assertEquals("invalid --latency-ns '-1': expected nanoseconds in 0..1000000000",
                shell.refusal("kp:attach --backend null --latency-ns -1 n1 1M"));
        assertTrue(attached.isEmpty());
    }

    @Test
    void attachNbdTakesAUriAndNoSize() throws Exception {
        shell.run("kp:attach --backend nbd --uri 'nbd+unix:///disk?socket=/run/s.sock' n0");
        DiskSpec n0 = specs.get("n0");
        assertEquals("nbd", n0.backend().kind());
        assertEquals("nbd+unix:///disk?socket=/run/s.sock", n0.backend().path(), "the URI travels as the path");
        assertEquals(0, n0.backend().sizeBytes(), "the size is the export's");
        assertEquals("the nbd backend needs --uri nbd://host[:port]/export or --uri nbd+unix:///export?socket=PATH",
                shell.refusal("kp:attach --backend nbd n1"));
        assertEquals("--uri is only for --backend nbd", shell.refusal("kp:attach --uri nbd://h/x m1 1M"));
    }

    @Test
    void resizeAndTrackedLock() throws Exception {
        shell.run("kp:attach d1 1M");
        assertEquals("resized d1 to 2 MiB", shell.run("kp:resize d1 2M"));
        assertEquals(2L << 20, attached.get("d1").sizeBytes());
        assertEquals("d1: tracked-requests lock is now yielding", shell.run("kp:tracked-lock d1 yielding"));
        assertEquals("{\"disk\":\"d1\",\"tracked_lock\":\"sharded\"}", shell.run("kp:tracked-lock --json d1 sharded"));
        shell.run("kp:tracked-lock d1 yielding");
        assertEquals(TrackedLockKind.YIELDING, attached.get("d1").trackedLock());
        assertEquals("unknown tracked lock 'x' (expected yielding, mutex or sharded); "
                + "usage: kp:tracked-lock [--json] NAME yielding|mutex|sharded",
                shell.refusal("kp:tracked-lock d1 x"));
        assertEquals(TrackedLockCommand.USAGE, shell.refusal("kp:tracked-lock d1"));
        assertEquals(TrackedLockCommand.USAGE, shell.refusal("kp:tracked-lock"));
        assertEquals(TrackedLockCommand.USAGE, shell.refusal("kp:tracked-lock --json d1 mutex sharded"));
        assertEquals("no disk named 'zz'", shell.refusal(DiskException.class, "kp:tracked-lock zz mutex"));
        String table = (String) shell.run("kp:disks");
        assertTrue(table.contains("LOCK      MAPPING"), table);
        assertTrue(table.contains("yielding  -"), table);
    }

    @Test
    void everyCommandAndParameterHasADescriptor() {
        assertEquals(1, GogoShell.assertEveryCommandDescribed(TrackedLockCommand.class));
        assertEquals(4, GogoShell.assertEveryCommandDescribed(KpCommands.class),
                "attach (NAME [SIZE]), detach, disks, resize");
        assertEquals(1, GogoShell.assertEveryCommandDescribed(IoCommand.class), "io");
    }

    @Test
    void jsonOfDisksAttachResizeDetachAndIo() throws Exception {
        assertEquals("{\"disk\":{\"name\":\"d1\",\"size_bytes\":1048576,\"backend\":\"memory\",\"path\":null,"
                + "\"read_only\":false,\"transport\":\"mmio\",\"queues\":2,\"queue_size\":256,\"iothreads\":1,"
                + "\"mapping\":[],\"device_status\":0,\"device_status_text\":\"" + DeviceStatusText.describe(0) + "\","
                + "\"requests_completed\":0,\"requests_in_flight\":0,\"tracked_lock\":\"mutex\",\"ring\":\"split\",\"exports\":[]}}",
                shell.run("kp:attach --json --queues 2 d1 1M"));
        ExportStatus vhost = () -> List.of(new ExportStatus.Export("d1", "vhost-user", "/run/d\"1.sock", "connected"));
        String disksJson = new KpCommands(disks, List.of(vhost)).disks(true);
        assertTrue(disksJson.startsWith("{\"disks\":[{\"name\":\"d1\","), disksJson);
        assertTrue(disksJson.endsWith("\"exports\":[{\"kind\":\"vhost-user\",\"address\":\"/run/d\\\"1.sock\","
                + "\"state\":\"connected\"}]}]}"), disksJson);
        assertTrue(((String) shell.run("kp:resize --json d1 2M")).contains("\"size_bytes\":2097152"));
        String io = (String) shell.run("kp:io --json --bs 4K --depth 8 d1");
        assertTrue(io.startsWith("{\"disk\":\"d1\",\"block_size\":4096,\"depth\":8,\"bytes\":4194304,"), io);
        assertTrue(io.contains("\"mismatches\":0,\"interrupts\":3,\"notifies\":4}"), io);
        assertEquals("{\"detached\":\"d1\"}", shell.run("kp:detach --json d1"));
        assertEquals("{\"disks\":[]}", shell.run("kp:disks --json"));
    }
}
