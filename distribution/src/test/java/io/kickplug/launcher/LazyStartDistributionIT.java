package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link LazyStart#waiting} on what the built distribution's component descriptions really say (its
 * {@code felix/commands.idx} and jars): which of the bundles a daemon starts after ready its statements need
 * first. Fails when a command loses the reference that says what it needs (kp:io's to GuestWorkloads, kp:poll's
 * to the poll policy, kp:notify's to the strategies), or when kp:io goes back into the component of kp:attach,
 * which would start the guest bundle before the statements of every daemon that attaches a disk.
 */
class LazyStartDistributionIT {

    private static Map<String, CommandComponents.Descriptions> bundles;

    @BeforeAll
    static void readTheDistribution() throws Exception {
        Path felix = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath()
                .resolveSibling("felix");
        assertEquals(true, Files.isRegularFile(felix.resolve(CommandIndex.FILE)), "no index in " + felix);
        CommandIndex index = CommandIndex.load(felix);
        bundles = new HashMap<>();
        for (BundleSet.Jar jar : BundleSet.scan(BundleSet.bundleDir(felix)).bundles()) {
            if (jar.isProject() && !jar.fragment()) {
                bundles.merge(jar.symbolicName(), index.of(jar.path()), CommandComponents.Descriptions::and);
            }
        }
    }

    /** The bundles of LATER that start before {@code statements}. */
    private static Set<String> startNow(String... statements) {
        Set<String> now = new TreeSet<>(LazyStart.LATER);
        now.removeAll(LazyStart.waiting(bundles, LazyStart.words(List.of(statements))));
        return now;
    }

    @Test
    void aDaemonThatAttachesAndExportsStartsThemAllAfterReady() {
        assertEquals(Set.of(), startNow("kp:attach --queues 2 --iothreads 1 --backend null d0 1073741824",
                "kp:vhost d0 --socket /tmp/export.sock --queues 2"));
        assertEquals(Set.of(), startNow("kp:attach --backend file --file /tmp/a.img a; kp:disks --json; "
                + "kp:resize a 2M; kp:ring a; kp:tracked-lock a mutex; kp:throttle a --iops 100; kp:detach a"));
    }

    @Test
    void commandsThatNeedTheirServicesStartThemBefore() {
        assertEquals(Set.of("io.kickplug.guest"), startNow("kp:attach d0 64M; kp:io d0"));
        assertEquals(Set.of("io.kickplug.guest"), startNow("kp:guest --vcpus 2"));
        assertEquals(Set.of("io.kickplug.guest"), startNow("kp:lockstat"));
        assertEquals(Set.of("io.kickplug.guest"), startNow("kp:fio d0 --rw=read"));
        assertEquals(Set.of("io.kickplug.poll"), startNow("kp:attach d0 64M; kp:poll d0 on"));
        assertEquals(Set.of("io.kickplug.batching"), startNow("kp:attach d0 64M; kp:notify d0 bh"));
        assertEquals(Set.of("io.kickplug.batching"), startNow("kp:strategies"));
    }
}
