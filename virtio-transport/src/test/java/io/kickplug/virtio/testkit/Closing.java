package io.kickplug.virtio.testkit;

/** Tear-down of what a test may or may not have made before it failed. */
public final class Closing {

    private Closing() {
    }

    /** Closes each resource in the order given, skipping nulls; the first failure is thrown after all were tried. */
    public static void inOrder(AutoCloseable... resources) throws Exception {
        Exception first = null;
        for (AutoCloseable r : resources) {
            if (r == null) {
                continue;
            }
            try {
                r.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
