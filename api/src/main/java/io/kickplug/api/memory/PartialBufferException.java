package io.kickplug.api.memory;

/** The range starts inside guest memory but only {@code completed} of {@code expected} bytes are backed. */
public class PartialBufferException extends GuestMemoryException {
    private static final long serialVersionUID = 1L;
    private final long address;
    private final long expected;
    private final long completed;

    public PartialBufferException(long address, long expected, long completed) {
        super("partial buffer at 0x" + Long.toHexString(address) + ": expected " + Long.toUnsignedString(expected)
                + " bytes, only " + completed + " inside guest memory");
        this.address = address;
        this.expected = expected;
        this.completed = completed;
    }

    public long address() {
        return address;
    }

    public long expected() {
        return expected;
    }

    public long completed() {
        return completed;
    }
}
