package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StatementsTest {

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void split(String what, String text, List<String> expected) {
        assertEquals(expected, Statements.split(text), what);
    }

    static Stream<Arguments> split() {
        return Stream.of(
                Arguments.of("splits on top-level semicolons and trims", "kp:attach d0 64M;  kp:io d0 ;kp:disks",
                        List.of("kp:attach d0 64M", "kp:io d0", "kp:disks")),
                Arguments.of("drops empty statements", " ; lb;;  ; ", List.of("lb")),
                Arguments.of("drops empty statements: blank text", "   ", List.of()),
                Arguments.of("keeps semicolons inside quotes", "echo 'a;b'; echo \"c;d\"",
                        List.of("echo 'a;b'", "echo \"c;d\"")),
                Arguments.of("keeps semicolons inside braces, brackets and parentheses",
                        "each [1 2] { echo $it; echo x }; echo (lb; echo y); echo [a;b]",
                        List.of("each [1 2] { echo $it; echo x }", "echo (lb; echo y)", "echo [a;b]")),
                Arguments.of("nested closures and quoted braces do not confuse nesting",
                        "if { true } { echo '}' ; echo \"{\" }; echo done",
                        List.of("if { true } { echo '}' ; echo \"{\" }", "echo done")),
                Arguments.of("an escaped semicolon stays in the statement", "echo a\\;b; echo c",
                        List.of("echo a\\;b", "echo c")),
                Arguments.of("an escaped quote inside double quotes does not end the quote",
                        "echo \"a\\\";b\"; echo c", List.of("echo \"a\\\";b\"", "echo c")),
                Arguments.of("a top-level newline separates statements", "echo a\necho b",
                        List.of("echo a", "echo b")),
                // Gogo reports the syntax error; the splitter must not invent statements.
                Arguments.of("unbalanced text is passed on whole", "echo { a; b", List.of("echo { a; b")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void script(String what, List<String> lines, List<String> expected) {
        assertEquals(expected, Statements.script(lines), what);
    }

    static Stream<Arguments> script() {
        return Stream.of(
                Arguments.of("skips blank lines and comments",
                        List.of("# a comment", "", "   ", "lb", "   # indented comment", "echo x"),
                        List.of("lb", "echo x")),
                Arguments.of("joins backslash continuations", List.of("kp:attach \\", "d0 \\", "64M", "echo z"),
                        List.of("kp:attach d0 64M", "echo z")),
                Arguments.of("splits semicolons on a line", List.of("echo a; echo b", "echo c"),
                        List.of("echo a", "echo b", "echo c")),
                Arguments.of("continues a closure that spans lines",
                        List.of("each [a b] {", "  echo $it", "  # a comment inside the closure", "}", "echo after"),
                        List.of("each [a b] {\n  echo $it\n}", "echo after")),
                Arguments.of("keeps hash lines inside a quote", List.of("echo 'first", "# kept'"),
                        List.of("echo 'first\n# kept'")),
                Arguments.of("a doubled backslash at the end is not a continuation", List.of("echo a\\\\", "echo b"),
                        List.of("echo a\\\\", "echo b")),
                Arguments.of("an unterminated script is passed on whole", List.of("each [a] {", "echo $it"),
                        List.of("each [a] {\necho $it")));
    }
}
