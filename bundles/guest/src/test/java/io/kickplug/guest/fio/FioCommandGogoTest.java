package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.shell.testkit.GogoShell;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** kp:fio through Gogo's own parser and argument coercion, on a real attached memory disk. */
class FioCommandGogoTest {

    private final DiskRegistry registry = InProcessHost.registry();
    private final DiskManager disks = registry;
    @RegisterExtension
    final GogoShell shell = new GogoShell();

    @BeforeEach
    void setUp() {
        registry.attach(DiskSpec.memory("d1", 4L << 20));
        shell.add("kp", new FioCommand(disks, new VirtqueueFactoryComponent(),
                StandardGuestEngine.standalone()), "fio");
    }

    @AfterEach
    void tearDown() {
        registry.close();
    }

    @Test
    void optionsOnTheCommandLine() throws Exception {
        Object out = shell.run("kp:fio d1 --name=r --rw=randread --bs=4k --size=256k --iodepth=4 "
                + "--ioengine=libaio --output-format=json");
        var job = new ObjectMapper().readTree((String) out).get("jobs").get(0);
        assertEquals("r", job.get("jobname").asText());
        assertEquals(64, job.get("read").get("total_ios").asLong());
    }

    @Test
    void jobFileArgument(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("job.fio");
        Files.writeString(file, "[global]\nfilename=/dev/vdb\nsize=128k\n[w]\nrw=write\nbs=8k\n");
        String out = (String) shell.run("kp:fio d1 " + file);
        assertTrue(out.contains("w: (groupid=0, jobs=1): err= 0: pid="), out);
        assertTrue(out.contains("io=128KiB (131kB)"), out);
    }

    @Test
    void errorsAreOneLine() {
        assertEquals("no disk named 'nosuch'", shell.refusal(DiskException.class, "kp:fio nosuch --rw=read"));
        assertEquals("unknown fio option 'bogus'", shell.refusal(FioOptionException.class, "kp:fio d1 --bogus=1"));
        assertEquals("invalid iodepth=0: iodepth must be from 1 to 65536",
                shell.refusal(FioOptionException.class, "kp:fio d1 --iodepth=0"));
    }
}
