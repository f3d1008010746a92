package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Where fio jobs put their I/O: sequential walks, the random map, seeds, block sizes, the read/write mix. */
class OffsetGeneratorTest {

    private static final JobSpec.Region REGION = new JobSpec.Region(1 << 20, 1000 * 4096L);

    private static List<OffsetGenerator.Io> take(OffsetGenerator g, int n) {
        List<OffsetGenerator.Io> ios = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            ios.add(g.next());
        }
        return ios;
    }

    @Test
    void permutationIsABijectionForManySizes() {
        for (long n : new long[] {1, 2, 3, 5, 16, 17, 255, 256, 1000, 4097, 65_537}) {
            BlockPermutation p = new BlockPermutation(n, 42);
            boolean[] seen = new boolean[(int) n];
            for (long i = 0; i < n; i++) {
                long v = p.apply(i);
                assertTrue(v >= 0 && v < n, "in range");
                assertFalse(seen[(int) v], "n=" + n + ": " + v + " twice");
                seen[(int) v] = true;
            }
        }
    }

    @Test
    void randomMapCoversEveryBlockOncePerPass() {
        OffsetGenerator g = new OffsetGenerator(RwMode.RANDREAD, REGION, 4096, 4096, 50, 7, false);
        for (int pass = 0; pass < 3; pass++) {
            Set<Long> offsets = new HashSet<>();
            for (OffsetGenerator.Io io : take(g, 1000)) {
                assertTrue(offsets.add(io.offset()), "block " + io.offset() + " twice in pass " + pass);
                assertEquals(0, (io.offset() - REGION.start()) % 4096);
                assertTrue(io.offset() >= REGION.start() && io.offset() + io.length() <= REGION.end());
                assertFalse(io.write());
            }
            assertEquals(1000, offsets.size());
            assertEquals(pass + 1, g.passes());
        }
    }

    @Test
    void randomOrderIsNotSequentialAndSeedsReproduce() {
        List<OffsetGenerator.Io> a = take(new OffsetGenerator(RwMode.RANDWRITE, REGION, 4096, 4096, 50, 7, false), 1000);
        List<OffsetGenerator.Io> b = take(new OffsetGenerator(RwMode.RANDWRITE, REGION, 4096, 4096, 50, 7, false), 1000);
        List<OffsetGenerator.Io> c = take(new OffsetGenerator(RwMode.RANDWRITE, REGION, 4096, 4096, 50, 8, false), 1000);
        assertEquals(a, b, "same seed, same sequence");
        assertNotEquals(a, c, "another seed, another sequence");
        long inOrder = 0;
        for (int i = 1; i < a.size(); i++) {
            if (a.get(i).offset() == a.get(i - 1).offset() + 4096) {
                inOrder++;
            }
        }
        assertTrue(inOrder < 100, "random order, " + inOrder + " sequential steps");
    }

    @Test
    void norandommapRepeatsBlocks() {
        OffsetGenerator g = new OffsetGenerator(RwMode.RANDREAD, REGION, 4096, 4096, 50, 7, true);
        Set<Long> offsets = new HashSet<>();
        for (OffsetGenerator.Io io : take(g, 1000)) {
            offsets.add(io.offset());
        }
        // 1000 independent draws from 1000 blocks hit about 632 distinct ones, never all of them in practice.
        assertTrue(offsets.size() < 1000, "distinct blocks " + offsets.size());
        assertEquals(1, g.passes(), "a pass is the region's size in bytes");
    }

    @Test
    void sequentialWalksAndWrapsPerPass() {
        OffsetGenerator g = new OffsetGenerator(RwMode.WRITE, new JobSpec.Region(8192, 5 * 4096 + 1024), 4096, 4096,
                50, 1, false);
        List<OffsetGenerator.Io> ios = take(g, 6);
        for (int i = 0; i < 5; i++) {
            assertEquals(8192 + i * 4096L, ios.get(i).offset());
            assertTrue(ios.get(i).write());
        }
        assertEquals(8192, ios.get(5).offset(), "the 1 KiB tail is smaller than bs: next pass");
        assertEquals(1, g.passes());
    }

    @Test
    void bsrangeDrawsAlignedSizesAndClipsAtTheEnd() {
        OffsetGenerator g = new OffsetGenerator(RwMode.READ, new JobSpec.Region(0, 1 << 20), 4096, 65536, 50, 3,
                false);
        Set<Integer> sizes = new HashSet<>();
        long expected = 0;
        while (g.passes() == 0) {
            OffsetGenerator.Io io = g.next();
            assertEquals(expected, io.offset());
            assertTrue(io.length() >= 4096 && io.length() <= 65536 && io.length() % 4096 == 0, "" + io.length());
            assertTrue(io.offset() + io.length() <= 1 << 20);
            sizes.add(io.length());
            expected += io.length();
        }
        assertEquals(1 << 20, expected, "the pass covers the region exactly");
        assertTrue(sizes.size() > 5, "sizes vary: " + sizes);
    }

    @Test
    void rwmixreadSetsTheShare() {
        OffsetGenerator g = new OffsetGenerator(RwMode.RANDRW, REGION, 4096, 4096, 70, 11, false);
        long reads = take(g, 10_000).stream().filter(io -> !io.write()).count();
        assertTrue(reads > 6500 && reads < 7500, "reads " + reads + " of 10000 at rwmixread=70");
    }
}
