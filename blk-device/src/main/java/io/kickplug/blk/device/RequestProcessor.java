package io.kickplug.blk.device;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.blk.request.BlkRequest;
import io.kickplug.blk.request.BlkRequestParser;
import io.kickplug.blk.request.Outcome;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Serves virtio-blk requests against a backend. {@link #finish} is the one place that turns an outcome
 * into the status byte, the counters and the used length.
 *
 * <p>Today every request runs inline on the calling I/O thread, which suits non-blocking backends
 * ({@link BlockBackend#blocking()} false). A worker pool for blocking backends would call {@link #execute}
 * on a worker and hand {@link #finish} plus the used-ring push back to the queue's I/O thread.
 */
final class RequestProcessor {

    private static final Logger LOG = System.getLogger(RequestProcessor.class.getName());

    private final String diskName;
    private final BlockBackend backend;
    private final boolean readOnly;
    private final byte[] id;
    private final BlkStats stats;

    /**
     * @param serial the GET_ID answer, at most 20 bytes; padded with zeroes to 20 (section 5.2.6)
     */
    RequestProcessor(String diskName, BlockBackend backend, boolean readOnly, byte[] serial, BlkStats stats) {
        if (serial.length > VirtioBlk.ID_BYTES) {
            throw new IllegalArgumentException("serial has " + serial.length + " bytes, at most 20 allowed");
        }
        this.diskName = diskName;
        this.backend = backend;
        this.readOnly = readOnly;
        this.id = Arrays.copyOf(serial, VirtioBlk.ID_BYTES);
        this.stats = stats;
    }

    /** Capacity in 512-byte sectors, as the configuration space reports it. */
    long capacitySectors() {
        return backend.size() / VirtioBlk.SECTOR_SIZE;
    }

    /**
     * Parses and serves one chain, writing its status byte.
     *
     * @return the used length to push: bytes written into the chain, status included
     * @throws GuestFaultException when the chain cannot carry a request (the request is abandoned)
     */
    int serve(DescriptorChain chain) {
        stats.begin();
        BlkRequest request;
        try {
            request = BlkRequestParser.parse(chain, capacitySectors(), readOnly);
        } catch (RuntimeException e) {
            stats.abandon();
            throw e;
        }
        Result result;
        try {
            result = execute(request);
        } catch (RuntimeException e) {
            // The request is still well framed: answer it, then let the caller stop the queue.
            finish(request, Outcome.IOERR, 0);
            throw e;
        }
        return finish(request, result.outcome(), result.dataWritten());
    }

    /** What {@link #execute} did: the outcome and the data bytes it wrote into the chain. */
    record Result(Outcome outcome, long dataWritten) {
    }

    /** Performs the request on the backend (or refuses it); writes no status. */
    Result execute(BlkRequest request) {
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

    /**
     * Ends {@code request}: writes its status byte, counts it, and returns the used length (data bytes
     * written into the chain, plus the status byte; section 2.7.8.2 forbids overstating it).
     */
    int finish(BlkRequest request, Outcome outcome, long dataWritten) {
        request.status().writeU8(outcome.status());
        stats.complete(request.kind(), outcome, outcome == Outcome.OK ? request.dataBytes() : 0);
        return (int) (dataWritten + 1);
    }
}
