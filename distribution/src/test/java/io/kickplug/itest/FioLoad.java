package io.kickplug.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.transport.TransportKind;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * kp:fio passes with verify, run back to back on each of some disks while a test disturbs them (bundle updates,
 * ring swaps), and the check of every pass: no error (verify passed), exactly 512 writes and 512 verify reads
 * per job (a request completed twice would show as one I/O too many, a lost one as a pass that never ends).
 */
final class FioLoad {
    /** Two jobs of 512 4k random writes each, then their verify reads. */
    private static final String[] JOBS = {"--rw=randwrite", "--bs=4k", "--size=2m", "--ioengine=libaio",
        "--verify=crc32c", "--name=a", "--offset=0", "--iodepth=16", "--name=b", "--offset=4m", "--iodepth=8",
        "--output-format=json"};
    private static final Pattern TOTAL_IOS = Pattern.compile(
            "\"(read|write|trim)\"\\s*:\\s*\\{[^}]*?\"total_ios\"\\s*:\\s*(\\d+)");
    private static final Pattern ERROR = Pattern.compile("\"error\"\\s*:\\s*(\\d+)");

    private final BundleContext context;
    private final AtomicBoolean going = new AtomicBoolean(true);
    /** fio's JSON output of every pass so far. */
    final List<String> outputs = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<Void>> workloads = new ArrayList<>();

    /** A disk to load: 16 MiB of memory behind {@code transport}, two queues, the other settings the defaults. */
    static DiskSpec memoryDisk(String name, TransportKind transport) {
        return new DiskSpec(name, new BackendSpec("memory", null, 16L << 20, false), transport, 2,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY);
    }

    /**
     * Attaches the two disks the swap tests load: {@link #memoryDisk memory disks}, {@code names.get(0)} behind
     * virtio-mmio and {@code names.get(1)} behind virtio-pci, so that a disturbance reaches both transports.
     */
    static void attachMmioAndPci(DiskManager disks, List<String> names) {
        disks.attach(memoryDisk(names.get(0), TransportKind.MMIO));
        disks.attach(memoryDisk(names.get(1), TransportKind.PCI));
    }

    /** Starts one loop of passes per disk. */
    FioLoad(BundleContext context, List<String> disks) {
        this.context = context;
        for (String disk : disks) {
            workloads.add(CompletableFuture.runAsync(() -> {
                int pass = 0;
                do {
                    try {
                        Object fio = fioCommand();
                        Method m = fio.getClass().getMethod("fio", String.class, String[].class);
                        outputs.add((String) m.invoke(fio, disk, JOBS));
                        pass++;
                    } catch (InvocationTargetException e) {
                        throw new IllegalStateException(disk + ": fio pass " + pass + " failed: " + e.getCause(),
                                e.getCause());
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                } while (going.get());
            }));
        }
    }

    /** Fails when a loop ended (a pass failed) while the test still disturbs the disks. */
    void assertRunning(String context) {
        for (CompletableFuture<Void> w : workloads) {
            assertTrue("a workload ended early (" + context + "): " + failure(w), !w.isDone());
        }
    }

    /** Lets the current passes end and checks every pass. */
    void finishAndCheck() throws Exception {
        going.set(false);
        for (CompletableFuture<Void> w : workloads) {
            w.get(5, TimeUnit.MINUTES);
        }
        assertTrue("fio passes: " + outputs.size(), outputs.size() >= 2);
        for (String json : outputs) {
            checkPass(json);
        }
    }

    /** One fio pass: no error (verify passed), exactly 512 writes and 512 verify reads per job. */
    private static void checkPass(String json) {
        assertEquals("jobs in " + json, 2, checkJobs(json, 512));
    }

    /**
     * Checks fio's JSON output of one pass: every job ended without error (so its verify passed) and each of its
     * read, write and trim directions completed {@code ios} I/Os (trim none). Returns the number of jobs, at
     * least one, and the directions are three a job.
     */
    static int checkJobs(String json, int ios) {
        Matcher error = ERROR.matcher(json);
        int jobs = 0;
        while (error.find()) {
            assertEquals("fio error in " + json, "0", error.group(1));
            jobs++;
        }
        assertTrue("no job in " + json, jobs > 0);
        Matcher total = TOTAL_IOS.matcher(json);
        int directions = 0;
        while (total.find()) {
            assertEquals(total.group(1) + " I/Os completed in " + json,
                    total.group(1).equals("trim") ? "0" : String.valueOf(ios), total.group(2));
            directions++;
        }
        assertEquals(3 * jobs, directions);
        return jobs;
    }

    private Object fioCommand() throws Exception {
        return fioCommand(context);
    }

    /** The kp:fio command object (the guest bundle's FioCommand; its class is private to that bundle). */
    static Object fioCommand(BundleContext context) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0) {
            ServiceReference<?>[] found = context.getServiceReferences((String) null,
                    "(&(osgi.command.scope=kp)(osgi.command.function=fio))");
            if (found != null) {
                Object fio = context.getService(found[0]);
                assertNotNull(fio);
                return fio;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
        throw new AssertionError("no kp:fio command service");
    }

    /** How a workload that is done ended: "finished" or its failure. */
    static String failure(CompletableFuture<Void> w) {
        try {
            w.getNow(null);
            return "finished";
        } catch (RuntimeException e) {
            return String.valueOf(e.getCause() != null ? e.getCause() : e);
        }
    }
}
