package io.kickplug.nbd;

import io.kickplug.api.blk.BackendIo;

/** How a backend request becomes an NBD command: whether the export takes it, its type and its flags. */
final class Requests {

    private Requests() {
    }

    /**
     * Why {@code io} cannot be sent to the export, or {@code null}: the export's flags, its minimum
     * block size and size (proto.md, "Block size constraints"), read-only.
     */
    static String refusal(BackendIo io, ExportInfo info, boolean readOnly) {
        long offset = io.offset();
        long length = io.length();
        switch (io.op()) {
            case FLUSH:
                return null;
            case READ:
            case WRITE:
                break; // longer than the server's maximum payload: NbdBackend sends it in parts (SplitIo)
            case DISCARD:
                if (!info.has(Nbd.FLAG_SEND_TRIM) || readOnly) {
                    return "the server does not support trim";
                }
                break;
            case WRITE_ZEROES:
                if (!info.has(Nbd.FLAG_SEND_WRITE_ZEROES) || readOnly) {
                    return "the server does not support write-zeroes";
                }
                break;
            default:
                return "unknown operation " + io.op();
        }
        if (length > 0xFFFF_FFFFL) {
            return io.op() + " of " + length + " bytes is longer than one NBD request can be";
        }
        if (io.op() != BackendIo.Op.READ && readOnly) {
            return "the export is read-only";
        }
        int min = info.minBlock();
        if (offset % min != 0 || length % min != 0) {
            return io.op() + " at " + offset + " of " + length + " bytes is not aligned to the server's minimum block"
                    + " size " + min;
        }
        if (offset < 0 || offset + length > info.size()) {
            return io.op() + " at " + offset + " of " + length + " bytes is beyond the export's " + info.size()
                    + " bytes";
        }
        return null;
    }

    /** The NBD command type of {@code op}: READ, WRITE, FLUSH, TRIM (DISCARD) or WRITE_ZEROES. */
    static int type(BackendIo.Op op) {
        return switch (op) {
            case READ -> Nbd.CMD_READ;
            case WRITE -> Nbd.CMD_WRITE;
            case FLUSH -> Nbd.CMD_FLUSH;
            case DISCARD -> Nbd.CMD_TRIM;
            default -> Nbd.CMD_WRITE_ZEROES;
        };
    }

    /**
     * The command flags: NO_HOLE on a WRITE_ZEROES the guest did not allow to deallocate (virtio-blk's UNMAP flag,
     * VIRTIO 1.2 5.2.6), FUA on a forced-unit-access write when the export offers it.
     */
    static int flags(BackendIo io, int type, ExportInfo info) {
        int flags = 0;
        if (type == Nbd.CMD_WRITE_ZEROES && !io.mayUnmap()) {
            flags |= Nbd.CMD_FLAG_NO_HOLE;
        }
        if (io.fua() && info.has(Nbd.FLAG_SEND_FUA) && (type == Nbd.CMD_WRITE || type == Nbd.CMD_WRITE_ZEROES)) {
            flags |= Nbd.CMD_FLAG_FUA;
        }
        return flags;
    }
}
