package io.kickplug.rbd;

import java.io.IOException;

/**
 * Runs a librados or librbd call on a thread of its own with a large stack. Loading libceph-common and making the
 * first cluster handle build Ceph's table of configuration options on the calling thread's stack, which overflows a
 * small Java thread stack: {@code kickplugd} runs with {@code -Xss512k}, and the JVM died in {@code Option::Option}
 * (SIGSEGV, "irrecoverable stack overflow") when a QMP {@code blockdev-add} opened the first image on such a thread.
 */
final class BigStack {

    /** The stack of the thread the calls run on: more than any Ceph thread needs (their default is 8 MiB). */
    static final long STACK_BYTES = 16L << 20;

    /** A call that may fail with an IOException. */
    interface Call<T> {
        T run() throws IOException;
    }

    private BigStack() {
    }

    /** Runs {@code call} on a new thread with a {@link #STACK_BYTES} stack and waits for it. */
    static <T> T run(String what, Call<T> call) throws IOException {
        Object[] result = new Object[1];
        Throwable[] failure = new Throwable[1];
        Thread t = new Thread(null, () -> {
            try {
                result[0] = call.run();
            } catch (Throwable e) { // handed to the caller, rethrown there
                failure[0] = e;
            }
        }, "kickplug-rbd-" + what, STACK_BYTES);
        t.setDaemon(true);
        t.start();
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // the call runs on; its result (an open image) must not be lost
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        Throwable e = failure[0];
        if (e instanceof IOException io) {
            throw io;
        }
        if (e instanceof RuntimeException r) {
            throw r;
        }
        if (e instanceof Error err) {
            throw err;
        }
        if (e != null) {
            throw new IOException(e);
        }
        @SuppressWarnings("unchecked")
        T out = (T) result[0];
        return out;
    }
}
