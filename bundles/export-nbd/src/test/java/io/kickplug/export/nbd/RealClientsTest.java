package io.kickplug.export.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kickplug.api.blk.DiskSpec;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Real NBD clients against the export: qemu-img and qemu-io (Debian's qemu-utils), nbdcopy and nbdinfo (libnbd-bin),
 * which scripts/test-prerequisites.sh installs. A test whose program is missing is skipped with the reason.
 */
class RealClientsTest {

    private Served served;

    @BeforeEach
    void serve() throws Exception {
        served = new Served();
    }

    @AfterEach
    void close() throws Exception {
        served.close();
    }

    private static void need(String program) {
        boolean found = false;
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Path.of(dir, program))) {
                found = true;
            }
        }
        assumeTrue(found, program + " is not installed (scripts/test-prerequisites.sh installs it)");
    }

    /** Runs a program; its exit code and output. */
    private static String run(List<String> command, int expectedExit) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(300, TimeUnit.SECONDS), command + " did not end");
        assertEquals(expectedExit, p.exitValue(), command + " said: " + out);
        return out;
    }

    /** An image with data in some places and holes in others. */
    private Path image(String name, long size, long seed) throws IOException {
        Path p = served.dir.resolve(name);
        Random random = new Random(seed);
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.truncate(size);
            byte[] block = new byte[64 * 1024];
            for (long off = 0; off < size; off += 1 << 20) {
                if (random.nextInt(4) == 0) {
                    continue; // a hole
                }
                random.nextBytes(block);
                ch.write(ByteBuffer.wrap(block), off);
            }
            // and a size that is not a power of two fills the last 512 bytes
            random.nextBytes(block);
            ch.write(ByteBuffer.wrap(block, 0, 512), size - 512);
        }
        return p;
    }

    @Test
    void qemuImgComparesTheExportOfAFileDiskIdenticalToItsImage() throws Exception {
        need("qemu-img");
        Path img = image("disk.img", (32 << 20) + 4096, 1);
        served.file("f0", img);
        String out = run(List.of("qemu-img", "compare", "-f", "raw", "-F", "raw", img.toString(), served.uri("f0")), 0);
        assertTrue(out.contains("identical"), out);
    }

    @Test
    void qemuIoWritesLandInTheImage() throws Exception {
        need("qemu-io");
        Path img = image("disk.img", 8 << 20, 2);
        served.file("d0", img);
        run(List.of("qemu-io", "-f", "raw", "-c", "write -P 0xab 0 1M", "-c", "flush", served.uri("d0")), 0);
        byte[] head = new byte[1 << 20];
        try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "r")) {
            f.readFully(head);
        }
        for (byte b : head) {
            assertEquals((byte) 0xab, b);
        }
        String read = run(List.of("qemu-io", "-f", "raw", "-r", "-c", "read -P 0xab 0 1M", served.uri("d0")), 0);
        assertTrue(read.contains("read 1048576/1048576"), read);
    }

    /** nbdcopy a 1 GiB image into a memory disk's export, and the export back to a file: the same bytes. */
    @Test
    void nbdcopyOfAOneGibExportMatchesWhatWasCopiedIn() throws Exception {
        need("nbdcopy");
        long size = 1L << 30;
        Path src = image("src.img", size, 3);
        served.memory("m0", size);
        run(List.of("nbdcopy", "--flush", src.toString(), served.uri("m0")), 0);
        Path back = served.dir.resolve("back.img");
        run(List.of("nbdcopy", served.uri("m0"), back.toString()), 0);
        assertEquals(size, Files.size(back));
        assertEquals(-1, Files.mismatch(src, back), "nbdcopy back differs");
        Files.delete(src);
        Files.delete(back);
    }

    @Test
    void nbdinfoListsTheExportsWithTheirSizesAndFlags() throws Exception {
        need("nbdinfo");
        served.memory("d0", 64 << 20).readOnly("ro", 16 << 20);
        String out = run(List.of("nbdinfo", "--list", "--json", served.uri("")), 0);
        // One object per export: its name, size and flags as nbdinfo read them through NBD_OPT_LIST and NBD_OPT_INFO.
        assertTrue(out.contains("\"export-name\": \"d0\""), out);
        assertTrue(out.contains("\"export-size\": " + (64 << 20)), out);
        assertTrue(out.contains("\"export-name\": \"ro\""), out);
        assertTrue(out.contains("\"export-size\": " + (16 << 20)), out);
        assertTrue(out.contains("\"is_read_only\": true"), out);
        assertTrue(out.contains("\"can_multi_conn\": true"), out);
        assertTrue(out.contains("\"can_trim\": true") && out.contains("\"can_fua\": true"), out);
        String text = run(List.of("nbdinfo", "--list", served.uri("")), 0);
        assertTrue(text.contains("export=\"d0\"") && text.contains("export=\"ro\""), text);
        assertTrue(text.contains("minimum: 512") && text.contains("maximum: 33554432"), text);
    }

    /** A server on TCP with the system's choice of port: qemu-img reads the export's size there. */
    @Test
    void tcpExportsServeQemuImg() throws Exception {
        need("qemu-img");
        try (Served tcp = new Served()) {
            tcp.service.stop();
            tcp.service.start(Listener.tcp("127.0.0.1", 0), 4);
            tcp.disks.attach(DiskSpec.memory("t0", 8 << 20));
            NbdService.ExportView v = tcp.service.export("t0", "", false);
            assertTrue(v.uri().startsWith("nbd://127.0.0.1:"), v.uri());
            String out = run(List.of("qemu-img", "info", "-f", "raw", v.uri()), 0);
            assertTrue(out.contains("8 MiB") || out.contains("8388608"), out);
        }
    }
}
