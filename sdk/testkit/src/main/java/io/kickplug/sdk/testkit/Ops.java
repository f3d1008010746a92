package io.kickplug.sdk.testkit;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Runs one operation on a backend as the device does: submitted to an {@link AsyncBlockBackend} (waiting for its one
 * completion), called on a synchronous one. An unchecked exception breaks {@link Rule#ERROR_AS_STATUS}.
 */
final class Ops {

    private Ops() {
    }

    static final int WAIT_SECONDS = 30;

    /** The error the operation ended with, null on success. */
    static IOException run(BlockBackend backend, KitIo io) {
        if (backend instanceof AsyncBlockBackend async) {
            try {
                async.submit(io);
                async.unplug();
            } catch (RuntimeException e) {
                throw new ContractViolation(Rule.ERROR_AS_STATUS, io + ": submit threw " + e
                        + " (a failure is reported through complete, never thrown)");
            }
            return io.await(WAIT_SECONDS);
        }
        try {
            switch (io.op()) {
                case READ -> backend.read(io.offset(), io.buffers());
                case WRITE -> backend.write(io.offset(), io.buffers());
                case FLUSH -> backend.flush();
                case DISCARD -> backend.discard(io.offset(), io.length());
                case WRITE_ZEROES -> backend.writeZeroes(io.offset(), io.length(), false);
                default -> throw new IllegalArgumentException(io.op().toString());
            }
            io.complete(null);
            return null;
        } catch (IOException e) {
            io.complete(e);
            return e;
        } catch (RuntimeException e) {
            throw new ContractViolation(Rule.ERROR_AS_STATUS, io + ": threw " + e
                    + " (the device answers VIRTIO_BLK_S_IOERR only for an IOException)");
        }
    }

    static byte[] pattern(int length, long seed) {
        byte[] b = new byte[length];
        new java.util.SplittableRandom(seed).nextBytes(b);
        return b;
    }

    static byte[] read(BlockBackend backend, long offset, int length) {
        KitIo io = KitIo.read(offset, length);
        IOException e = run(backend, io);
        if (e != null) {
            throw new AssertionError(io + " failed", e);
        }
        ByteBuffer b = io.buffers()[0];
        ContractViolation.check(b.remaining() == 0, Rule.DATA_INTACT, io + " left " + b.remaining()
                + " bytes of its buffer unfilled");
        return io.data();
    }
}
