package io.kickplug.blk.request;

import io.kickplug.api.blk.VirtioBlk;

/** What a request asks for, after dispatch of its raw type (VIRTIO 1.2 section 5.2.6). */
public enum RequestType {
    IN,
    OUT,
    FLUSH,
    GET_ID,
    /** Any type this device does not implement; answered with VIRTIO_BLK_S_UNSUPP. */
    UNSUPPORTED;

    /**
     * Dispatches a raw header type the way QEMU's virtio_blk_handle_request does: switch on
     * {@code type & ~VIRTIO_BLK_T_OUT}, so the OUT bit selects the direction of a read/write and the
     * legacy FLUSH_OUT (5) is a FLUSH. Everything else is unsupported.
     */
    public static RequestType dispatch(int type) {
        switch (type & ~VirtioBlk.T_OUT) {
            case VirtioBlk.T_IN:
                return (type & VirtioBlk.T_OUT) != 0 ? OUT : IN;
            case VirtioBlk.T_FLUSH:
                return FLUSH;
            case VirtioBlk.T_GET_ID:
                return GET_ID;
            default:
                return UNSUPPORTED;
        }
    }
}
