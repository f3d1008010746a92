package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class StatementsTest {

    @Test
    void splitsOnTopLevelSemicolonsAndTrims() {
        assertEquals(List.of("kp:attach d0 64M", "kp:io d0", "kp:disks"),
                Statements.split("kp:attach d0 64M;  kp:io d0 ;kp:disks"));
    }

    @Test
    void dropsEmptyStatements() {
        assertEquals(List.of("lb"), Statements.split(" ; lb;;  ; "));
        assertEquals(List.of(), Statements.split("   "));
    }

    @Test
    void keepsSemicolonsInsideQuotes() {
        assertEquals(List.of("echo 'a;b'", "echo \"c;d\""), Statements.split("echo 'a;b'; echo \"c;d\""));
    }

    @Test
    void keepsSemicolonsInsideBracesBracketsAndParentheses() {
        assertEquals(List.of("each [1 2] { echo $it; echo x }", "echo (lb; echo y)", "echo [a;b]"),
                Statements.split("each [1 2] { echo $it; echo x }; echo (lb; echo y); echo [a;b]"));
    }

    @Test
    void nestedClosuresAndQuotedBracesDoNotConfuseNesting() {
        assertEquals(List.of("if { true } { echo '}' ; echo \"{\" }", "echo done"),
                Statements.split("if { true } { echo '}' ; echo \"{\" }; echo done"));
    }

    @Test
    void escapedSemicolonStaysInTheStatement() {
        assertEquals(List.of("echo a\\;b", "echo c"), Statements.split("echo a\\;b; echo c"));
    }

    @Test
    void escapedQuoteInsideDoubleQuotesDoesNotEndTheQuote() {
        assertEquals(List.of("echo \"a\\\";b\"", "echo c"), Statements.split("echo \"a\\\";b\"; echo c"));
    }

    @Test
    void topLevelNewlineSeparatesStatements() {
        assertEquals(List.of("echo a", "echo b"), Statements.split("echo a\necho b"));
    }

    @Test
    void unbalancedTextIsPassedOnWhole() {
        // Gogo reports the syntax error; the splitter must not invent statements.
        assertEquals(List.of("echo { a; b"), Statements.split("echo { a; b"));
    }

    @Test
    void scriptSkipsBlankLinesAndComments() {
        assertEquals(List.of("lb", "echo x"), Statements.script(List.of(
                "# a comment", "", "   ", "lb", "   # indented comment", "echo x")));
    }

    @Test
    void scriptJoinsBackslashContinuations() {
        assertEquals(List.of("kp:attach d0 64M", "echo z"), Statements.script(List.of(
                "kp:attach \\", "d0 \\", "64M", "echo z")));
    }

    @Test
    void scriptSplitsSemicolonsOnALine() {
        assertEquals(List.of("echo a", "echo b", "echo c"), Statements.script(List.of("echo a; echo b", "echo c")));
    }

    @Test
    void scriptContinuesAClosureThatSpansLines() {
        assertEquals(List.of("each [a b] {\n  echo $it\n}", "echo after"),
                Statements.script(List.of("each [a b] {", "  echo $it", "  # a comment inside the closure", "}",
                        "echo after")));
    }

    @Test
    void scriptKeepsHashLinesInsideAQuote() {
        assertEquals(List.of("echo 'first\n# kept'"), Statements.script(List.of("echo 'first", "# kept'")));
    }

    @Test
    void doubledBackslashAtEndIsNotAContinuation() {
        assertEquals(List.of("echo a\\\\", "echo b"), Statements.script(List.of("echo a\\\\", "echo b")));
    }

    @Test
    void unterminatedScriptIsPassedOnWhole() {
        assertEquals(List.of("each [a] {\necho $it"), Statements.script(List.of("each [a] {", "echo $it")));
    }
}
