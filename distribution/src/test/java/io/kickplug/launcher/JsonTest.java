package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void quotesWhatJsonMustEscape() {
        assertEquals("\"a\\\"b\\\\c\\nd\\u0001\"", Json.quote("a\"b\\c\nd\u0001"));
        assertEquals("x\"y\nz", Json.unquote(Json.quote("x\"y\nz")));
    }

    @Test
    void acceptsValuesAndRefusesNearMisses() {
        assertTrue(Json.isValue("{\"a\":[1,-2.5e3,true,null,\"s\"],\"b\":{}}"));
        assertTrue(Json.isValue(" [ ] "));
        assertFalse(Json.isValue("{\"a\":1,}"));
        assertFalse(Json.isValue("[1 2]"));
        assertFalse(Json.isValue("{a:1}"));
        assertFalse(Json.isValue("{\"a\":1} x"));
        assertFalse(Json.isValue("01"));
        assertFalse(Json.isValue("[" .repeat(10_000)), "deep nesting is refused, not a stack overflow");
    }

    @Test
    void memberReturnsRawText() {
        String answer = "{\"ok\":true,\"result\":{\"d\":[1, 2]},\"x\":\"y\"}";
        assertEquals("true", Json.member(answer, "ok"));
        assertEquals("{\"d\":[1, 2]}", Json.member(answer, "result"));
        assertEquals("\"y\"", Json.member(answer, "x"));
        assertNull(Json.member(answer, "error"));
        assertThrows(IllegalArgumentException.class, () -> Json.member("[1]", "ok"));
    }
}
