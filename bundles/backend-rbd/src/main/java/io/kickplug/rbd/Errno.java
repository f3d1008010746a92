package io.kickplug.rbd;

import java.util.Map;

/** Names of the Linux errno values librados and librbd return (negated), for log lines and error messages. */
final class Errno {

    private static final Map<Integer, String> NAMES = Map.ofEntries(Map.entry(1, "EPERM"), Map.entry(2, "ENOENT"),
            Map.entry(5, "EIO"), Map.entry(11, "EAGAIN"), Map.entry(12, "ENOMEM"), Map.entry(13, "EACCES"),
            Map.entry(16, "EBUSY"), Map.entry(17, "EEXIST"), Map.entry(22, "EINVAL"), Map.entry(27, "EFBIG"),
            Map.entry(28, "ENOSPC"), Map.entry(30, "EROFS"), Map.entry(34, "ERANGE"), Map.entry(38, "ENOSYS"),
            Map.entry(95, "EOPNOTSUPP"), Map.entry(103, "ECONNABORTED"), Map.entry(104, "ECONNRESET"),
            Map.entry(107, "ENOTCONN"), Map.entry(108, "ESHUTDOWN"), Map.entry(110, "ETIMEDOUT"),
            Map.entry(111, "ECONNREFUSED"), Map.entry(122, "EDQUOT"), Map.entry(125, "ECANCELED"));

    private Errno() {
    }

    /** "-2 (ENOENT)" for a return value of -2. */
    static String describe(long ret) {
        String name = NAMES.get((int) -ret);
        return ret + (name == null ? "" : " (" + name + ")");
    }
}
