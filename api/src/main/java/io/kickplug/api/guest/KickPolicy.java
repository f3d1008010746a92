package io.kickplug.api.guest;

import org.osgi.annotation.versioning.ConsumerType;
import org.osgi.annotation.versioning.ProviderType;

/**
 * How the simulated guest's virtio-blk driver notifies the device at the end of a submission round (Linux's
 * {@code bd->last} / {@code commit_rqs}). One DS service per policy, named by the service property
 * {@value #PROPERTY}; the guest picks the policy by that name.
 */
@ConsumerType
public interface KickPolicy {

    /** Service property naming the policy, e.g. "under-lock" or "outside-lock". */
    String PROPERTY = "kick.policy";

    /**
     * Called on the submitting vCPU thread with {@code queue}'s lock held, right after the last request of a
     * round was added. Must release the lock with {@link Queue#unlock()} exactly once, and must call
     * {@link Queue#notifyDevice()} when {@link Queue#kickPrepare()} (called with the lock held) returned true.
     */
    void kick(Queue queue);

    /** The virtqueue a policy kicks, as the driver lends it for one {@link #kick} call. */
    @ProviderType
    interface Queue {

        /** Virtqueue index. */
        int index();

        /**
         * Linux's {@code virtqueue_kick_prepare}: whether the device wants a notification for the chains
         * added since the last call (VIRTIO 1.2 section 2.7.10). Only with the lock held.
         */
        boolean kickPrepare();

        /** Linux's {@code virtqueue_notify}: the QueueNotify write, a VM exit that costs the exit latency. */
        void notifyDevice();

        /** Releases the queue's lock. */
        void unlock();
    }
}
