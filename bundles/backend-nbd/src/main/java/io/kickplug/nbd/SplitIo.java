package io.kickplug.nbd;

import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.FixedBackendIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A READ or WRITE longer than the server's maximum payload (proto.md, "Block size constraints": the client MUST
 * NOT send a larger one), sent as several commands of at most that size over consecutive ranges; the request
 * completes once all have, with the first error any of them had. Allocates, but only for such requests.
 */
final class SplitIo {

    private final BackendIo io;
    private int left;
    private IOException error;

    private SplitIo(BackendIo io, int parts) {
        this.io = io;
        this.left = parts;
    }

    /** The parts of {@code io}, each at most {@code maxPart} bytes (a multiple of the server's minimum block). */
    static List<BackendIo> parts(BackendIo io, long maxPart) {
        int n = (int) ((io.length() + maxPart - 1) / maxPart);
        SplitIo parent = new SplitIo(io, n);
        List<BackendIo> out = new ArrayList<>(n);
        for (long at = 0; at < io.length(); at += maxPart) {
            out.add(parent.new Part(at, Math.min(maxPart, io.length() - at)));
        }
        return out;
    }

    private void partDone(IOException e) {
        boolean last;
        synchronized (this) {
            if (e != null && error == null) {
                error = e;
            }
            last = --left == 0;
        }
        if (last) {
            io.complete(error);
        }
    }

    /** Bytes {@code [at, at + length)} of the parent's buffers, as views (their positions are left alone). */
    private static ByteBuffer[] range(ByteBuffer[] buffers, long at, long length) {
        List<ByteBuffer> out = new ArrayList<>();
        long skip = at;
        long want = length;
        for (ByteBuffer b : buffers) {
            if (want == 0) {
                break;
            }
            int r = b.remaining();
            if (skip >= r) {
                skip -= r;
                continue;
            }
            int n = (int) Math.min(r - skip, want);
            out.add(b.slice(b.position() + (int) skip, n));
            want -= n;
            skip = 0;
        }
        return out.toArray(new ByteBuffer[0]);
    }

    /** One command's share of the parent: its range, views of its buffers, the parent's op and flags. */
    private final class Part extends FixedBackendIo {
        Part(long at, long length) {
            super(io.op(), io.offset() + at, length, range(io.buffers(), at, length), io.fua(), io.mayUnmap());
        }

        @Override
        public void complete(IOException e) {
            partDone(e);
        }
    }
}
