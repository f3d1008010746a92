package io.kickplug.blk.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;

/** Backend reads and writes for tests, scattered over several buffers as a request's segments are. */
public final class BackendIo {

    private BackendIo() {
    }

    /** {@code length} bytes of a pseudo-random pattern that {@code seed} repeats (test data). */
    public static byte[] random(int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /**
     * Reads into buffers of the sizes {@code pieces} (direct or heap), checks that each was filled, and returns
     * their bytes in order.
     */
    public static byte[] read(BlockBackend backend, long offset, boolean direct, int... pieces) throws IOException {
        ByteBuffer[] dst = new ByteBuffer[pieces.length];
        int total = 0;
        for (int i = 0; i < pieces.length; i++) {
            dst[i] = direct ? ByteBuffer.allocateDirect(pieces[i]) : ByteBuffer.allocate(pieces[i]);
            total += pieces[i];
        }
        backend.read(offset, dst);
        ByteBuffer all = ByteBuffer.allocate(total);
        for (ByteBuffer b : dst) {
            assertEquals(0, b.remaining(), "every destination is filled");
            all.put(b.flip());
        }
        return all.array();
    }

    /**
     * Writes {@code data}: without {@code pieces} from one heap buffer, else split into direct buffers of those
     * sizes at odd addresses (unaligned on purpose); checks that every byte was taken.
     */
    public static void write(BlockBackend backend, long offset, byte[] data, int... pieces) throws IOException {
        ByteBuffer[] src;
        if (pieces.length == 0) {
            src = new ByteBuffer[] {ByteBuffer.wrap(data)};
        } else {
            src = new ByteBuffer[pieces.length];
            int at = 0;
            for (int i = 0; i < pieces.length; i++) {
                ByteBuffer b = ByteBuffer.allocateDirect(pieces[i] + 1).position(1).slice();
                b.put(data, at, pieces[i]).flip();
                src[i] = b;
                at += pieces[i];
            }
        }
        backend.write(offset, src);
        for (ByteBuffer b : src) {
            assertEquals(0, b.remaining(), "every source is taken");
        }
    }
}
