package io.kickplug.guest.fio;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * Written blocks that check themselves, after fio's verify header. Each block starts with a header
 * (little-endian):
 * <pre>
 *  0  u16 magic 0xacca           2  u16 verify type (1 crc32c, 2 md5)
 *  4  u32 block length           8  u64 rand_seed of the payload
 * 16  u64 block offset on disk  24  u64 numberio (the job's write sequence number)
 * 32  u32 crc32c of bytes 0..32 and 36..56
 * 36  checksum of the payload: crc32c (4 bytes) or md5 (16 bytes), then zeroes up to 56
 * 56  payload: bytes of SplittableRandom(rand_seed)
 * </pre>
 * Verifying checks the magic, the header checksum, that the block says it lives at the offset it was read
 * from with the length it was read with, and the payload checksum; a caller that knows which write it
 * expects also checks rand_seed. So a flipped byte anywhere in the block, a block written elsewhere, a
 * stale block and a never-written block are all detected, each with its offset.
 */
public final class VerifyCodec {

    public static final int MAGIC = 0xacca;
    public static final int HEADER_BYTES = 56;

    private final VerifyKind kind;
    private final CRC32C crc = new CRC32C();
    private final MessageDigest md5;
    private final byte[] digest = new byte[16];

    public VerifyCodec(VerifyKind kind) {
        if (kind == VerifyKind.NONE) {
            throw new IllegalArgumentException("no verify kind");
        }
        this.kind = kind;
        try {
            this.md5 = kind == VerifyKind.MD5 ? MessageDigest.getInstance("MD5") : null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no MD5", e);
        }
    }

    public VerifyKind kind() {
        return kind;
    }

    /** Fills {@code block} (position 0, limit = length) with the header and payload for this write. */
    public void fill(ByteBuffer block, long offset, long seed, long numberio) {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int length = b.limit();
        SplittableRandom random = new SplittableRandom(seed);
        int at = HEADER_BYTES;
        for (; at + 8 <= length; at += 8) {
            b.putLong(at, random.nextLong());
        }
        for (; at < length; at++) {
            b.put(at, (byte) random.nextInt());
        }
        b.putShort(0, (short) MAGIC);
        b.putShort(2, (short) (kind == VerifyKind.CRC32C ? 1 : 2));
        b.putInt(4, length);
        b.putLong(8, seed);
        b.putLong(16, offset);
        b.putLong(24, numberio);
        for (int i = 36; i < HEADER_BYTES; i++) {
            b.put(i, (byte) 0);
        }
        byte[] sum = payloadSum(b, length);
        for (int i = 0; i < sum.length; i++) {
            b.put(36 + i, sum[i]);
        }
        b.putInt(32, headerCrc(b));
    }

    /**
     * Checks a block read back from {@code offset}; {@code expectedSeed} is the rand_seed of the write
     * that should be there, or {@code null} when any valid block of this offset and length passes.
     *
     * @return {@code null} when the block is good, else one line saying what is wrong and where
     */
    public String check(ByteBuffer block, long offset, Long expectedSeed, String file) {
        ByteBuffer b = block.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int length = b.limit();
        String where = " at file " + file + " offset " + offset + ", length " + length;
        int magic = Short.toUnsignedInt(b.getShort(0));
        if (magic != MAGIC) {
            return "verify: bad magic header " + Integer.toHexString(magic) + ", wanted acca" + where;
        }
        int stored = b.getInt(32);
        int computed = headerCrc(b);
        if (stored != computed) {
            return "verify: header crc32c mismatch" + where + ": stored " + hex(stored) + ", computed " + hex(computed);
        }
        int type = Short.toUnsignedInt(b.getShort(2));
        int wantedType = kind == VerifyKind.CRC32C ? 1 : 2;
        if (type != wantedType) {
            return "verify: block has verify type " + type + ", wanted " + wantedType + " (" + kind.fioName() + ")"
                    + where;
        }
        long headerOffset = b.getLong(16);
        if (headerOffset != offset) {
            return "verify: offset in header is " + headerOffset + ", wanted " + offset + where;
        }
        int headerLength = b.getInt(4);
        if (headerLength != length) {
            return "verify: length in header is " + headerLength + ", wanted " + length + where;
        }
        if (expectedSeed != null && b.getLong(8) != expectedSeed) {
            return "verify: stale block (rand_seed " + Long.toHexString(b.getLong(8)) + ", wanted "
                    + Long.toHexString(expectedSeed) + ")" + where;
        }
        byte[] sum = payloadSum(b, length);
        byte[] storedSum = new byte[sum.length];
        for (int i = 0; i < sum.length; i++) {
            storedSum[i] = b.get(36 + i);
        }
        if (!java.util.Arrays.equals(sum, storedSum)) {
            return kind.fioName() + ": verify failed" + where + ": expected " + HexFormat.of().formatHex(storedSum)
                    + ", received " + HexFormat.of().formatHex(sum);
        }
        return null;
    }

    /** The header's own checksum: every header byte except the checksum field itself. */
    private int headerCrc(ByteBuffer b) {
        crc.reset();
        crc.update(b.duplicate().position(0).limit(32));
        crc.update(b.duplicate().position(36).limit(HEADER_BYTES));
        return (int) crc.getValue();
    }

    private byte[] payloadSum(ByteBuffer b, int length) {
        ByteBuffer payload = b.duplicate().position(HEADER_BYTES).limit(length);
        if (kind == VerifyKind.CRC32C) {
            crc.reset();
            crc.update(payload);
            int v = (int) crc.getValue();
            return new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)};
        }
        md5.reset();
        md5.update(payload);
        try {
            md5.digest(digest, 0, 16);
        } catch (java.security.DigestException e) {
            throw new IllegalStateException(e);
        }
        return digest.clone();
    }

    private static String hex(int v) {
        return "0x" + Integer.toHexString(v);
    }
}
