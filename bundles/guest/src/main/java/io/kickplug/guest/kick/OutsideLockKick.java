package io.kickplug.guest.kick;

import io.kickplug.api.guest.KickPolicy;
import org.osgi.service.component.annotations.Component;

/**
 * Seed 000 ("virtio_blk: dont hold spin lock during world switch"): {@code virtqueue_kick_prepare()} under
 * the vq lock, {@code virtqueue_notify()} after {@code spin_unlock_irqrestore}, so the exit no longer
 * blocks other vCPUs.
 */
@Component(service = KickPolicy.class, property = KickPolicy.PROPERTY + "=" + OutsideLockKick.NAME)
public final class OutsideLockKick implements KickPolicy {

    public static final String NAME = "outside-lock";

    @Override
    public void kick(Queue queue) {
        boolean notify;
        try {
            notify = queue.kickPrepare();
        } finally {
            queue.unlock();
        }
        if (notify) {
            queue.notifyDevice();
        }
    }
}
