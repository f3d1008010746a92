package io.kickplug.nbd;

/**
 * What NBD_OPT_GO told about an export.
 *
 * @param size bytes
 * @param flags transmission flags ({@code NBD_FLAG_*})
 * @param minBlock minimum block size (1 when the server gave none)
 * @param preferredBlock preferred block size (4096 when none)
 * @param maxPayload largest READ/WRITE payload ({@link Nbd#DEFAULT_MAX_PAYLOAD} when none)
 * @param structured whether structured replies were negotiated
 */
public record ExportInfo(long size, int flags, int minBlock, int preferredBlock, int maxPayload, boolean structured) {

    boolean has(int flag) {
        return (flags & flag) != 0;
    }

    public boolean readOnly() {
        return has(Nbd.FLAG_READ_ONLY);
    }

    public boolean multiConn() {
        return has(Nbd.FLAG_CAN_MULTI_CONN);
    }
}
