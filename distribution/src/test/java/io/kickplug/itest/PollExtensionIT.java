package io.kickplug.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.GuestWorkloads;
import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import io.kickplug.api.poll.PollCounters;
import io.kickplug.api.poll.PollStatus;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.inject.Inject;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

/**
 * Device-side polling in Felix: a disk polls while the poll-extension bundle is active, goes back to
 * notifications when the bundle stops and polls again when it starts, while a write-read-verify workload
 * runs; every pass verifies and completes.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class PollExtensionIT extends DistributionExam {

    private static final long WAIT_SECONDS = 10;

    @Inject
    private GuestWorkloads guest;

    @Override
    @Configuration
    public Option[] configuration() {
        return DistributionBundles.paxExam("target/paxexam-poll");
    }

    private Bundle pollBundle() {
        return InstalledBundles.named(context, "io.kickplug.poll");
    }

    @Test
    public void stoppingAndStartingThePollBundleUnderLoadLosesNothing() throws Exception {
        disks.attach(DiskSpec.memory("poll0", 8 << 20));
        List<IoPassResult> passes = new CopyOnWriteArrayList<>();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        Thread load = new Thread(() -> {
            try {
                while (!done.get()) {
                    passes.add(guest.writeReadVerify("poll0", new IoPassOptions(4096, 8, 2 << 20)));
                }
            } catch (Throwable t) {
                failures.add(t);
            }
        }, "poll-it-load");
        try {
            PollStatus on = disks.setPolling("poll0", true, null);
            assertTrue("the adaptive policy is bound: " + on, on.active());
            load.start();
            Bundle poll = pollBundle();
            for (int i = 0; i < 10; i++) {
                poll.stop();
                Conditions.await(() -> !disks.pollStatus("poll0").active(), "polling off after stopping the bundle",
                        WAIT_SECONDS);
                assertTrue("the request is kept", disks.pollStatus("poll0").requested());
                poll.start();
                Conditions.await(() -> disks.pollStatus("poll0").active(), "polling on after starting the bundle",
                        WAIT_SECONDS);
            }
            int before = passes.size();
            Conditions.await(() -> passes.size() > before || !failures.isEmpty(),
                    "a whole pass after the last restart", WAIT_SECONDS);
        } finally {
            done.set(true);
            load.join(TimeUnit.SECONDS.toMillis(60));
            disks.detach("poll0");
        }
        assertEquals(List.of(), failures);
        assertFalse(load.isAlive());
        for (IoPassResult p : passes) {
            assertEquals("blocks read back differently: " + p, 0, p.mismatches());
            assertTrue(p.requests() > 0);
        }
    }

    @Test
    public void pollCountersShowPolling() throws Exception {
        disks.attach(DiskSpec.memory("poll1", 4 << 20));
        try {
            // poll-max-ns 10 ms: above any round trip of this machine, so the adaptive window grows from the
            // first waits on (with QEMU's 32768 ns a slow machine may never poll).
            disks.setPolling("poll1", true, io.kickplug.api.poll.PollParams.defaults().withMaxNs(10_000_000));
            guest.writeReadVerify("poll1", new IoPassOptions(4096, 1, 1 << 20));
            PollCounters q0 = disks.pollStatus("poll1").queues().get(0);
            assertTrue("the I/O thread polled: " + q0, q0.hits() + q0.misses() > 0 && q0.pollNanos() > 0);
        } finally {
            disks.detach("poll1");
        }
    }
}
