package io.kickplug.api.virtio;

/**
 * A chain the device returned.
 *
 * @param token what the driver passed to {@link DriverQueue#add}
 * @param writtenBytes the used element's len
 */
public record UsedBuffer(Object token, int writtenBytes) {
}
