package io.kickplug.launcher;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * QEMU's {@code KEY=VALUE,...} syntax (util/keyval.c), as qemu-storage-daemon reads {@code --blockdev},
 * {@code --export}, {@code --object}, {@code --nbd-server} and {@code --monitor}:
 *
 * <pre>
 *   key-vals     = [ key-val { ',' key-val } [ ',' ] ]
 *   key-val      = key '=' val
 *   key          = key-fragment { '.' key-fragment }
 *   val          = { / [^,]* / | ',,' }
 * </pre>
 *
 * Dotted keys nest ({@code addr.type=unix} is {@code {"addr":{"type":"unix"}}}); an object whose keys are all
 * decimal indexes is a list ({@code a.0=x,a.1=y}); {@code ,,} is a comma in a value; the last of several values of
 * one key wins; with an implied key the first item may be a bare value ({@code iothread,id=x} is
 * {@code qom-type=iothread,id=x}). Every leaf is a string: the consumer coerces it to the type it expects. Error
 * messages are QEMU's.
 */
final class Keyval {

    /** The longest key fragment QEMU accepts (its buffer holds 128 bytes with the NUL). */
    static final int MAX_FRAGMENT = 127;

    /** A syntax error; the message is QEMU's wording. */
    static final class KeyvalException extends Exception {
        private static final long serialVersionUID = 1L;

        KeyvalException(String message) {
            super(message);
        }
    }

    private Keyval() {
    }

    /**
     * Parses {@code params}; {@code impliedKey} (or {@code null}) names the first item when it has no {@code =}.
     *
     * @return an ordered tree of {@code Map<String, Object>}, {@code List<Object>} and {@code String}
     */
    static Map<String, Object> parse(String params, String impliedKey) throws KeyvalException {
        Map<String, Object> root = new LinkedHashMap<>();
        int[] pos = {0};
        String implied = impliedKey;
        while (pos[0] < params.length()) {
            parseOne(root, params, pos, implied);
            implied = null;
        }
        Object listified = listify(root, "");
        @SuppressWarnings("unchecked")
        Map<String, Object> out = (Map<String, Object>) listified;
        return out;
    }

    private static void parseOne(Map<String, Object> root, String params, int[] pos, String impliedKey)
            throws KeyvalException {
        int start = pos[0];
        int len = 0;
        while (start + len < params.length() && params.charAt(start + len) != '='
                && params.charAt(start + len) != ',') {
            len++;
        }
        String key;
        boolean implied = false;
        if (impliedKey != null && len > 0 && (start + len == params.length() || params.charAt(start + len) != '=')) {
            key = impliedKey;
            implied = true;
        } else {
            key = params.substring(start, start + len);
        }
        // The key's fragments: a QAPI name, or (not first) a list index.
        Map<String, Object> cur = root;
        int s = 0;
        String inCur;
        while (true) {
            int flen = s != 0 ? indexLength(key, s) : -1;
            if (flen < 0) {
                flen = qapiNameLength(key, s);
            }
            if (flen == 0 || (s + flen < key.length() && key.charAt(s + flen) != '.')) {
                throw new KeyvalException("Invalid parameter '" + key + "'");
            }
            if (flen > MAX_FRAGMENT) {
                boolean fragment = s != 0 || s + flen != key.length();
                throw new KeyvalException("Parameter" + (fragment ? " fragment" : "") + " '"
                        + key.substring(s, s + flen) + "' is too long");
            }
            inCur = key.substring(s, s + flen);
            s += flen;
            if (s >= key.length()) {
                break;
            }
            // key.charAt(s) == '.': inCur names an object.
            Object next = cur.get(inCur);
            if (next == null) {
                next = new LinkedHashMap<String, Object>();
                cur.put(inCur, next);
            } else if (!(next instanceof Map)) {
                throw new KeyvalException("Parameters '" + key.substring(0, s) + ".*' used inconsistently");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> nested = (Map<String, Object>) next;
            cur = nested;
            s++;
            if (s == key.length()) {
                throw new KeyvalException("Invalid parameter '" + key + "'");
            }
        }
        int v;
        if (implied) {
            v = start;
        } else {
            v = start + len;
            if (v >= params.length() || params.charAt(v) != '=') {
                throw new KeyvalException("Expected '=' after parameter '" + key + "'");
            }
            v++;
        }
        StringBuilder value = new StringBuilder();
        while (v < params.length()) {
            char c = params.charAt(v);
            if (c == ',') {
                v++;
                if (v >= params.length() || params.charAt(v) != ',') {
                    break;
                }
            }
            value.append(params.charAt(v++));
        }
        Object old = cur.get(inCur);
        if (old instanceof Map) {
            throw new KeyvalException("Parameters '" + key + ".*' used inconsistently");
        }
        cur.put(inCur, value.toString());
        pos[0] = v;
    }

    /** The length of a list index at {@code s} (decimal digits), or -1 when there is none. */
    private static int indexLength(String key, int s) {
        int i = s;
        while (i < key.length() && key.charAt(i) >= '0' && key.charAt(i) <= '9') {
            i++;
        }
        return i == s ? -1 : i - s;
    }

    /**
     * The length of a QAPI name at {@code s} (qapi/qapi-util.c {@code parse_qapi_name}): an optional
     * {@code __RFQDN_} prefix, a letter, then letters, digits, {@code -} and {@code _}; 0 when there is none.
     */
    private static int qapiNameLength(String key, int s) {
        int i = s;
        if (key.startsWith("__", i)) {
            i += 2;
            int dot = i;
            while (i < key.length() && (Character.isLetterOrDigit(key.charAt(i)) && key.charAt(i) < 128
                    || key.charAt(i) == '-' || key.charAt(i) == '.')) {
                i++;
            }
            if (i == dot || i >= key.length() || key.charAt(i) != '_') {
                return 0;
            }
            i++;
        }
        if (i >= key.length() || !isAsciiLetter(key.charAt(i))) {
            return 0;
        }
        i++;
        while (i < key.length()) {
            char c = key.charAt(i);
            if (!(isAsciiLetter(c) || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
                break;
            }
            i++;
        }
        return i - s;
    }

    private static boolean isAsciiLetter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    /** Replaces objects whose keys are all indexes by lists, recursively (keyval.c {@code keyval_listify}). */
    private static Object listify(Map<String, Object> cur, String keyOfCur) throws KeyvalException {
        boolean hasIndex = false;
        boolean hasMember = false;
        for (Map.Entry<String, Object> e : cur.entrySet()) {
            if (indexLength(e.getKey(), 0) == e.getKey().length()) {
                hasIndex = true;
            } else {
                hasMember = true;
            }
            if (e.getValue() instanceof Map) {
                @SuppressWarnings("unchecked")
                Map<String, Object> child = (Map<String, Object>) e.getValue();
                e.setValue(listify(child, keyOfCur + e.getKey() + "."));
            }
        }
        if (hasIndex && hasMember) {
            throw new KeyvalException("Parameters '" + keyOfCur + "*' used inconsistently");
        }
        if (!hasIndex) {
            return cur;
        }
        Object[] elements = new Object[cur.size()];
        for (Map.Entry<String, Object> e : cur.entrySet()) {
            int index = index(e.getKey());
            if (index < elements.length) {
                elements[index] = e.getValue();
            }
        }
        List<Object> list = new ArrayList<>();
        for (int i = 0; i < elements.length; i++) {
            if (elements[i] == null) {
                throw new KeyvalException("Parameter '" + keyOfCur + i + "' missing");
            }
            list.add(elements[i]);
        }
        return list;
    }

    /** A list index, capped at {@link Integer#MAX_VALUE} as keyval.c's {@code key_to_index}. */
    private static int index(String digits) {
        try {
            return Integer.parseInt(digits);
        } catch (NumberFormatException e) {
            return Integer.MAX_VALUE;
        }
    }
}
