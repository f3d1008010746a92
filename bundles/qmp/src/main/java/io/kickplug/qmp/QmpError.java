package io.kickplug.qmp;

import java.util.LinkedHashMap;
import java.util.Map;

/** A QMP error reply: its class ({@code GenericError}, {@code CommandNotFound}) and description. */
public final class QmpError extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public static final String GENERIC = "GenericError";
    public static final String COMMAND_NOT_FOUND = "CommandNotFound";

    private final String errorClass;

    public QmpError(String errorClass, String desc) {
        super(desc);
        this.errorClass = errorClass;
    }

    /** A GenericError. */
    public static QmpError generic(String desc) {
        return new QmpError(GENERIC, desc);
    }

    public String errorClass() {
        return errorClass;
    }

    public String desc() {
        return getMessage();
    }

    /** {@code {"class": ..., "desc": ...}}. */
    public Map<String, Object> body() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("class", errorClass);
        m.put("desc", getMessage());
        return m;
    }
}
