package io.kickplug.api.virtio;

import io.kickplug.api.iothread.DescriptorPoller;
import java.io.FileDescriptor;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * The driver's notification descriptors of a transport that has them (vhost-user's kick eventfds), handed to a
 * device that waits on them on its own I/O threads ({@link VirtioDevice#waitsOnKickDescriptors()}): one wake-up
 * per kick, no thread of the transport in between.
 *
 * @param fds per queue, indexed like {@link DeviceActivation#queues()}; {@code null} for a queue without one.
 *     The transport keeps owning them: it closes one only after the device was reset
 * @param poller how to wait on them
 * @param kicked told the queue index of every kick read, on the I/O thread (the transport's counters)
 */
public record KickDescriptors(List<FileDescriptor> fds, DescriptorPoller poller, IntConsumer kicked) {
}
