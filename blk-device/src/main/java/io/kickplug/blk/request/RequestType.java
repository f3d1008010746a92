package io.kickplug.blk.request;

import io.kickplug.api.blk.VirtioBlk;

/** What a request asks for, after dispatch of its raw type (VIRTIO 1.2 section 5.2.6). */
public enum RequestType {
    IN,
    OUT,
    FLUSH,
    GET_ID,
    /** VIRTIO_BLK_T_GET_LIFETIME (10), with VIRTIO_BLK_F_LIFETIME. */
    GET_LIFETIME,
    /** VIRTIO_BLK_T_DISCARD (11), with VIRTIO_BLK_F_DISCARD. */
    DISCARD,
    /** VIRTIO_BLK_T_WRITE_ZEROES (13), with VIRTIO_BLK_F_WRITE_ZEROES. */
    WRITE_ZEROES,
    /** VIRTIO_BLK_T_SECURE_ERASE (14), with VIRTIO_BLK_F_SECURE_ERASE. */
    SECURE_ERASE,
    /** Any type this device does not implement; answered with VIRTIO_BLK_S_UNSUPP. */
    UNSUPPORTED;

    /**
     * Dispatches a raw header type. The types of VIRTIO 1.1 and later (GET_LIFETIME 10, DISCARD 11,
     * WRITE_ZEROES 13, SECURE_ERASE 14) match exactly: masking the OUT bit would confuse DISCARD with
     * GET_LIFETIME. Every other type is dispatched the way QEMU's virtio_blk_handle_request does, on
     * {@code type & ~VIRTIO_BLK_T_OUT}, so the OUT bit selects the direction of a read/write, the legacy
     * FLUSH_OUT (5) is a FLUSH and 9 is a GET_ID. Everything else is unsupported.
     */
    public static RequestType dispatch(int type) {
        switch (type) {
            case VirtioBlk.T_GET_LIFETIME:
                return GET_LIFETIME;
            case VirtioBlk.T_DISCARD:
                return DISCARD;
            case VirtioBlk.T_WRITE_ZEROES:
                return WRITE_ZEROES;
            case VirtioBlk.T_SECURE_ERASE:
                return SECURE_ERASE;
            default:
                break;
        }
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

    /** The feature bit that must be negotiated for this type, or 0 when the type needs none. */
    public long requiredFeature() {
        switch (this) {
            case GET_LIFETIME:
                return VirtioBlk.F_LIFETIME;
            case DISCARD:
                return VirtioBlk.F_DISCARD;
            case WRITE_ZEROES:
                return VirtioBlk.F_WRITE_ZEROES;
            case SECURE_ERASE:
                return VirtioBlk.F_SECURE_ERASE;
            default:
                return 0;
        }
    }

    /** Whether the request changes the disk's content. */
    public boolean writes() {
        return this == OUT || this == DISCARD || this == WRITE_ZEROES || this == SECURE_ERASE;
    }
}
