package io.kickplug.qmp;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A small part of QEMU's QAPI type system, enough to check a command's arguments as QEMU's input visitor does
 * (qapi/qobject-input-visitor.c) and to give its error texts: "Parameter 'x' is missing", "Invalid parameter type
 * for 'x', expected: integer", "Parameter 'x' is unexpected", "Parameter 'x' does not accept value 'y'". In
 * keyval mode (the command line's key=value syntax, where every scalar is a string) scalars are converted by
 * their type, as QEMU's keyval visitor does: integers (base 0: decimal, 0x hex), sizes with suffixes, on/off.
 */
public final class Schema {

    private Schema() {
    }

    /** A QAPI type. */
    public sealed interface Type permits Scalar, Enum, Struct, Union, Alternate, ListOf {
    }

    /** The built-in scalars. */
    public enum Scalar implements Type {
        STR, INT, UINT64, UINT32, UINT16, SIZE, BOOL, NUMBER, ANY
    }

    /** An enumeration: a string from a fixed set. */
    public record Enum(List<String> values) implements Type {
        public static Enum of(String... values) {
            return new Enum(List.of(values));
        }
    }

    /** A member of a struct; optional ones may be absent. */
    public record Field(String name, Type type, boolean optional) {
    }

    /** A struct: members in order (QEMU visits them in order; the first error is reported). */
    public record Struct(List<Field> fields) implements Type {
        public static Struct of(Field... fields) {
            return new Struct(List.of(fields));
        }

        public Struct plus(Field... more) {
            List<Field> all = new ArrayList<>(fields);
            all.addAll(Arrays.asList(more));
            return new Struct(all);
        }
    }

    /** A flat union: the base's members (the discriminator among them, an {@link Enum}), then the variant's. */
    public record Union(Struct base, String discriminator, Map<String, Struct> variants) implements Type {
    }

    /** An alternate of a string (a reference) and an object (a definition), as QAPI's BlockdevRef. */
    public record Alternate(Type object) implements Type {
    }

    public record ListOf(Type element) implements Type {
    }

    public static Field req(String name, Type type) {
        return new Field(name, type, false);
    }

    public static Field opt(String name, Type type) {
        return new Field(name, type, true);
    }

    /**
     * Checks {@code value} against {@code type} and returns it with keyval strings converted (a fresh copy;
     * maps keep the input's order).
     *
     * @param name the member's name in QEMU's full-name form ("addr.path"), or null at the root
     * @throws QmpError a GenericError with QEMU's text for the first problem found
     */
    public static Object check(Type type, Object value, String name, boolean keyval) {
        if (type instanceof Scalar s) {
            return scalar(s, value, name, keyval);
        }
        if (type instanceof Enum e) {
            if (!(value instanceof String str)) {
                throw invalidType(name, "string");
            }
            if (!e.values().contains(str)) {
                throw QmpError.generic("Parameter '" + name + "' does not accept value '" + str + "'");
            }
            return str;
        }
        if (type instanceof Struct s) {
            Map<String, Object> in = asObject(value, name);
            Map<String, Object> out = new LinkedHashMap<>();
            members(s, in, name, keyval, out);
            unexpected(in, out.keySet(), name);
            return out;
        }
        if (type instanceof Union u) {
            Map<String, Object> in = asObject(value, name);
            Map<String, Object> out = new LinkedHashMap<>();
            members(u.base(), in, name, keyval, out);
            Struct variant = u.variants().get((String) out.get(u.discriminator()));
            if (variant == null) {
                // A value QEMU knows (the enum lists QEMU's) that Kickplug does not serve.
                throw QmpError.generic("Kickplug does not support " + u.discriminator() + " '"
                        + out.get(u.discriminator()) + "'");
            }
            members(variant, in, name, keyval, out);
            unexpected(in, out.keySet(), name);
            return out;
        }
        if (type instanceof Alternate a) {
            if (value instanceof String) {
                return value;
            }
            if (value instanceof Map) {
                return check(a.object(), value, name, keyval);
            }
            throw QmpError.generic("Invalid parameter type for '" + name + "', expected: string or object");
        }
        ListOf l = (ListOf) type;
        if (!(value instanceof List<?> list)) {
            throw invalidType(name, "array");
        }
        List<Object> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            out.add(check(l.element(), list.get(i), name + (keyval ? "." + i : "[" + i + "]"), keyval));
        }
        return out;
    }

    private static void members(Struct s, Map<String, Object> in, String parent, boolean keyval,
            Map<String, Object> out) {
        for (Field f : s.fields()) {
            String full = parent == null ? f.name() : parent + "." + f.name();
            if (!in.containsKey(f.name())) {
                if (!f.optional()) {
                    throw QmpError.generic("Parameter '" + full + "' is missing");
                }
                continue;
            }
            out.put(f.name(), check(f.type(), in.get(f.name()), full, keyval));
        }
    }

    private static void unexpected(Map<String, Object> in, Set<String> known, String parent) {
        Set<String> extra = new LinkedHashSet<>(in.keySet());
        extra.removeAll(known);
        if (!extra.isEmpty()) {
            String key = extra.iterator().next();
            throw QmpError.generic("Parameter '" + (parent == null ? key : parent + "." + key) + "' is unexpected");
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asObject(Object value, String name) {
        if (!(value instanceof Map)) {
            throw invalidType(name == null ? "<anonymous>" : name, "object");
        }
        return (Map<String, Object>) value;
    }

    private static QmpError invalidType(String name, String expected) {
        return QmpError.generic("Invalid parameter type for '" + name + "', expected: " + expected);
    }

    private static QmpError expects(String name, String what) {
        return QmpError.generic("Parameter '" + name + "' expects " + what);
    }

    private static Object scalar(Scalar s, Object value, String name, boolean keyval) {
        if (keyval && value instanceof String str && s != Scalar.STR && s != Scalar.ANY) {
            return fromKeyval(s, str, name);
        }
        if (keyval && (value instanceof Map || value instanceof List) && s != Scalar.ANY) {
            throw QmpError.generic("Parameters '" + name + ".*' are unexpected");
        }
        switch (s) {
            case STR:
                if (!(value instanceof String)) {
                    throw invalidType(name, "string");
                }
                return value;
            case INT:
                if (!(value instanceof Long)) {
                    throw invalidType(name, "integer");
                }
                return value;
            case UINT64:
            case SIZE:
                // QEMU accepts negative values for uint64 "for backward compatibility"; Kickplug does not.
                if (!(value instanceof Long l) || l < 0) {
                    throw expects(name, "uint64");
                }
                return value;
            case UINT32:
                return bounded(value, name, 0xFFFF_FFFFL, "uint32");
            case UINT16:
                return bounded(value, name, 0xFFFFL, "uint16");
            case BOOL:
                if (!(value instanceof Boolean)) {
                    throw invalidType(name, "boolean");
                }
                return value;
            case NUMBER:
                if (!(value instanceof Number n)) {
                    throw invalidType(name, "number");
                }
                return n.doubleValue();
            default:
                return value;
        }
    }

    private static Object bounded(Object value, String name, long max, String what) {
        if (!(value instanceof Long l) || l < 0 || l > max) {
            throw expects(name, what);
        }
        return value;
    }

    private static Object fromKeyval(Scalar s, String str, String name) {
        switch (s) {
            case INT:
            case UINT64:
            case UINT32:
            case UINT16: {
                Long v = parseInteger(str);
                if (v == null || (s != Scalar.INT && v < 0)) {
                    throw expects(name, "integer");
                }
                return scalar(s, v, name, false);
            }
            case SIZE: {
                Long v = parseSize(str);
                if (v == null) {
                    throw expects(name, "size");
                }
                return v;
            }
            case BOOL:
                switch (str.toLowerCase(Locale.ROOT)) {
                    case "on", "true", "yes" -> {
                        return Boolean.TRUE;
                    }
                    case "off", "false", "no" -> {
                        return Boolean.FALSE;
                    }
                    default -> throw expects(name, "'on' or 'off'");
                }
            case NUMBER:
                try {
                    double d = Double.parseDouble(str);
                    if (Double.isFinite(d)) {
                        return d;
                    }
                } catch (NumberFormatException e) {
                    // below
                }
                throw invalidType(name, "number");
            default:
                return str;
        }
    }

    /** An integer as QEMU's qemu_strtoi64 with base 0 reads it: decimal, 0x hex or 0 octal, optional sign. */
    static Long parseInteger(String text) {
        String t = text.trim();
        if (t.isEmpty() || !t.equals(text)) {
            return null;
        }
        boolean negative = t.startsWith("-");
        String body = negative || t.startsWith("+") ? t.substring(1) : t;
        int radix = 10;
        if (body.startsWith("0x") || body.startsWith("0X")) {
            radix = 16;
            body = body.substring(2);
        } else if (body.length() > 1 && body.startsWith("0")) {
            radix = 8;
            body = body.substring(1);
        }
        if (body.isEmpty() || body.startsWith("-") || body.startsWith("+")) {
            return null;
        }
        try {
            return Long.parseLong((negative ? "-" : "") + body, radix);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * A size as QEMU's qemu_strtosz reads it: a number (a decimal fraction allowed with a suffix) and an optional
     * suffix B, K, M, G, T, P or E (powers of 1024, either case); null when malformed or beyond 2^63 - 1.
     */
    static Long parseSize(String text) {
        String t = text;
        if (t.isEmpty()) {
            return null;
        }
        char last = Character.toUpperCase(t.charAt(t.length() - 1));
        int shift = switch (last) {
            case 'B' -> 0;
            case 'K' -> 10;
            case 'M' -> 20;
            case 'G' -> 30;
            case 'T' -> 40;
            case 'P' -> 50;
            case 'E' -> 60;
            default -> -1;
        };
        String number = shift < 0 ? t : t.substring(0, t.length() - 1);
        if (shift < 0) {
            shift = 0;
        }
        if (number.isEmpty() || !number.matches("[0-9]+(\\.[0-9]+)?|0[xX][0-9a-fA-F]+")) {
            return null;
        }
        if (number.startsWith("0x") || number.startsWith("0X")) {
            if (shift != 0 || last == 'B') {
                return null; // QEMU refuses hex with a suffix
            }
            try {
                return Long.parseLong(number.substring(2), 16);
            } catch (NumberFormatException e) {
                return null;
            }
        }
        if (number.contains(".")) {
            if (shift == 0) {
                return null; // a fraction needs a suffix
            }
            double v = Double.parseDouble(number) * Math.pow(2, shift);
            if (v >= 0x1p63) {
                return null;
            }
            return (long) v;
        }
        try {
            long v = Long.parseLong(number);
            if (v > (Long.MAX_VALUE >> shift)) {
                return null;
            }
            return v << shift;
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
