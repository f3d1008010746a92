package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** fio job files and command-line options into JobSpecs, and one clear line for each bad input. */
class JobParsingTest {

    static String seed000() throws IOException {
        try (InputStream in = JobParsingTest.class.getResourceAsStream("/fio/seed000.fio")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void seed000JobFileVerbatim() throws IOException {
        List<JobSpec> jobs = JobFileParser.parse(seed000());
        assertEquals(4, jobs.size(), "numjobs=4 in [global] gives four clones of [f1]");
        for (int i = 0; i < 4; i++) {
            JobSpec j = jobs.get(i);
            assertEquals("f1", j.name());
            assertEquals(i, j.jobNumber());
            assertEquals(i, j.cloneIndex());
            assertEquals(RwMode.RANDREAD, j.rw());
            assertEquals(4096, j.bsMin());
            assertEquals(4096, j.bsMax());
            assertEquals(10_000_000_000L, j.runtimeNanos(), "timeout is fio's alias of runtime, in seconds");
            assertFalse(j.timeBased());
            assertEquals(IoEngine.LIBAIO, j.ioengine());
            assertEquals(64, j.iodepth());
            assertEquals(64, j.effectiveDepth());
            assertEquals(1, j.effectiveBatch(), "fio's iodepth_batch_submit defaults to 1");
            assertEquals("/dev/vdc", j.filename(), "a global option after a blank line is still global");
            assertTrue(j.groupReporting());
            assertTrue(j.direct());
            assertEquals(0, j.size());
            assertEquals(VerifyKind.NONE, j.verify());
        }
        assertEquals(4, jobs.stream().mapToLong(JobSpec::randseed).distinct().count(), "each clone its own seed");
        assertEquals(jobs.get(0).randseed(), JobFileParser.parse(seed000()).get(0).randseed(), "randrepeat default");
    }

    @Test
    void commentsBareOptionsSuffixesAndGlobalScope() {
        String text = """
                ; a comment
                # another
                [global]
                bs=8k   ; trailing comment
                time_based
                runtime=2
                [a]
                rw=write
                size=1m
                [global]
                iodepth=8
                [b]
                rw=randrw
                rwmixwrite=30
                bsrange=4k:64k
                offset=1M
                randseed=0x10
                norandommap
                ioengine=io_uring
                """;
        List<JobSpec> jobs = JobFileParser.parse(text);
        assertEquals(2, jobs.size());
        JobSpec a = jobs.get(0);
        assertEquals(8192, a.bsMin());
        assertTrue(a.timeBased());
        assertEquals(1 << 20, a.size());
        assertEquals(1, a.iodepth(), "a [global] below a job does not reach it");
        JobSpec b = jobs.get(1);
        assertEquals(8, b.iodepth());
        assertEquals(70, b.rwmixread());
        assertEquals(4096, b.bsMin());
        assertEquals(65536, b.bsMax());
        assertEquals(1 << 20, b.offset());
        assertTrue(b.norandommap());
        assertEquals(IoEngine.IO_URING, b.ioengine());
        assertEquals(1, b.jobNumber());
    }

    @Test
    void sizeSuffixesAreFiosBase2DefaultAndIecSpellingsAreBase10() {
        assertEquals(4096, FioValues.size("bs", "4k"));
        assertEquals(4096, FioValues.size("bs", "4K"));
        assertEquals(4096, FioValues.size("bs", "4kb"));
        assertEquals(4000, FioValues.size("bs", "4kib"), "fio's kb_base=1024 compatibility mode");
        assertEquals(64L << 20, FioValues.size("size", "64m"));
        assertEquals(1L << 30, FioValues.size("size", "1g"));
        assertEquals(2L << 40, FioValues.size("size", "2T"));
        assertEquals(512, FioValues.size("bs", "512"));
        assertThrows(FioOptionException.class, () -> FioValues.size("bs", "4x"));
        assertThrows(FioOptionException.class, () -> FioValues.size("bs", "-4k"));
        assertEquals(500_000_000L, FioValues.timeNanos("runtime", "500ms"));
        assertEquals(120_000_000_000L, FioValues.timeNanos("runtime", "2m"));
    }

    @Test
    void percentSizeAndOffsetResolveAgainstTheDisk() {
        JobSpec j = JobFileParser.parse("[j]\nsize=50%\noffset=25%\n").get(0);
        JobSpec.Region r = j.region("d1", 1 << 20);
        assertEquals(256 << 10, r.start());
        assertEquals(512 << 10, r.length());
    }

    @Test
    void commandLineOptionsWithAndWithoutName() {
        FioInvocation one = FioInvocation.parse(List.of("--rw=randread", "--bs=4k", "--iodepth=16",
                "--ioengine=libaio", "--numjobs=2", "--output-format=json"), p -> fail("no file"));
        assertEquals(FioInvocation.OutputFormat.JSON, one.format());
        assertEquals(2, one.jobs().size());
        assertEquals("fio", one.jobs().get(0).name());
        assertEquals(16, one.jobs().get(1).iodepth());

        FioInvocation two = FioInvocation.parse(List.of("--bs=8k", "--name=r", "--rw=read", "--name=w", "--rw=write",
                "--bs=16k", "--group_reporting"), p -> fail("no file"));
        assertEquals(2, two.jobs().size());
        assertEquals("r", two.jobs().get(0).name());
        assertEquals(8192, two.jobs().get(0).bsMin(), "options before the first --name are global");
        assertEquals(RwMode.WRITE, two.jobs().get(1).rw());
        assertEquals(16384, two.jobs().get(1).bsMin());
        assertTrue(two.jobs().get(1).groupReporting());
        assertFalse(two.jobs().get(0).groupReporting());
        assertEquals(FioInvocation.OutputFormat.NORMAL, two.format());
    }

    @Test
    void jobFileArgumentIsRead() throws IOException {
        String text = seed000();
        FioInvocation inv = FioInvocation.parse(List.of("/jobs/seed000.fio", "--output-format=json"),
                p -> Map.of("/jobs/seed000.fio", text).get(p));
        assertEquals(4, inv.jobs().size());
        assertEquals("/jobs/seed000.fio", inv.jobFile());
    }

    private static String error(String jobFile) {
        return assertThrows(FioOptionException.class, () -> JobFileParser.parse(jobFile)).getMessage();
    }

    private static String cliError(String... args) {
        return assertThrows(FioOptionException.class, () -> FioInvocation.parse(List.of(args), p -> "")).getMessage();
    }

    @Test
    void unknownOptionNamesTheOptionAndLine() {
        assertEquals("line 3: unknown fio option 'blocksz'", error("[global]\n\nblocksz=4k\n[j]\n"));
        assertEquals("unknown fio option 'bogus'", cliError("--bogus=1"));
    }

    @Test
    void malformedJobFilesNameTheLine() {
        assertEquals("line 2: malformed section header '[f1' (expected [name])", error("[global]\n[f1\nrw=read\n"));
        assertTrue(error("rw=read\n[j]\n").startsWith("line 1: option 'rw=read' outside a section"));
        assertTrue(error("[j]\nrw read\n").startsWith("line 2: malformed option line 'rw read'"));
        assertEquals("the job file defines no job (only [global] or nothing)", error("[global]\nbs=4k\n"));
        assertTrue(error("[j]\nrw=\n").startsWith("line 2: option rw needs a value"));
    }

    @Test
    void blockSizeNotAMultipleOf512() {
        assertEquals("line 2: invalid bs=1000: block size 1000 is not a positive multiple of 512",
                error("[j]\nbs=1000\n"));
        assertEquals("invalid bsrange=4k-1000: block size 1000 is not a positive multiple of 512",
                cliError("--bsrange=4k-1000"));
        assertTrue(cliError("--bsrange=64k-4k").contains("the low end is above the high end"));
    }

    @Test
    void iodepthZero() {
        assertEquals("line 2: invalid iodepth=0: iodepth must be from 1 to 65536", error("[j]\niodepth=0\n"));
        assertEquals("invalid iodepth=0: iodepth must be from 1 to 65536", cliError("--iodepth=0"));
    }

    @Test
    void iodepthBatchSubmit() {
        JobSpec zero = JobFileParser.parse("[j]\nioengine=libaio\niodepth=32\niodepth_batch_submit=0\n").get(0);
        assertEquals(32, zero.effectiveBatch(), "0 means the whole iodepth");
        JobSpec alias = JobFileParser.parse("[j]\nioengine=libaio\niodepth=32\niodepth_batch=8\n").get(0);
        assertEquals(8, alias.effectiveBatch());
        JobSpec capped = JobFileParser.parse("[j]\nioengine=libaio\niodepth=4\niodepth_batch=8\n").get(0);
        assertEquals(4, capped.effectiveBatch(), "no more per submission than the depth");
        JobSpec sync = JobFileParser.parse("[j]\niodepth=32\niodepth_batch=8\n").get(0);
        assertEquals(1, sync.effectiveBatch(), "psync submits one I/O at a time");
        assertTrue(cliError("--iodepth_batch_submit=-1").startsWith("invalid iodepth_batch_submit=-1"),
                cliError("--iodepth_batch_submit=-1"));
    }

    @Test
    void otherBadValues() {
        assertTrue(cliError("--rw=trim").startsWith("invalid rw=trim: expected read, write"));
        assertTrue(cliError("--ioengine=mmap").startsWith("invalid ioengine=mmap"));
        assertTrue(cliError("--verify=sha256").startsWith("invalid verify=sha256"));
        assertEquals("job 'fio': time_based needs a runtime", cliError("--time_based"));
        assertTrue(FioInvocation.parse(List.of("--ioengine=pvsync2", "--hipri", "--name=p", "--size=1M"), p -> "")
                .jobs().get(0).hipri(), "pvsync2 takes hipri");
        assertEquals("job 'fio': hipri is an option of io_uring and pvsync2, not of ioengine=libaio",
                cliError("--ioengine=libaio", "--hipri"));
        assertTrue(cliError("--output-format=terse").startsWith("invalid --output-format=terse"));
        assertTrue(cliError("a.fio", "--rw=read").startsWith("job options on the command line cannot be combined"));
        assertTrue(cliError().startsWith("no job"));
        assertTrue(cliError("--bs=4k,8k").contains("separate read,write block sizes are not supported"));
        assertTrue(cliError("--rw=randwrite", "--verify=md5", "--bsrange=4k-8k")
                .contains("verify with random writes needs one block size"));
    }

    @Test
    void sizeLargerThanTheDisk() {
        JobSpec j = JobFileParser.parse("[j]\nsize=2m\n").get(0);
        assertEquals("job 'j': size 2097152 is larger than disk 'd1' (1048576 bytes)",
                assertThrows(FioOptionException.class, () -> j.region("d1", 1 << 20)).getMessage());
        JobSpec k = JobFileParser.parse("[k]\nsize=1m\noffset=4k\n").get(0);
        assertTrue(assertThrows(FioOptionException.class, () -> k.region("d1", 1 << 20)).getMessage()
                .contains("from offset 4096 is larger than disk 'd1'"));
        assertEquals(new JobSpec.Region(0, 1 << 20), JobFileParser.parse("[j]\n").get(0).region("d1", 1 << 20),
                "no size: the whole disk");
    }

    @Test
    void filenameMapsToTheDiskUnderTest() {
        for (String ok : List.of("/dev/vdc", "/dev/vda", "/dev/vdab", "d1")) {
            FioTarget.check(JobFileParser.parse("[j]\nfilename=" + ok + "\n").get(0), "d1");
        }
        FioTarget.check(JobFileParser.parse("[j]\n").get(0), "d1");
        assertEquals("job 'j': filename=/dev/sda is not the disk under test 'd1' (use /dev/vd*, d1 or no filename)",
                assertThrows(FioOptionException.class,
                        () -> FioTarget.check(JobFileParser.parse("[j]\nfilename=/dev/sda\n").get(0), "d1"))
                        .getMessage());
    }

    @Test
    void unreadableJobFileIsOneLine() {
        String message = assertThrows(FioOptionException.class,
                () -> Fio.parse(List.of("/nonexistent/job.fio"))).getMessage();
        assertTrue(message.startsWith("cannot read job file '/nonexistent/job.fio': NoSuchFileException"), message);
        assertFalse(message.contains("\n"));
    }
}
