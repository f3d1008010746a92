package io.kickplug.guest.kick;

import io.kickplug.api.guest.KickPolicy;
import org.osgi.service.component.annotations.Component;

/**
 * The virtio_blk driver before Linux commit e8edca6f7f92 (2014, seed 000): {@code virtqueue_kick()} with the
 * vq lock held, so the notify's VM exit is paid inside the critical section and blocks every other vCPU
 * that wants the queue.
 */
@Component(service = KickPolicy.class, property = KickPolicy.PROPERTY + "=" + UnderLockKick.NAME)
public final class UnderLockKick implements KickPolicy {

    public static final String NAME = "under-lock";

    @Override
    public void kick(Queue queue) {
        try {
            if (queue.kickPrepare()) {
                queue.notifyDevice();
            }
        } finally {
            queue.unlock();
        }
    }
}
