package io.kickplug.api.blk;

/**
 * How to open a backend.
 *
 * @param kind "memory", "null" or "file"
 * @param path image file for "file", otherwise {@code null}
 * @param sizeBytes size for "memory" and "null" (for "file", 0 means the file's size)
 * @param readOnly open read-only
 * @param direct bypass the host page cache (O_DIRECT) where the backend supports it
 * @param readZeroes "null" only: reads fill the guest's buffers with zeroes (QEMU null-co's
 *     {@code read-zeroes}); off by default, as in QEMU, so a read moves no data at all
 * @param latencyNs "null" only: every request completes this many nanoseconds after it started (QEMU
 *     null-co's {@code latency-ns}); 0 by default
 */
public record BackendSpec(String kind, String path, long sizeBytes, boolean readOnly, boolean direct,
        boolean readZeroes, long latencyNs) {

    /** The largest {@link #latencyNs}: one second. */
    public static final long MAX_LATENCY_NS = 1_000_000_000L;

    public BackendSpec {
        if (latencyNs < 0 || latencyNs > MAX_LATENCY_NS) {
            throw new IllegalArgumentException("latency-ns " + latencyNs + " is out of range 0.." + MAX_LATENCY_NS);
        }
    }

    public BackendSpec(String kind, String path, long sizeBytes, boolean readOnly, boolean direct) {
        this(kind, path, sizeBytes, readOnly, direct, false, 0);
    }

    public BackendSpec(String kind, String path, long sizeBytes, boolean readOnly) {
        this(kind, path, sizeBytes, readOnly, false);
    }

    /** This spec with the null backend's options. */
    public BackendSpec withNullOptions(boolean readZeroes, long latencyNs) {
        return new BackendSpec(kind, path, sizeBytes, readOnly, direct, readZeroes, latencyNs);
    }
}
