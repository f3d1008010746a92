package io.kickplug.blk.device;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.request.BlkRequest;
import io.kickplug.blk.request.DiscardSegment;
import io.kickplug.blk.request.Outcome;
import io.kickplug.blk.request.RequestType;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;

/**
 * Performs parsed virtio-blk requests on a backend (VIRTIO 1.2 section 5.2.6): the backend call(s) and
 * the data written into the chain. Synchronous; it never writes the status byte, which is the business of
 * whoever called it ({@link RequestProcessor#finish}). It may run on any thread: it keeps no state of its
 * own between calls.
 *
 * <p>Writethrough (section 5.2.6.2): when {@link BlkMode#writeCache()} is off, an OUT, WRITE_ZEROES or
 * DISCARD is followed by a backend flush before it completes, so a completed write is stable. A
 * SECURE_ERASE (done as writing zeroes) is always flushed: the old data must be gone when it completes.
 */
public final class RequestExecutor {

    private static final Logger LOG = System.getLogger(RequestExecutor.class.getName());

    /**
     * GET_LIFETIME's answer (5.2.6): {@code pre_eol_info} VIRTIO_BLK_PRE_EOL_INFO_NORMAL (1), both lifetime
     * estimates 0 (not defined): none of Kickplug's backends wears out.
     */
    private static final byte[] LIFETIME = {1, 0, 0, 0, 0, 0};

    private final String diskName;
    private final BlockBackend backend;
    private final byte[] id;
    private final BlkMode mode;

    /** What {@link #execute} did: the outcome and the data bytes it wrote into the chain. */
    public record Result(Outcome outcome, long dataWritten) {
    }

    /**
     * An executor with a write cache and only FLUSH negotiated ({@link BlkMode#negotiated}).
     *
     * @param serial the GET_ID answer, at most 20 bytes; padded with zeroes to 20 (section 5.2.6)
     */
    public RequestExecutor(String diskName, BlockBackend backend, byte[] serial) {
        this(diskName, backend, serial, BlkMode.negotiated(VirtioBlk.F_FLUSH));
    }

    /**
     * @param serial the GET_ID answer, at most 20 bytes; padded with zeroes to 20 (section 5.2.6)
     * @param mode the device's negotiated state: write cache on or off, WRITE_ZEROES unmap permission
     */
    public RequestExecutor(String diskName, BlockBackend backend, byte[] serial, BlkMode mode) {
        if (serial.length > VirtioBlk.ID_BYTES) {
            throw new IllegalArgumentException("serial has " + serial.length + " bytes, at most 20 allowed");
        }
        this.diskName = diskName;
        this.backend = backend;
        this.id = Arrays.copyOf(serial, VirtioBlk.ID_BYTES);
        this.mode = mode;
    }

    /** Performs the request on the backend (or refuses it); writes no status. */
    public Result execute(BlkRequest request) {
        Outcome outcome = run(request);
        return new Result(outcome, request.dataWritten());
    }

    /**
     * Performs the request on the backend (or refuses it) and records in it the data bytes written into the
     * chain ({@link BlkRequest#dataWritten(long)}); writes no status. Allocates nothing on success.
     */
    public Outcome run(BlkRequest request) {
        request.dataWritten(0);
        if (request.rejected()) {
            if (LOG.isLoggable(Level.DEBUG)) {
                LOG.log(Level.DEBUG, "disk " + diskName + ": request " + request.head() + " refused: "
                        + request.rejection().reason());
            }
            return request.rejection().outcome();
        }
        switch (request.kind()) {
            case IN: {
                ByteBuffer[] dst = request.sink().views(request.dataBytes());
                try {
                    backend.read(request.offset(), dst);
                } catch (IOException | RuntimeException e) {
                    return backendFailed("read", request, e);
                }
                request.dataWritten(request.dataBytes());
                return Outcome.OK;
            }
            case OUT: {
                ByteBuffer[] src = request.source().views(request.dataBytes());
                try {
                    backend.write(request.offset(), src);
                    writeThrough(false);
                } catch (IOException | RuntimeException e) {
                    return backendFailed("write", request, e);
                }
                return Outcome.OK;
            }
            case FLUSH:
                try {
                    backend.flush();
                } catch (IOException | RuntimeException e) {
                    return backendFailed("flush", request, e);
                }
                return Outcome.OK;
            case GET_ID: {
                int length = (int) request.dataBytes();
                request.sink().write(id, 0, length);
                request.dataWritten(length);
                return Outcome.OK;
            }
            case GET_LIFETIME:
                request.sink().write(LIFETIME, 0, LIFETIME.length);
                request.dataWritten(LIFETIME.length);
                return Outcome.OK;
            case DISCARD:
            case WRITE_ZEROES:
            case SECURE_ERASE:
                try {
                    for (DiscardSegment segment : request.segments()) {
                        zero(request, segment);
                    }
                    writeThrough(request.kind() == RequestType.SECURE_ERASE);
                } catch (IOException | RuntimeException e) {
                    return backendFailed(request.kind().name().toLowerCase(Locale.ROOT), request, e);
                }
                return Outcome.OK;
            default:
                throw new IllegalStateException("unhandled request type " + request.kind());
        }
    }

    private void zero(BlkRequest request, DiscardSegment segment) throws IOException {
        if (segment.numSectors() == 0) {
            return;
        }
        switch (request.kind()) {
            case DISCARD:
                backend.discard(segment.offset(), segment.bytes());
                break;
            case WRITE_ZEROES:
                // 5.2.6.2: the unmap flag may deallocate only when write_zeroes_may_unmap says so.
                backend.writeZeroes(segment.offset(), segment.bytes(),
                        segment.unmap() && mode.limits().writeZeroesMayUnmap());
                break;
            default:
                backend.writeZeroes(segment.offset(), segment.bytes(), false);
                break;
        }
    }

    /** Flushes when the device is in writethrough mode, or when {@code always}. */
    private void writeThrough(boolean always) throws IOException {
        if (always || !mode.writeCache()) {
            backend.flush();
        }
    }

    private Outcome backendFailed(String operation, BlkRequest request, Exception e) {
        LOG.log(Level.WARNING, "disk " + diskName + ": " + operation + " of " + request.dataBytes()
                + " bytes at sector " + Long.toUnsignedString(request.sector()) + " failed: " + e);
        request.dataWritten(0);
        return Outcome.IOERR;
    }
}
