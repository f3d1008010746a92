package io.kickplug.guest.workload;

import static org.junit.jupiter.api.Assertions.*;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class BlockPatternTest {

    private static byte[] block(long seed, long index) {
        byte[] b = new byte[512];
        new BlockPattern(seed).fill(index, b, b.length);
        return b;
    }

    @Test
    void sameSeedAndBlockGiveTheSameBytes() {
        assertArrayEquals(block(1, 5), block(1, 5));
    }

    @Test
    void blocksDifferFromEachOtherAndAcrossRuns() {
        assertFalse(Arrays.equals(block(1, 5), block(1, 6)));
        assertFalse(Arrays.equals(block(1, 5), block(2, 5)));
        assertFalse(Arrays.equals(block(1, 0), new byte[512]), "block 0 is not zeroes");
    }

    @Test
    void matchesDetectsASingleFlippedBit() {
        BlockPattern p = new BlockPattern(3);
        byte[] data = block(3, 9);
        byte[] scratch = new byte[512];
        assertTrue(p.matches(9, data, 512, scratch));
        data[511] ^= (byte) 0x80;
        assertFalse(p.matches(9, data, 512, scratch));
        assertFalse(p.matches(8, block(3, 9), 512, scratch), "a block at the wrong place does not match");
    }
}
