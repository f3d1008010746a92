package io.kickplug.api.virtio;

/**
 * The driver broke a rule of the VIRTIO specification in what it put in guest memory or registers.
 * The device stops using the affected queue and latches DEVICE_NEEDS_RESET (section 2.1.2).
 */
public class GuestFaultException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String section;

    /**
     * @param section the VIRTIO 1.2 section whose rule was broken, for example "2.7.5.3.1"
     * @param message what the guest did
     */
    public GuestFaultException(String section, String message) {
        super(message + " (VIRTIO 1.2 section " + section + ")");
        this.section = section;
    }

    public GuestFaultException(String section, String message, Throwable cause) {
        super(message + " (VIRTIO 1.2 section " + section + ")", cause);
        this.section = section;
    }

    public String section() {
        return section;
    }
}
