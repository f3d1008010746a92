package io.kickplug.vhost.protocol;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import org.newsclub.net.unix.FileDescriptorCast;

/** Small helpers for received file descriptors. */
public final class Fds {

    private Fds() {
    }

    /** Closes {@code fd} if it is valid; never throws. */
    public static void close(FileDescriptor fd) {
        if (fd == null || !fd.valid()) {
            return;
        }
        try {
            // A stream built on a FileDescriptor closes the descriptor when closed.
            new FileInputStream(fd).close();
        } catch (IOException e) {
            // nothing left to do with a descriptor that cannot be closed
        }
    }

    /** Closes every descriptor of the array. */
    public static void closeAll(FileDescriptor[] fds) {
        if (fds != null) {
            for (FileDescriptor fd : fds) {
                close(fd);
            }
        }
    }

    /** The descriptor's number, for /proc/self/fd paths and log lines. */
    public static int number(FileDescriptor fd) throws IOException {
        return FileDescriptorCast.using(fd).as(Integer.class);
    }
}
