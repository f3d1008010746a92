package io.kickplug.guest.engine;

import io.kickplug.api.blk.VirtioBlk;

/** What a guest job asks of the disk; each maps to a virtio-blk request type (VIRTIO 1.2 section 5.2.6). */
public enum IoOp {
    READ(VirtioBlk.T_IN),
    WRITE(VirtioBlk.T_OUT),
    FLUSH(VirtioBlk.T_FLUSH);

    private final int requestType;

    IoOp(int requestType) {
        this.requestType = requestType;
    }

    /** The virtio-blk request type (VIRTIO_BLK_T_IN, _OUT, _FLUSH). */
    public int requestType() {
        return requestType;
    }
}
