package io.kickplug.blk.device;

import io.kickplug.virtio.iothread.EventLoopThread;
import org.junit.jupiter.api.AfterEach;

/**
 * The set-up shared by tests of one {@link VirtioBlkDevice} on its own I/O thread, driven by a
 * {@link DirectRingDriver}: a test makes {@link #ioThread} and {@link #device}, and both are stopped after it
 * ({@link DirectRingDriver#stop}).
 */
abstract class DirectRingFixture {

    EventLoopThread ioThread;
    VirtioBlkDevice device;

    @AfterEach
    void stopDeviceAndIoThread() {
        DirectRingDriver.stop(device, ioThread);
    }
}
