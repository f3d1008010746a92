package io.kickplug.api.guest;

/**
 * A write-then-read-verify pass.
 *
 * @param blockSize bytes per request, a multiple of 512
 * @param queueDepth requests in flight at once
 * @param totalBytes bytes to write (then read), from offset 0; 0 means the whole disk
 */
public record IoPassOptions(int blockSize, int queueDepth, long totalBytes) {

    public static IoPassOptions defaults() {
        return new IoPassOptions(4096, 32, 0);
    }
}
