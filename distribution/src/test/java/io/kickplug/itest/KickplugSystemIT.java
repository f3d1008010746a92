package io.kickplug.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestWorkloads;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;

/**
 * The whole system in Felix, booted with exactly the distribution's bundle set: a memory disk is attached,
 * the simulated guest writes a pattern through the virtio-mmio transport and reads it back, and the disk is
 * detached again.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class KickplugSystemIT extends DistributionExam {

    private static final List<String> PROJECT_BUNDLES = List.of("io.kickplug.api", "io.kickplug.virtqueue.split",
            "io.kickplug.virtqueue.packed",
            "io.kickplug.virtio.transport", "io.kickplug.blk", "io.kickplug.poll", "io.kickplug.guest",
            "io.kickplug.shell", "io.kickplug.batching", "io.kickplug.vhost", "io.kickplug.backend.nbd",
            "io.kickplug.throttle", "io.kickplug.export.nbd", "io.kickplug.qmp", "io.kickplug.backend.rbd");
    /** One command of each command-providing bundle: shell, guest (io), vhost-user (vhost), NBD export. */
    private static final Set<String> KP_FUNCTIONS = Set.of("attach", "detach", "disks", "io", "vhost", "nbd-server");
    private static final long WAIT_MILLIS = TimeUnit.SECONDS.toMillis(10);

    @Inject
    private GuestWorkloads guest;

    @Override
    @Configuration
    public Option[] configuration() {
        // Runs in the test JVM: the distribution's project bundles are exactly the ones this test expects.
        Set<String> shipped = new java.util.TreeSet<>(DistributionBundles.projectSymbolicNames());
        if (!shipped.equals(new java.util.TreeSet<>(PROJECT_BUNDLES))) {
            throw new IllegalStateException("the distribution ships project bundles " + shipped + ", the test expects "
                    + new java.util.TreeSet<>(PROJECT_BUNDLES));
        }
        return super.configuration();
    }

    @Test
    public void everyProjectBundleIsActive() {
        Map<String, Bundle> bySymbolicName = new HashMap<>();
        for (Bundle bundle : context.getBundles()) {
            bySymbolicName.put(bundle.getSymbolicName(), bundle);
        }
        for (String bsn : PROJECT_BUNDLES) {
            Bundle bundle = bySymbolicName.get(bsn);
            assertTrue(bsn + " is not installed", bundle != null);
            assertEquals(bsn + " is not ACTIVE", Bundle.ACTIVE, bundle.getState());
        }
        Set<String> installed = new java.util.TreeSet<>();
        for (Bundle bundle : context.getBundles()) {
            if (bundle.getSymbolicName() != null && bundle.getSymbolicName().startsWith("io.kickplug.")) {
                assertEquals(bundle.getSymbolicName() + " is not ACTIVE", Bundle.ACTIVE, bundle.getState());
                installed.add(bundle.getSymbolicName());
            }
        }
        assertEquals("exactly the distribution's project bundles are booted", new java.util.TreeSet<>(PROJECT_BUNDLES),
                installed);
    }

    @Test
    public void kpGogoCommandsAreRegistered() throws Exception {
        Set<String> functions = awaitKpFunctions();
        assertTrue("kp commands registered: " + functions, functions.containsAll(KP_FUNCTIONS));
    }

    @Test
    public void attachWriteReadVerifyDetach() {
        DiskInfo info = disks.attach(DiskSpec.memory("it0", 16 << 20));
        assertEquals("it0", info.name());
        assertEquals(16L << 20, info.sizeBytes());
        try {
            IoPassResult result = guest.writeReadVerify("it0", new IoPassOptions(4096, 16, 0));
            assertEquals("blocks read back differently: " + result, 0, result.mismatches());
            assertTrue("no requests completed: " + result, result.requests() > 0);
        } finally {
            disks.detach("it0");
        }
        assertTrue("disks left after detach: " + disks.list(), disks.list().isEmpty());
    }

    /** The functions of all services with osgi.command.scope=kp, once all expected ones are there (or 10 s). */
    private Set<String> awaitKpFunctions() throws Exception {
        Object lock = new Object();
        long[] events = {0};
        ServiceListener listener = event -> {
            synchronized (lock) {
                events[0]++;
                lock.notifyAll();
            }
        };
        context.addServiceListener(listener, "(osgi.command.scope=kp)");
        try {
            long deadline = System.currentTimeMillis() + WAIT_MILLIS;
            while (true) {
                long seen;
                synchronized (lock) {
                    seen = events[0];
                }
                // Checked outside the lock: the listener runs on a registering thread.
                Set<String> functions = kpFunctions();
                long left = deadline - System.currentTimeMillis();
                if (functions.containsAll(KP_FUNCTIONS) || left <= 0) {
                    return functions;
                }
                synchronized (lock) {
                    if (events[0] == seen) {
                        lock.wait(left);
                    }
                }
            }
        } finally {
            context.removeServiceListener(listener);
        }
    }

    private Set<String> kpFunctions() throws Exception {
        Set<String> functions = new TreeSet<>();
        ServiceReference<?>[] refs = context.getServiceReferences((String) null, "(osgi.command.scope=kp)");
        for (ServiceReference<?> ref : refs == null ? new ServiceReference<?>[0] : refs) {
            functions.addAll(values(ref.getProperty("osgi.command.function")));
        }
        return functions;
    }

    private static List<String> values(Object property) {
        List<String> out = new ArrayList<>();
        if (property instanceof String s) {
            out.add(s);
        } else if (property instanceof String[] a) {
            out.addAll(Arrays.asList(a));
        } else if (property instanceof Collection<?> c) {
            c.forEach(o -> out.add(String.valueOf(o)));
        }
        return out;
    }
}
