package io.kickplug.api.blk;

import java.util.ArrayList;
import java.util.List;

/**
 * A Ceph RBD image and how to reach its cluster, named as QEMU's rbd driver names them ({@code pool},
 * {@code namespace}, {@code image}, {@code snapshot}, {@code conf}, {@code user}) plus a {@code keyring} file. An rbd
 * disk keeps it in its {@link BackendSpec#path()} in QEMU's legacy filename syntax ({@link #toPath()}):
 * {@code rbd:pool[/namespace]/image[@snapshot][:conf=PATH][:id=USER][:keyring=PATH]}, with '\' escaping ':', '@',
 * '/' and '\' inside a name, ':' and '\' inside an option's value.
 *
 * @param pool the pool (required)
 * @param namespace the RADOS namespace in the pool, or {@code null} for the default one
 * @param image the image (required)
 * @param snapshot a snapshot of the image to open read-only, or {@code null} for the image itself
 * @param conf the ceph.conf to read, or {@code null} for librados's default search (CEPH_CONF, /etc/ceph/ceph.conf)
 * @param user the client id without "client." ({@code admin} when {@code null})
 * @param keyring the keyring file, or {@code null} for the conf's
 */
public record RbdImage(String pool, String namespace, String image, String snapshot, String conf, String user,
        String keyring) {

    /** The backend kind of an rbd disk. */
    public static final String KIND = "rbd";
    private static final String PREFIX = "rbd:";

    public RbdImage {
        pool = required("pool", pool);
        image = required("image", image);
        namespace = optional(namespace);
        snapshot = optional(snapshot);
        conf = optional(conf);
        user = optional(user);
        keyring = optional(keyring);
        for (String v : new String[] {pool, namespace, image, snapshot, conf, user, keyring}) {
            if (v != null && v.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("an rbd name or path holds a NUL character");
            }
        }
    }

    private static String required(String what, String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("an rbd disk needs " + (what.equals("image") ? "an " : "a ") + what);
        }
        return value.trim();
    }

    private static String optional(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** The cluster connection this image is reached by: the same for images of one cluster and client. */
    public String clusterKey() {
        return (conf == null ? "" : conf) + "\0" + (user == null ? "" : user) + "\0" + (keyring == null ? "" : keyring);
    }

    /** "pool/namespace/image@snapshot" as the rbd CLI writes it. */
    public String displayName() {
        return pool + "/" + (namespace == null ? "" : namespace + "/") + image
                + (snapshot == null ? "" : "@" + snapshot);
    }

    /** QEMU's legacy rbd filename: {@code rbd:pool[/namespace]/image[@snapshot][:conf=..][:id=..][:keyring=..]}. */
    public String toPath() {
        StringBuilder s = new StringBuilder(PREFIX).append(escape(pool)).append('/');
        if (namespace != null) {
            s.append(escape(namespace)).append('/');
        }
        s.append(escape(image));
        if (snapshot != null) {
            s.append('@').append(escape(snapshot));
        }
        if (conf != null) {
            s.append(":conf=").append(escapeOption(conf));
        }
        if (user != null) {
            s.append(":id=").append(escapeOption(user));
        }
        if (keyring != null) {
            s.append(":keyring=").append(escapeOption(keyring));
        }
        return s.toString();
    }

    /**
     * Parses {@link #toPath()}'s syntax (QEMU's legacy rbd filename; the options conf, id and keyring only).
     *
     * @throws IllegalArgumentException naming what is wrong
     */
    public static RbdImage parse(String path) {
        if (path == null || !path.startsWith(PREFIX)) {
            throw new IllegalArgumentException("'" + path + "' is not an rbd name (rbd:pool/image[@snapshot][:conf=PATH]"
                    + "[:id=USER][:keyring=PATH])");
        }
        List<String> fields = split(path.substring(PREFIX.length()), ':');
        List<String> names = split(fields.get(0), '/');
        String pool;
        String namespace = null;
        String rest;
        if (names.size() == 2) {
            pool = names.get(0);
            rest = names.get(1);
        } else if (names.size() == 3) {
            pool = names.get(0);
            namespace = unescape(names.get(1));
            rest = names.get(2);
        } else {
            throw new IllegalArgumentException("'" + path + "': expected pool/image or pool/namespace/image");
        }
        List<String> imageSnap = split(rest, '@');
        if (imageSnap.size() > 2) {
            throw new IllegalArgumentException("'" + path + "': more than one '@'");
        }
        String conf = null;
        String user = null;
        String keyring = null;
        for (String field : fields.subList(1, fields.size())) {
            int eq = field.indexOf('=');
            String key = eq < 0 ? field : field.substring(0, eq);
            String value = eq < 0 ? "" : unescape(field.substring(eq + 1));
            switch (key) {
                case "conf" -> conf = value;
                case "id" -> user = value;
                case "keyring" -> keyring = value;
                default -> throw new IllegalArgumentException("'" + path + "': unknown rbd option '" + key
                        + "' (expected conf, id or keyring)");
            }
        }
        return new RbdImage(unescape(pool), namespace, unescape(imageSnap.get(0)),
                imageSnap.size() == 2 ? unescape(imageSnap.get(1)) : null, conf, user, keyring);
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == ':' || c == '@' || c == '/' || c == '\\') {
                b.append('\\');
            }
            b.append(c);
        }
        return b.toString();
    }

    /** An option's value: only ':' and '\\' are special there. */
    private static String escapeOption(String s) {
        return s.replace("\\", "\\\\").replace(":", "\\:");
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                c = s.charAt(++i);
            }
            b.append(c);
        }
        return b.toString();
    }

    /** Splits at unescaped {@code sep}, keeping the escapes. */
    private static List<String> split(String s, char sep) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                cur.append(c).append(s.charAt(++i));
            } else if (c == sep) {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }
}
