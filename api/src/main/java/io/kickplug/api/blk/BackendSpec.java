package io.kickplug.api.blk;

/**
 * How to open a backend.
 *
 * @param kind "memory", "null" or "file"
 * @param path image file for "file", otherwise {@code null}
 * @param sizeBytes size for "memory" and "null" (for "file", 0 means the file's size)
 * @param readOnly open read-only
 */
public record BackendSpec(String kind, String path, long sizeBytes, boolean readOnly) {
}
