package io.kickplug.api.blk;

/**
 * How to open a backend.
 *
 * @param kind "memory", "null" or "file"
 * @param path image file for "file", otherwise {@code null}
 * @param sizeBytes size for "memory" and "null" (for "file", 0 means the file's size)
 * @param readOnly open read-only
 * @param direct bypass the host page cache (O_DIRECT) where the backend supports it
 */
public record BackendSpec(String kind, String path, long sizeBytes, boolean readOnly, boolean direct) {

    public BackendSpec(String kind, String path, long sizeBytes, boolean readOnly) {
        this(kind, path, sizeBytes, readOnly, false);
    }
}
