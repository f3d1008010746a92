package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The self-checking block format: every single-bit flip and every misplaced or stale block is caught. */
class VerifyCodecTest {

    @Test
    void everyBitFlipIsDetected() {
        for (VerifyKind kind : new VerifyKind[] {VerifyKind.CRC32C, VerifyKind.MD5}) {
            VerifyCodec codec = new VerifyCodec(kind);
            ByteBuffer block = ByteBuffer.allocate(1024);
            codec.fill(block, 4096, 77, 3);
            assertNull(codec.check(block, 4096, 77L, "f"));
            assertNull(codec.check(block, 4096, null, "f"));
            for (int bit = 0; bit < 1024 * 8; bit += 7) {
                block.put(bit / 8, (byte) (block.get(bit / 8) ^ (1 << (bit % 8))));
                assertNotNull(codec.check(block, 4096, 77L, "f"), kind + " bit " + bit);
                block.put(bit / 8, (byte) (block.get(bit / 8) ^ (1 << (bit % 8))));
            }
        }
    }

    @Test
    void wrongPlaceStaleAndWrongKindAreNamed() {
        VerifyCodec crc = new VerifyCodec(VerifyKind.CRC32C);
        ByteBuffer block = ByteBuffer.allocate(512);
        crc.fill(block, 512, 5, 0);
        assertEquals("verify: offset in header is 512, wanted 1024 at file /dev/vdc offset 1024, length 512",
                crc.check(block, 1024, null, "/dev/vdc"));
        assertTrue(crc.check(block, 512, 6L, "/dev/vdc").startsWith("verify: stale block"));
        assertTrue(new VerifyCodec(VerifyKind.MD5).check(block, 512, null, "x").startsWith("verify: block has verify type 1"));
        assertTrue(crc.check(block.duplicate().limit(512), 512, null, "x") == null);
        ByteBuffer zero = ByteBuffer.allocate(512);
        assertTrue(crc.check(zero, 0, null, "x").startsWith("verify: bad magic header 0, wanted acca"));
    }

    @Test
    void payloadDependsOnTheSeed() {
        VerifyCodec crc = new VerifyCodec(VerifyKind.CRC32C);
        ByteBuffer a = ByteBuffer.allocate(4096);
        ByteBuffer b = ByteBuffer.allocate(4096);
        crc.fill(a, 0, 1, 0);
        crc.fill(b, 0, 2, 0);
        assertNotEquals(a.slice(VerifyCodec.HEADER_BYTES, 64), b.slice(VerifyCodec.HEADER_BYTES, 64));
    }
}
