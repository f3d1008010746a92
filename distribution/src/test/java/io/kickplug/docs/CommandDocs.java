package io.kickplug.docs;

import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a Gogo command declares about itself, read by reflection from its component class: the methods Gogo runtime
 * 1.1.6 calls for the function (same name, else {@code _main}), their {@code @Descriptor}s and {@code @Parameter}s,
 * and the option tables ({@code io.kickplug.api.command.OptionTable}) in a {@code public static final OPTIONS} field
 * of commands that parse their own options. The annotations and tables are read by name, so the class may come from
 * any class loader (the built bundle jars).
 */
final class CommandDocs {

    static final String DESCRIPTOR = "org.apache.felix.service.command.Descriptor";
    static final String PARAMETER = "org.apache.felix.service.command.Parameter";
    static final String SESSION = "org.apache.felix.service.command.CommandSession";
    /** {@code Parameter.UNSPECIFIED}: the presentValue of an option that takes a value. */
    static final String UNSPECIFIED = "org.apache.felix.service.command.unspecified.parameter";
    /** The method Gogo runtime's {@code Reflective} calls for any function name, with that name first. */
    static final String MAIN = "_main";

    /**
     * One option.
     *
     * @param value what its value looks like ({@code "value"} for a Gogo option, the table's form otherwise), or
     *     {@code null} for a flag
     */
    record Option(List<String> names, String value, String defaultValue, String description) {
        boolean flag() {
            return value == null;
        }
    }

    /** One operand: its synopsis ({@code NAME}, {@code NAME [SIZE]}, {@code [ARGS...]}) and description. */
    record Operand(String synopsis, String description) {
    }

    /** One way to call the command: a Java method of it, or one of its option tables. */
    record Form(String synopsis, String description, List<Option> options, List<Operand> operands) {
    }

    /**
     * One command.
     *
     * @param methods the Gogo methods, fewest parameters first
     * @param tables the forms its option tables declare (empty for a command whose options are all Gogo's)
     */
    record Command(String scope, String function, String bundle, String implementation, List<Form> methods,
            List<Form> tables) {

        String name() {
            return scope + ":" + function;
        }

        /** The first clause of the first method's description: for the list at the top of the page. */
        String summary() {
            String d = methods.isEmpty() ? "" : methods.get(0).description();
            int cut = d.length();
            for (String stop : new String[] {": ", "; ", " ("}) {
                int i = d.indexOf(stop);
                if (i >= 12 && i < cut) {
                    cut = i;
                }
            }
            return d.substring(0, cut);
        }
    }

    /**
     * An operand descriptor that starts with its synopsis: {@code "NAME [SIZE]: the disk name ..."},
     * {@code "on|off: ..."}. The synopsis starts with a word in capitals, a '[' or alternatives (a|b), and ends at
     * the first ": ".
     */
    private static final Pattern SYNOPSIS = Pattern.compile(
            "^((?:\\[|[A-Z][A-Z0-9_]*\\b|[a-z0-9-]+(?:\\|[a-z0-9-]+)+)[^:]*?): (.*)$", Pattern.DOTALL);

    private CommandDocs() {
    }

    /** The command {@code scope:function} that {@code type} implements, from bundle {@code bundle}. */
    static Command describe(String scope, String function, String bundle, Class<?> type) {
        List<Method> methods = gogoMethods(type, function);
        if (methods.isEmpty()) {
            throw new IllegalArgumentException(type.getName() + " has no method for " + scope + ":" + function
                    + " (Gogo calls a public method of that name, or _main)");
        }
        List<Form> forms = new ArrayList<>();
        for (Method m : methods) {
            forms.add(form(scope + ":" + function, m));
        }
        List<Form> tables = new ArrayList<>();
        for (Object table : optionTables(type)) {
            tables.add(tableForm(scope + ":" + function, table));
        }
        return new Command(scope, function, bundle, type.getName(), forms, tables);
    }

    /**
     * The public methods Gogo runtime 1.1.6 would call for {@code function}: those of that name (case-insensitive,
     * '_' before a Java keyword), else {@code _main}; not Object's. Fewest parameters first, then by signature.
     */
    static List<Method> gogoMethods(Class<?> type, String function) {
        String name = function.toLowerCase(Locale.ROOT);
        List<Method> named = new ArrayList<>();
        List<Method> main = new ArrayList<>();
        for (Method m : type.getMethods()) {
            if (m.getDeclaringClass() == Object.class || Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            String mname = m.getName().toLowerCase(Locale.ROOT);
            if (mname.equals(name) || mname.equals("_" + name)) {
                named.add(m);
            } else if (mname.equals(MAIN)) {
                main.add(m);
            }
        }
        List<Method> out = named.isEmpty() ? main : named;
        out.sort(Comparator.comparingInt(Method::getParameterCount).thenComparing(Method::toGenericString));
        return out;
    }

    private static Form form(String command, Method m) {
        boolean main = m.getName().equals(MAIN);
        List<Option> options = new ArrayList<>();
        List<Operand> operands = new ArrayList<>();
        Annotation[][] annotations = m.getParameterAnnotations();
        java.lang.reflect.Parameter[] params = m.getParameters();
        for (int i = 0; i < params.length; i++) {
            if (params[i].getType().getName().equals(SESSION)) {
                continue;
            }
            Annotation parameter = find(annotations[i], PARAMETER);
            String description = text(find(annotations[i], DESCRIPTOR));
            if (parameter != null) {
                String present = (String) value(parameter, "presentValue");
                options.add(new Option(List.of((String[]) value(parameter, "names")),
                        UNSPECIFIED.equals(present) ? "value" : null, (String) value(parameter, "absentValue"),
                        description));
                continue;
            }
            Matcher synopsis = SYNOPSIS.matcher(description);
            if (synopsis.matches()) {
                operands.add(new Operand(synopsis.group(1), synopsis.group(2)));
            } else if (!(main && params[i].isVarArgs())) {
                // _main's array holds the function name first; it documents operands only through a synopsis
                String n = metavariable(params[i].getName());
                operands.add(new Operand(params[i].isVarArgs() ? "[" + n + "...]" : n, description));
            }
        }
        options.sort(Comparator.comparing(o -> o.names().get(0)));
        StringBuilder synopsis = new StringBuilder(command);
        if (!options.isEmpty()) {
            synopsis.append(" [options]");
        }
        for (Operand o : operands) {
            synopsis.append(' ').append(o.synopsis());
        }
        return new Form(synopsis.toString(), text(find(m.getAnnotations(), DESCRIPTOR)), options, operands);
    }

    /** {@code nameAndSize} to {@code NAME_AND_SIZE}. */
    static String metavariable(String javaName) {
        return javaName.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toUpperCase(Locale.ROOT);
    }

    /** The option tables in {@code type}'s {@code public static final OPTIONS} (a table or a list of them). */
    static List<Object> optionTables(Class<?> type) {
        Field field;
        try {
            field = type.getField("OPTIONS");
        } catch (NoSuchFieldException e) {
            return List.of();
        }
        int mod = field.getModifiers();
        if (!Modifier.isStatic(mod) || !Modifier.isFinal(mod)) {
            return List.of();
        }
        Object value;
        try {
            value = field.get(null);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(type.getName() + ".OPTIONS: " + e.getMessage(), e);
        }
        List<Object> tables = value instanceof List<?> list ? new ArrayList<>(list) : List.of(value);
        for (Object t : tables) {
            if (!t.getClass().getName().equals("io.kickplug.api.command.OptionTable")) {
                throw new IllegalStateException(type.getName() + ".OPTIONS holds a " + t.getClass().getName()
                        + ", not an OptionTable");
            }
        }
        return tables;
    }

    private static Form tableForm(String command, Object table) {
        List<Option> options = new ArrayList<>();
        for (Object o : (List<?>) call(table, "options")) {
            @SuppressWarnings("unchecked")
            List<String> names = (List<String>) call(o, "names");
            options.add(new Option(names, (String) call(o, "value"), (String) call(o, "defaultValue"),
                    (String) call(o, "description")));
        }
        options.sort(Comparator.comparing(o -> o.names().get(0)));
        return new Form(command + " " + call(table, "usage"), (String) call(table, "description"), options,
                List.of());
    }

    private static Annotation find(Annotation[] annotations, String type) {
        return Arrays.stream(annotations).filter(a -> a.annotationType().getName().equals(type)).findFirst()
                .orElse(null);
    }

    /** A {@code @Descriptor}'s text, or "" without one. */
    private static String text(Annotation descriptor) {
        return descriptor == null ? "" : (String) value(descriptor, "value");
    }

    private static Object value(Annotation a, String element) {
        return call(a, element, a.annotationType());
    }

    private static Object call(Object target, String accessor) {
        return call(target, accessor, target.getClass());
    }

    private static Object call(Object target, String accessor, Class<?> type) {
        try {
            Method m = type.getMethod(accessor);
            m.setAccessible(true);
            return m.invoke(target);
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new IllegalStateException(type.getName() + "." + accessor + "(): " + e, e);
        } catch (InvocationTargetException e) {
            throw new IllegalStateException(type.getName() + "." + accessor + "(): " + e.getCause(), e.getCause());
        }
    }
}
