package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.text.JsonText;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** Jobs through FioRunner on the deterministic FakeMachine: counts, depth, verify, and both output formats. */
class FioRunTest {

    private static final int DISK = 4 << 20;

    private static FioReport run(FakeMachine m, String jobFile) {
        return FioRunner.run(m, "d1", JobFileParser.parse(jobFile));
    }

    @Test
    void seed000JobFileRunsAndReportsTheGroup() throws Exception {
        FakeMachine m = new FakeMachine(DISK, 4);
        FioReport report = FioRunner.run(m, "d1", JobFileParser.parse(JobParsingTest.seed000()));
        assertFalse(report.failed());
        List<JobResult> reported = report.reported();
        assertEquals(1, reported.size(), "group_reporting=1: one entry");
        JobResult g = reported.get(0);
        assertEquals("f1", g.name());
        assertEquals(4, g.jobs());
        assertEquals(4 * (DISK / 4096), g.read().ios(), "each job reads the whole disk once (no time_based)");
        assertEquals(4L * DISK, g.read().bytes());
        assertEquals(0, g.write().ios());
        assertEquals(g.read().ios(), g.read().clat().count());
        assertEquals(g.read().ios(), g.read().slat().count(), "libaio has a submission latency");
        assertTrue(m.maxInFlight <= 4 * 64);
        assertEquals(m.submits, m.commits, "fio's iodepth_batch_submit defaults to 1: one submission per I/O");
        for (String line : m.ops) {
            assertTrue(line.startsWith("READ "), line);
        }
    }

    @Test
    void iodepthBatchSubmitGroupsSubmissions() throws Exception {
        FakeMachine all = new FakeMachine(DISK, 4);
        seed000With(all, "iodepth_batch_submit=0");
        assertTrue(all.commits * 8 < all.submits, "iodepth_batch_submit=0: rounds of up to iodepth, "
                + all.commits + " commits for " + all.submits + " I/Os");

        FakeMachine m = new FakeMachine(DISK, 4);
        seed000With(m, "iodepth_batch=16");
        assertTrue(m.commits * 16 >= m.submits, "at most 16 I/Os per submission: " + m.commits + " commits");
        assertTrue(m.commits * 2 < m.submits, "batches of 16 while the queue refills: " + m.commits + " commits");

        // 64 free slots in batches of 24: 24, 24, then the rest (16) in a last, shorter submission.
        FakeMachine u = new FakeMachine(DISK, 4);
        JobResult g = seed000With(u, "iodepth_batch_submit=24").reported().get(0);
        assertEquals(u.submits / 64 * 3, u.commits, "each refill of 64 is three submissions (24 + 24 + 16)");
        // The submission latency ends at the commit, before the completion: slat < lat (a commit that did not
        // stamp its I/Os would leave slat equal to lat).
        assertTrue(g.read().slat().mean() < g.read().lat().mean(), "slat " + g.read().slat().mean() + " lat "
                + g.read().lat().mean());
    }

    /** Runs seed 000's job file with {@code option} added on {@code m}: it succeeds, each job reads the disk once. */
    private static FioReport seed000With(FakeMachine m, String option) throws Exception {
        FioReport report = run(m, JobParsingTest.seed000().replace("iodepth=64", "iodepth=64\n" + option));
        assertFalse(report.failed());
        assertEquals(4 * (DISK / 4096), m.submits);
        return report;
    }

    @Test
    void humanOutputHasFiosShape() throws Exception {
        FioReport report = FioRunner.run(new FakeMachine(DISK, 2), "d1",
                JobFileParser.parse(JobParsingTest.seed000()));
        String text = FioText.format(report);
        String[] patterns = {
            "guest: disk=d1 \\(4096KiB\\), vcpus=2, queues=1, exit latency=5000 ns, inject latency=2000 ns, "
                + "kick policy=outside-lock",
            "f1: \\(g=0\\): rw=randread, bs=\\(R\\) 4096B-4096B, \\(W\\) 4096B-4096B, \\(T\\) 4096B-4096B, "
                + "ioengine=libaio, iodepth=64",
            "Starting 4 processes",
            "f1: \\(groupid=0, jobs=4\\): err= 0: pid=\\d+: \\w{3} \\w{3} [ \\d]\\d \\d\\d:\\d\\d:\\d\\d \\d{4}",
            "  read: IOPS=\\d+(\\.\\d+)?[kM]?, BW=\\d+(\\.\\d+)?(B|KiB|MiB|GiB)/s \\(\\d+(\\.\\d+)?(B|kB|MB|GB)/s\\)"
                + "\\(16\\.0MiB/\\d+msec\\)",
            "    slat \\((nsec|usec|msec)\\): min=\\d+(\\.\\d+)?[kM]?, max=\\d+(\\.\\d+)?[kM]?, avg= *\\d+\\.\\d\\d, stdev= *\\d+\\.\\d\\d",
            "    clat \\((nsec|usec|msec)\\): min=\\d+(\\.\\d+)?[kM]?, max=\\d+(\\.\\d+)?[kM]?, avg= *\\d+\\.\\d\\d, stdev= *\\d+\\.\\d\\d",
            "     lat \\((nsec|usec|msec)\\): min=\\d+(\\.\\d+)?[kM]?, max=\\d+(\\.\\d+)?[kM]?, avg= *\\d+\\.\\d\\d, stdev= *\\d+\\.\\d\\d",
            "    clat percentiles \\((nsec|usec|msec)\\):",
            "     \\|  1\\.00th=\\[ *\\d+\\],  5\\.00th=\\[ *\\d+\\], 10\\.00th=\\[ *\\d+\\], 20\\.00th=\\[ *\\d+\\],",
            "     \\| 99\\.00th=\\[ *\\d+\\], 99\\.50th=\\[ *\\d+\\], 99\\.90th=\\[ *\\d+\\], 99\\.95th=\\[ *\\d+\\],",
            "     \\| 99\\.99th=\\[ *\\d+\\]",
            "  cpu          : usr=\\d+\\.\\d\\d%, sys=\\d+\\.\\d\\d%",
            "Run status group 0 \\(all jobs\\):",
            "   READ: bw=\\S+/s \\(\\S+/s\\), \\S+/s-\\S+/s \\(\\S+/s-\\S+/s\\), io=16\\.0MiB \\(16\\.7MB\\), run=\\d+-\\d+msec",
        };
        List<String> lines = text.lines().toList();
        for (String p : patterns) {
            Pattern pattern = Pattern.compile(p);
            assertTrue(lines.stream().anyMatch(l -> pattern.matcher(l).matches()), "no line matches " + p + "\n" + text);
        }
        assertFalse(text.contains("write:"), "no write section for a read job");
    }

    @Test
    void jsonOutputParsesAndHasFiosFields() throws Exception {
        FioReport report = FioRunner.run(new FakeMachine(DISK, 4), "d1",
                JobFileParser.parse(JobParsingTest.seed000()));
        JsonNode root = new ObjectMapper().readTree(FioJson.format(report));
        assertEquals(FioJson.VERSION, root.get("fio version").asText());
        assertTrue(root.get("timestamp").isIntegralNumber());
        assertEquals(5000, root.get("kickplug").get("exit_latency_ns").asLong());
        JsonNode jobs = root.get("jobs");
        assertEquals(1, jobs.size());
        JsonNode job = jobs.get(0);
        assertEquals("f1", job.get("jobname").asText());
        assertEquals(0, job.get("groupid").asInt());
        assertEquals(0, job.get("error").asInt());
        JsonNode read = job.get("read");
        assertEquals(4L * DISK, read.get("io_bytes").asLong());
        assertEquals(4 * DISK / 4096, read.get("total_ios").asLong());
        assertTrue(read.get("iops").isDouble() && read.get("iops").asDouble() > 0);
        assertTrue(read.get("bw").canConvertToLong() && read.get("bw").asLong() > 0, "bw in KiB/s");
        assertEquals(read.get("bw_bytes").asLong() / 1024, read.get("bw").asLong());
        assertTrue(read.get("runtime").asLong() >= 0);
        for (String lat : List.of("slat_ns", "clat_ns", "lat_ns")) {
            JsonNode s = read.get(lat);
            for (String f : List.of("min", "max", "mean", "stddev", "N")) {
                assertNotNull(s.get(f), lat + "." + f);
            }
            assertEquals(4 * DISK / 4096, s.get("N").asLong(), lat);
            assertTrue(s.get("min").asLong() <= s.get("max").asLong());
        }
        JsonNode pct = read.get("clat_ns").get("percentile");
        for (String k : List.of("1.000000", "50.000000", "99.000000", "99.500000", "99.990000")) {
            assertTrue(pct.get(k).canConvertToLong(), k);
        }
        assertTrue(pct.get("1.000000").asLong() <= pct.get("99.000000").asLong());
        assertEquals(0, job.get("write").get("total_ios").asLong());
        assertEquals(0, job.get("trim").get("io_bytes").asLong());
        assertTrue(job.get("usr_cpu").isNumber());
        assertTrue(job.get("sys_cpu").isNumber());
        assertEquals("randread", job.get("job options").get("rw").asText());
    }

    @Test
    void jsonWithoutGroupReportingHasOneEntryPerJob() throws Exception {
        FioReport report = run(new FakeMachine(DISK, 2), "[a]\nrw=read\nsize=64k\nnumjobs=2\n[b]\nrw=write\nsize=64k\n");
        JsonNode jobs = new ObjectMapper().readTree(FioJson.format(report)).get("jobs");
        assertEquals(3, jobs.size());
        assertEquals("b", jobs.get(2).get("jobname").asText());
        assertEquals(16, jobs.get(2).get("write").get("total_ios").asLong());
        assertEquals(65536, jobs.get(0).get("read").get("io_bytes").asLong());
    }

    @Test
    void syncEnginesKeepOneInFlightAndHaveNoSlat() {
        FakeMachine m = new FakeMachine(DISK, 1);
        FioReport report = run(m, "[j]\nioengine=psync\niodepth=32\nrw=randwrite\nsize=256k\n");
        assertEquals(1, m.maxInFlight, "psync ignores iodepth");
        JobResult r = report.jobs().get(0);
        assertEquals(64, r.write().ios());
        assertEquals(0, r.write().slat().count());
        assertEquals(64, r.write().clat().count());
        assertEquals(m.submits, m.commits, "one I/O per round");
    }

    @Test
    void asyncEnginesKeepIodepthInFlight() {
        FakeMachine m = new FakeMachine(DISK, 1);
        run(m, "[j]\nioengine=libaio\niodepth=8\nrw=read\nsize=1m\n");
        assertEquals(8, m.maxInFlight);
        assertEquals(256, m.submits);
    }

    @Test
    void timeBasedKeepsGoingOverTheRegion() {
        FakeMachine m = new FakeMachine(DISK, 1);
        FioReport report = run(m, "[j]\nrw=randread\nsize=8k\ntime_based\nruntime=50ms\n");
        assertTrue(report.jobs().get(0).read().ios() > 2, "more than one pass over two blocks");
        assertTrue(report.jobs().get(0).runtimeNanos() >= 50_000_000L, "ran for its runtime");
    }

    @Test
    void ioIssuedDuringTheRampIsNotCounted() {
        FakeMachine m = new FakeMachine(DISK, 1);
        // 16 reads finish long before a one-hour ramp ends: all of them ran, none is in the statistics.
        FioReport report = run(m, "[j]\nrw=read\nsize=64k\nramp_time=1h\n");
        assertEquals(16, m.submits);
        assertEquals(0, report.jobs().get(0).read().ios());
        assertEquals(0, report.jobs().get(0).runtimeNanos());
    }

    @Test
    void loopsRepeatsTheRegion() {
        FakeMachine m = new FakeMachine(DISK, 1);
        FioReport report = run(m, "[j]\nrw=write\nsize=64k\nloops=3\n");
        assertEquals(48, report.jobs().get(0).write().ios());
    }

    @Test
    void writeVerifyPasses() {
        for (String kind : List.of("crc32c", "md5")) {
            FakeMachine m = new FakeMachine(DISK, 2);
            // Two jobs on disjoint regions: clones on one region would overwrite each other's blocks.
            String job = "rw=randwrite\nverify=" + kind + "\nsize=1m\niodepth=16\nioengine=libaio\n";
            FioReport report = run(m, "[a]\n" + job + "offset=0\n[b]\n" + job + "offset=1m\n");
            assertFalse(report.failed(), kind + ": " + report.errorLines());
            for (JobResult r : report.jobs()) {
                assertEquals(256, r.write().ios());
                assertEquals(256, r.read().ios(), "every written block is read back");
            }
        }
    }

    @Test
    void sequentialBsrangeWriteVerifyPassesOverSeveralLoops() {
        FioReport report = run(new FakeMachine(DISK, 1), "[j]\nrw=write\nbsrange=4k-64k\nverify=crc32c\nsize=1m\n"
                + "loops=3\niodepth=4\nioengine=libaio\n");
        assertFalse(report.failed(), report.errorLines().toString());
        assertTrue(report.jobs().get(0).read().ios() > 0);
    }

    @Test
    void corruptedBlockIsAVerifyFailureWithItsOffset() {
        for (String kind : List.of("crc32c", "md5")) {
            FakeMachine m = new FakeMachine(DISK, 1);
            long victim = 123 * 4096L;
            m.beforeRead = offset -> {
                if (offset == victim) {
                    m.disk[(int) victim + 1000] ^= 0x01; // one bit of the payload, between write and verify
                }
            };
            FioReport report = run(m, "[j]\nrw=randwrite\nverify=" + kind + "\nsize=1m\niodepth=8\nioengine=libaio\n");
            assertTrue(report.failed());
            JobResult r = report.jobs().get(0);
            assertEquals(JobResult.EILSEQ, r.error());
            String line = report.errorLines().get(0);
            assertTrue(line.startsWith("job 'j': " + kind + ": verify failed at file d1 offset " + victim
                    + ", length 4096: expected "), line);
            assertTrue(FioText.format(report).contains("err=84"));
        }
    }

    @Test
    void corruptedHeaderAndMisplacedBlockAreDetected() {
        FakeMachine m = new FakeMachine(DISK, 1);
        m.beforeRead = offset -> {
            if (offset == 8192) {
                // a block written for offset 4096 now sits at 8192 (a misdirected write)
                System.arraycopy(m.disk, 4096, m.disk, 8192, 4096);
            }
        };
        FioReport report = run(m, "[j]\nrw=write\nverify=crc32c\nsize=64k\n");
        assertEquals("job 'j': verify: offset in header is 4096, wanted 8192 at file d1 offset 8192, length 4096",
                report.errorLines().get(0));
    }

    @Test
    void readVerifyChecksBlocksWrittenBefore() {
        FakeMachine m = new FakeMachine(DISK, 1);
        assertFalse(run(m, "[w]\nrw=write\nverify=md5\nsize=256k\n").failed());
        FioReport read = run(m, "[r]\nrw=randread\nverify=md5\nsize=256k\nrandseed=99\n");
        assertFalse(read.failed(), read.errorLines().toString());
        assertEquals(64, read.jobs().get(0).read().ios());

        FioReport unwritten = run(m, "[r]\nrw=read\nverify=md5\noffset=256k\nsize=64k\n");
        assertEquals("job 'r': verify: bad magic header 0, wanted acca at file d1 offset 262144, length 4096",
                unwritten.errorLines().get(0));
    }

    @Test
    void ioErrorFailsTheJob() {
        FakeMachine m = new FakeMachine(DISK, 1);
        m.status = VirtioBlk.S_IOERR;
        FioReport report = run(m, "[j]\nrw=read\nsize=64k\niodepth=4\nioengine=libaio\n");
        assertEquals(JobResult.EIO, report.jobs().get(0).error());
        assertTrue(report.errorLines().get(0).startsWith("job 'j': io error: status 1 on read at file d1 offset "));
        assertTrue(m.submits <= 4, "the job stops at the first error: " + m.submits);
    }

    @Test
    void jobsThatDoNotFitAreRefusedBeforeRunning() {
        FakeMachine m = new FakeMachine(DISK, 1);
        assertThrows(FioOptionException.class, () -> run(m, "[j]\nsize=8m\n"));
        assertThrows(FioOptionException.class, () -> run(m, "[j]\nfilename=/dev/sdb\n"));
        assertEquals(0, m.submits);
    }

    @Test
    void numbersAreFormattedLikeFiosNum2str() {
        assertEquals("11.5MiB", FioText.iec(11.5 * 1024 * 1024));
        assertEquals("12.0MB", FioText.si(12_058_624));
        assertEquals("133MiB", FioText.iec(133.0 * 1024 * 1024));
        assertEquals("4096MiB", FioText.iec(4096.0 * 1024 * 1024));
        assertEquals("1522KiB", FioText.iec(1522.0 * 1024));
        assertEquals("34.0k", FioText.num2str(34_000, 4, 1000, new String[] {"", "k", "M"}));
        assertEquals("3068", FioText.num2str(3068, 4, 1000, new String[] {"", "k", "M"}));
        assertEquals("57029", FioText.num2str(57_029, 6, 1000, new String[] {"", "k", "M"}));
        assertEquals("\"a\\\"b\\\\c\\n\"", JsonText.quote("a\"b\\c\n"));
    }
}
