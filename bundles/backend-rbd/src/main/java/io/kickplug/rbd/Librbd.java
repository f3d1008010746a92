package io.kickplug.rbd;

import com.sun.jna.Callback;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The calls of librados and librbd's C API (Ceph's {@code rados/librados.h} and {@code rbd/librbd.h}) the backend
 * uses, bound by JNA direct mapping. Every int-returning call answers 0 or a negative errno. Buffers are passed as
 * native addresses ({@code long}), so the guest's direct buffers go to librbd without a copy.
 */
final class Librbd {

    /** librbd's completion callback, {@code rbd_callback_t}: {@code void (*)(rbd_completion_t cb, void *arg)}. */
    interface CompletionCallback extends Callback {
        void invoke(Pointer completion, Pointer arg);
    }

    /** librbd's image-update callback, {@code rbd_update_callback_t}: {@code void (*)(void *arg)}. */
    interface UpdateCallback extends Callback {
        void invoke(Pointer arg);
    }

    private static final String LOAD_ERROR;

    static {
        String error = null;
        try {
            // Debian's librbd1 and librados2 install only the versioned names (the .so links come with -dev).
            Native.register(Rados.class, NativeLibrary.getInstance(library("rados", "librados.so.2")));
            Native.register(Librbd.class, NativeLibrary.getInstance(library("rbd", "librbd.so.1")));
        } catch (UnsatisfiedLinkError | NoClassDefFoundError e) {
            error = e.getMessage();
        }
        LOAD_ERROR = error;
    }

    private static String library(String name, String versioned) {
        try {
            NativeLibrary.getInstance(name).dispose();
            return name;
        } catch (UnsatisfiedLinkError e) {
            return versioned;
        }
    }

    private Librbd() {
    }

    /** Null when librados and librbd are loaded, else why not (the packages librados2 and librbd1 are missing). */
    static String loadError() {
        return LOAD_ERROR;
    }

    /** librados: the cluster handle and pool contexts. */
    static final class Rados {
        private Rados() {
        }

        static native int rados_create2(PointerByReference cluster, String clusterName, String name, long flags);

        static native int rados_conf_read_file(Pointer cluster, String path);

        static native int rados_conf_set(Pointer cluster, String option, String value);

        static native int rados_connect(Pointer cluster);

        static native void rados_shutdown(Pointer cluster);

        static native int rados_ioctx_create(Pointer cluster, String pool, PointerByReference ioctx);

        static native void rados_ioctx_set_namespace(Pointer ioctx, String namespace);

        static native void rados_ioctx_destroy(Pointer ioctx);
    }

    static native int rbd_open(Pointer ioctx, String name, PointerByReference image, String snapName);

    static native int rbd_open_read_only(Pointer ioctx, String name, PointerByReference image, String snapName);

    static native int rbd_close(Pointer image);

    static native int rbd_get_size(Pointer image, LongByReference size);

    static native int rbd_resize(Pointer image, long size);

    static native int rbd_update_watch(Pointer image, LongByReference handle, UpdateCallback callback, Pointer arg);

    static native int rbd_update_unwatch(Pointer image, long handle);

    static native int rbd_aio_create_completion(Pointer arg, CompletionCallback callback,
            PointerByReference completion);

    static native long rbd_aio_get_return_value(Pointer completion);

    static native void rbd_aio_release(Pointer completion);

    static native int rbd_aio_read(Pointer image, long offset, long length, long buffer, Pointer completion);

    static native int rbd_aio_write(Pointer image, long offset, long length, long buffer, Pointer completion);

    static native int rbd_aio_readv(Pointer image, long iov, int iovcnt, long offset, Pointer completion);

    static native int rbd_aio_writev(Pointer image, long iov, int iovcnt, long offset, Pointer completion);

    static native int rbd_aio_flush(Pointer image, Pointer completion);

    static native int rbd_aio_discard(Pointer image, long offset, long length, Pointer completion);

    /** {@code rbd_aio_write_zeroes}, in librbd since Ceph 15 (Octopus); bound on its own, as it may be missing. */
    static final class WriteZeroes {
        /** RBD_WRITE_ZEROES_FLAG_THICK_PROVISION: the zeroed extent stays allocated. */
        static final int THICK_PROVISION = 1;
        private static final boolean AVAILABLE;

        static {
            boolean ok = false;
            if (LOAD_ERROR == null) {
                try {
                    Native.register(WriteZeroes.class, NativeLibrary.getInstance(library("rbd", "librbd.so.1")));
                    ok = true;
                } catch (UnsatisfiedLinkError e) {
                    ok = false;
                }
            }
            AVAILABLE = ok;
        }

        private WriteZeroes() {
        }

        static boolean available() {
            return AVAILABLE;
        }

        static native int rbd_aio_write_zeroes(Pointer image, long offset, long length, Pointer completion,
                int zeroFlags, int opFlags);
    }
}
