package io.kickplug.guest.fio;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.poll.PollCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.backend.NullBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.poll.AdaptivePollPolicy;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Seed 003 measured once (not a test): fio randread 4k, pvsync2, numjobs 1, iodepth 1 through the engine on a
 * null (or memory) disk, hipri=0 vs hipri=1 (toggling mode, no poll queues) and device-side polling off vs on
 * (the adaptive policy, poll-max-ns 32768, QEMU's default, and 262144). Default cost model: 5 us per exit, 2 us per injection, 1 vCPU.
 *
 * <p>Run: {@code java -cp <guest test classpath> io.kickplug.guest.fio.PollMeasure [null|memory] [seconds]}
 * (the command line the report quotes is printed first).
 */
public final class PollMeasure {

    private PollMeasure() {
    }

    public static void main(String[] args) throws Exception {
        String backend = args.length > 0 ? args[0] : "null";
        String seconds = args.length > 1 ? args[1] : "3";
        DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(), () -> List.of(new NullBackendFactory(), new MemoryBackendFactory()));
        disks.setPollPolicy(new AdaptivePollPolicy());
        StandardGuestEngine engine = StandardGuestEngine.standalone();
        engine.configure(new GuestSettings(1, MachineConfig.DEFAULT_EXIT_LATENCY_NS,
                MachineConfig.DEFAULT_INJECT_LATENCY_NS, MachineConfig.DEFAULT_KICK_POLICY));
        try {
            disks.attach(new DiskSpec("vdb", new BackendSpec(backend, null, 256L << 20, false), TransportKind.MMIO, 1,
                    DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY));
            System.out.printf(Locale.ROOT, "%s disk 256 MiB, 1 vCPU, exit 5000 ns, inject 2000 ns, outside-lock; "
                    + "fio --name=r --rw=randread --bs=4k --ioengine=pvsync2 --iodepth=1 --numjobs=1 --size=256m "
                    + "--runtime=%ss --time_based --hipri=H%n", backend, seconds);
            System.out.printf(Locale.ROOT, "%-8s %-14s %10s %14s %10s %10s %8s %8s%n", "hipri", "device-poll", "IOPS",
                    "mean clat us", "notifies", "irqs", "hits", "misses");
            for (int round = 0; round < 2; round++) { // the first round warms the JIT up; the second is reported
                for (long maxNs : new long[] {0, PollParams.DEFAULT_MAX_NS, 262_144}) {
                    boolean devicePoll = maxNs > 0;
                    for (int hipri = 0; hipri <= 1; hipri++) {
                        disks.setPolling("vdb", devicePoll, devicePoll ? PollParams.defaults().withMaxNs(maxNs) : null);
                        PollCounters before = disks.pollStatus("vdb").queues().get(0);
                        List<String> fio = new ArrayList<>(List.of("--name=r", "--rw=randread", "--bs=4k",
                                "--ioengine=pvsync2", "--iodepth=1", "--numjobs=1", "--size=256m",
                                "--runtime=" + (round == 0 ? "1" : seconds) + "s", "--time_based",
                                "--hipri=" + hipri, "--output-format=json"));
                        JsonNode root = new ObjectMapper().readTree(Fio.run(engine, disks.port("vdb"),
                                new VirtqueueFactoryComponent(), "vdb", Fio.parse(fio)));
                        PollCounters after = disks.pollStatus("vdb").queues().get(0);
                        JsonNode read = root.get("jobs").get(0).get("read");
                        if (round == 1) {
                            System.out.printf(Locale.ROOT, "%-8d %-14s %10.0f %14.2f %10d %10d %8d %8d%n", hipri,
                                    devicePoll ? "on " + maxNs : "off", read.get("iops").asDouble(),
                                    read.get("clat_ns").get("mean").asDouble() / 1000,
                                    root.get("kickplug").get("notifies").asLong(),
                                    root.get("kickplug").get("interrupts").asLong(), after.hits() - before.hits(),
                                    after.misses() - before.misses());
                        }
                    }
                }
            }
        } finally {
            disks.close();
        }
    }
}
