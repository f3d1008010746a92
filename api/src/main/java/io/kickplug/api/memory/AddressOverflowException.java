package io.kickplug.api.memory;

/** {@code address + length} passes 2^64. */
public class AddressOverflowException extends GuestMemoryException {
    private static final long serialVersionUID = 1L;

    public AddressOverflowException(long address, long length) {
        super("guest address overflow: 0x" + Long.toHexString(address) + " + 0x" + Long.toHexString(length)
                + " passes 2^64");
    }
}
