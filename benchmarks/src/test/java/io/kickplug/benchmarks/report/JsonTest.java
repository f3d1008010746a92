package io.kickplug.benchmarks.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonTest {

    @Test
    void readsEveryKindOfValueInFileOrder() {
        Json.Value v = Json.parse("{\"b\": [1, -2.5e2, 0.125], \"a\": {\"s\": \"x\\\"y\\\\z\\n\\u00e9\\/\"},"
                + " \"t\": true, \"f\": false, \"n\": null}", "t.json");
        assertEquals(List.of("b", "a", "t", "f", "n"), List.copyOf(v.keys()));
        assertEquals(-250.0, v.get("b").list().get(1).number());
        assertEquals(0.125, v.get("b").list().get(2).number());
        assertEquals("x\"y\\z\n\u00e9/", v.get("a").get("s").string());
        assertEquals(Boolean.TRUE, v.get("t").bool());
        assertEquals(Boolean.FALSE, v.get("f").bool());
        assertTrue(v.get("n").isNull());
        assertTrue(Double.isNaN(v.get("n").number()), "a figure written as null reads as NaN");
        assertNull(v.get("n").bool(), "a verdict not taken");
        assertNull(v.opt("missing"));
        assertEquals("$.b[2]", v.get("b").list().get(2).path());
    }

    /** Malformed input: the message names the file, the line and column, and what was expected there. */
    @Test
    void malformedInputNamesTheFileAndThePosition() {
        assertError("{\n  \"a\": 1,\n  \"b\" 2\n}", "r.json:3:7: ':' after member name \"b\" expected, found \"2\"");
        assertError("{\"a\": [1, 2,]}", "r.json:1:13: a value expected, found \"]}\"");
        assertError("{\"a\": 1,}", "r.json:1:9: a member name (a string) expected, found \"}\"");
        assertError("{\"a\": 1", "r.json:1:8: ',' or '}' expected after member \"a\", found the end of the file");
        assertError("{\"a\": \"open", "r.json:1:12: unterminated string");
        assertError("[01]", "r.json:1:3: ',' or ']' expected in an array, found \"1]\"");
        assertError("[1.]", "r.json:1:4: a digit expected after '.', found \"]\"");
        assertError("[-]", "r.json:1:3: a digit expected in a number, found \"]\"");
        assertError("[tru]", "r.json:1:2: a value expected, found \"tru]\"");
        assertError("{\"a\": 1} x", "r.json:1:10: text after the end of the JSON value");
        assertError("{\"a\": 1, \"a\": 2}", "r.json:1:10: member \"a\" appears twice in $");
        assertError("[\"a\tb\"]", "r.json:1:4: control character U+0009 in a string");
        assertError("[\"\\x\"]", "r.json:1:3: unknown escape \\x");
        assertError("[\"\\u12g4\"]", "r.json:1:3: \\u needs four hex digits");
        assertError("", "r.json:1:1: a value expected, found the end of the file");
        assertError("[".repeat(Json.MAX_DEPTH + 2), "r.json:1:" + (Json.MAX_DEPTH + 2) + ": nesting deeper than "
                + Json.MAX_DEPTH);
    }

    /** A member that is missing or of the wrong kind: the message names the file and the member's path. */
    @Test
    void aMissingOrMistypedMemberNamesItsPath() {
        Json.Value v = Json.parse("{\"points\": [{\"depth\": \"1\"}]}", "docs/results/x.json");
        Json.Value point = v.get("points").list().get(0);
        assertEquals("docs/results/x.json: $.points[0] has no member \"backend\"",
                assertThrows(Json.JsonException.class, () -> point.get("backend")).getMessage());
        assertEquals("docs/results/x.json: $.points[0].depth is a string, not a number",
                assertThrows(Json.JsonException.class, () -> point.get("depth").number()).getMessage());
        assertEquals("docs/results/x.json: $.points is an array, not an object",
                assertThrows(Json.JsonException.class, () -> v.get("points").get("x")).getMessage());
        assertEquals("docs/results/x.json: $.points[0] is an object, not an array",
                assertThrows(Json.JsonException.class, () -> point.list()).getMessage());
        assertEquals("docs/results/x.json: $ is an object, not true or false",
                assertThrows(Json.JsonException.class, () -> v.bool()).getMessage());
        assertEquals("j: $[0] is 1.5, not a whole number",
                assertThrows(Json.JsonException.class, () -> Json.parse("[1.5]", "j").list().get(0).integer())
                        .getMessage());
    }

    @Test
    void readNamesTheFileAsGiven(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("bad.json");
        Files.writeString(f, "{\"a\":\n\n   oops}");
        Json.JsonException e = assertThrows(Json.JsonException.class, () -> Json.read(f));
        assertEquals(f + ":3:4: a value expected, found \"oops}\"", e.getMessage());
    }

    /** What the writers put out, the reader takes back exactly. */
    @Test
    void quoteAndNumberRoundTrip() {
        String s = "tab\t quote\" back\\ nl\n cr\r ctl\u0001 ls\u2028 é";
        assertEquals(s, Json.parse(Json.quote(s), "q").string());
        assertEquals("null", Json.quote(null));
        assertEquals("12", Json.number(12.0));
        assertEquals("-0.5", Json.number(-0.5));
        assertEquals("null", Json.number(Double.NaN));
        assertEquals("null", Json.number(Double.NEGATIVE_INFINITY));
        for (double d : new double[] {1e-7, 123456.789, 6.02e23, -3}) {
            assertEquals(d, Json.parse(Json.number(d), "n").number());
        }
    }

    private static void assertError(String text, String message) {
        Json.JsonException e = assertThrows(Json.JsonException.class, () -> Json.parse(text, "r.json"), text);
        assertEquals(message, e.getMessage());
    }
}
