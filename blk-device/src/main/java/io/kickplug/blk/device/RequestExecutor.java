package io.kickplug.blk.device;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.request.BlkRequest;
import io.kickplug.blk.request.Outcome;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Performs parsed virtio-blk requests on a backend (VIRTIO 1.2 section 5.2.6): the backend call(s) and
 * the data written into the chain. Synchronous; it never writes the status byte, which is the business of
 * whoever called it ({@link RequestProcessor#finish}). It may run on any thread: it keeps no state of its
 * own between calls.
 */
public final class RequestExecutor {

    private static final Logger LOG = System.getLogger(RequestExecutor.class.getName());

    private final String diskName;
    private final BlockBackend backend;
    private final byte[] id;

    /** What {@link #execute} did: the outcome and the data bytes it wrote into the chain. */
    public record Result(Outcome outcome, long dataWritten) {
    }

    /**
     * @param serial the GET_ID answer, at most 20 bytes; padded with zeroes to 20 (section 5.2.6)
     */
    public RequestExecutor(String diskName, BlockBackend backend, byte[] serial) {
        if (serial.length > VirtioBlk.ID_BYTES) {
            throw new IllegalArgumentException("serial has " + serial.length + " bytes, at most 20 allowed");
        }
        this.diskName = diskName;
        this.backend = backend;
        this.id = Arrays.copyOf(serial, VirtioBlk.ID_BYTES);
    }

    /** Performs the request on the backend (or refuses it); writes no status. */
    public Result execute(BlkRequest request) {
        if (request.rejected()) {
            LOG.log(Level.DEBUG, () -> "disk " + diskName + ": request " + request.head() + " refused: "
                    + request.rejection().reason());
            return new Result(request.rejection().outcome(), 0);
        }
        switch (request.kind()) {
            case IN: {
                ByteBuffer[] dst = request.sink().views(request.dataBytes());
                try {
                    backend.read(request.offset(), dst);
                } catch (IOException | RuntimeException e) {
                    return backendFailed("read", request, e);
                }
                return new Result(Outcome.OK, request.dataBytes());
            }
            case OUT: {
                ByteBuffer[] src = request.source().views(request.dataBytes());
                try {
                    backend.write(request.offset(), src);
                } catch (IOException | RuntimeException e) {
                    return backendFailed("write", request, e);
                }
                return new Result(Outcome.OK, 0);
            }
            case FLUSH:
                try {
                    backend.flush();
                } catch (IOException | RuntimeException e) {
                    return backendFailed("flush", request, e);
                }
                return new Result(Outcome.OK, 0);
            case GET_ID: {
                int length = (int) request.dataBytes();
                request.sink().write(id, 0, length);
                return new Result(Outcome.OK, length);
            }
            default:
                throw new IllegalStateException("unhandled request type " + request.kind());
        }
    }

    private Result backendFailed(String operation, BlkRequest request, Exception e) {
        LOG.log(Level.WARNING, "disk " + diskName + ": " + operation + " of " + request.dataBytes()
                + " bytes at sector " + Long.toUnsignedString(request.sector()) + " failed: " + e);
        return new Result(Outcome.IOERR, 0);
    }
}
