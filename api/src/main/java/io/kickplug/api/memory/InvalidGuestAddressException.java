package io.kickplug.api.memory;

/** The address lies in no memory region. */
public class InvalidGuestAddressException extends GuestMemoryException {
    private static final long serialVersionUID = 1L;
    private final long address;

    public InvalidGuestAddressException(long address) {
        super("invalid guest address 0x" + Long.toHexString(address));
        this.address = address;
    }

    public long address() {
        return address;
    }
}
