package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import org.junit.jupiter.api.Test;

class ErrorsTest {

    @Test
    void usesTheRootCauseMessage() {
        Exception e = new RuntimeException("outer", new IllegalStateException("middle",
                new IllegalArgumentException("invalid size: abc")));
        assertEquals("invalid size: abc", Errors.message(e));
    }

    @Test
    void messageBecomesOneLine() {
        assertEquals("Unable to resolve x: missing requirement y",
                Errors.message(new IOException("Unable to resolve x:\n    missing requirement y\n")));
    }

    @Test
    void causeWithoutMessageIsNamedByClass() {
        assertEquals("IllegalStateException",
                Errors.message(new RuntimeException("outer", new IllegalStateException())));
    }

    @Test
    void survivesACauseCycle() {
        IllegalStateException a = new IllegalStateException("a");
        IllegalStateException b = new IllegalStateException("b", a);
        a.initCause(b);
        // Stops when it meets a throwable again instead of looping.
        assertEquals("a", Errors.message(a));
    }
}
