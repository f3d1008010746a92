package io.kickplug.guest.fio;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.blk.backend.NullBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * kp:fio split vs packed, measured once (not a test): fio randread 4k, libaio, iodepth 32, numjobs 2, on a null
 * disk (read-zeroes off) with 2 queues, 2 vCPUs, the default exit and injection costs; each ring format
 * {@code runs} times, alternating, after a warm-up pass of each. Prints IOPS and the device's I/O-thread CPU
 * time per request of every run, then the medians and the packed/split ratios.
 *
 * <p>Run: {@code java -cp <guest test classpath> io.kickplug.guest.fio.RingMeasure [seconds] [runs]}
 */
public final class RingMeasure {

    private RingMeasure() {
    }

    public static void main(String[] args) throws Exception {
        String seconds = args.length > 0 ? args[0] : "3";
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        VirtqueueFactory rings = RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent());
        DiskRegistry disks = new DiskRegistry(new TransportFactoryComponent(rings), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(), () -> List.of(new NullBackendFactory()));
        StandardGuestEngine engine = StandardGuestEngine.standalone();
        engine.configure(new GuestSettings(2, MachineConfig.DEFAULT_EXIT_LATENCY_NS,
                MachineConfig.DEFAULT_INJECT_LATENCY_NS, MachineConfig.DEFAULT_KICK_POLICY));
        List<String> fio = List.of("--name=r", "--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=32",
                "--numjobs=2", "--size=256m", "--runtime=" + seconds + "s", "--time_based", "--output-format=json");
        System.out.printf(Locale.ROOT, "null disk 256 MiB, 2 queues, 2 vCPUs, exit %d ns, inject %d ns; fio %s%n",
                MachineConfig.DEFAULT_EXIT_LATENCY_NS, MachineConfig.DEFAULT_INJECT_LATENCY_NS, String.join(" ", fio));
        double[][] iops = new double[2][runs];
        double[][] cpu = new double[2][runs];
        try {
            for (RingFormat ring : RingFormat.values()) {
                String name = "v" + ring.id();
                disks.attach(new DiskSpec(name, new BackendSpec("null", null, 256L << 20, false), TransportKind.MMIO,
                        2, DiskSpec.DEFAULT_QUEUE_SIZE, 1, List.of(), null, null, DiskSpec.DEFAULT_WORKERS,
                        DiskSpec.DEFAULT_GUEST_MEMORY, ring));
                pass(engine, disks, rings, name, fio); // warm-up
            }
            for (int r = 0; r < runs; r++) {
                for (RingFormat ring : RingFormat.values()) {
                    String name = "v" + ring.id();
                    double[] m = pass(engine, disks, rings, name, fio);
                    iops[ring.ordinal()][r] = m[0];
                    cpu[ring.ordinal()][r] = m[1];
                    System.out.printf(Locale.ROOT, "run %d %-6s IOPS %10.0f  device CPU/request %8.0f ns%n", r + 1,
                            ring.id(), m[0], m[1]);
                }
            }
            double si = median(iops[0]);
            double pi = median(iops[1]);
            double sc = median(cpu[0]);
            double pc = median(cpu[1]);
            System.out.printf(Locale.ROOT, "median split  IOPS %10.0f  device CPU/request %8.0f ns%n", si, sc);
            System.out.printf(Locale.ROOT, "median packed IOPS %10.0f  device CPU/request %8.0f ns%n", pi, pc);
            System.out.printf(Locale.ROOT, "packed/split  IOPS %.3f  device CPU/request %.3f%n", pi / si, pc / sc);
        } finally {
            disks.close();
        }
    }

    /** One fio pass: IOPS and the device's I/O-thread CPU nanoseconds per request. */
    private static double[] pass(StandardGuestEngine engine, DiskRegistry disks, VirtqueueFactory rings, String name,
            List<String> fio) throws Exception {
        long cpu0 = disks.ioThreadCpuNanos(name);
        JsonNode root = new ObjectMapper().readTree(Fio.run(engine, disks.port(name), rings, name,
                Fio.parse(new ArrayList<>(fio))));
        long cpu = disks.ioThreadCpuNanos(name) - cpu0;
        double iops = 0;
        long ios = 0;
        for (JsonNode job : root.get("jobs")) {
            iops += job.get("read").get("iops").asDouble();
            ios += job.get("read").get("total_ios").asLong();
        }
        return new double[] {iops, ios == 0 ? 0 : (double) cpu / ios};
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }
}
