package io.kickplug.blk.request;

import io.kickplug.api.blk.VirtioBlk;

/** How a request ended, and the status byte that tells the driver (VIRTIO 1.2 section 5.2.6). */
public enum Outcome {
    OK(VirtioBlk.S_OK),
    IOERR(VirtioBlk.S_IOERR),
    UNSUPP(VirtioBlk.S_UNSUPP);

    private final int status;

    Outcome(int status) {
        this.status = status;
    }

    /** The value of the request's status byte. */
    public int status() {
        return status;
    }
}
