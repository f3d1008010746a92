package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonOutTest {

    @Test
    void writesOneCompactLine() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "a\"b\\c\nd\u0001");
        m.put("n", 3L);
        m.put("d", 1.5);
        m.put("nan", Double.NaN);
        m.put("b", true);
        m.put("z", null);
        m.put("l", List.of(1, List.of()));
        assertEquals("{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"n\":3,\"d\":1.500,\"nan\":null,\"b\":true,\"z\":null,"
                + "\"l\":[1,[]]}", JsonOut.write(m));
        assertEquals("[null]", JsonOut.write(Arrays.asList((Object) null)));
    }

    /** RFC 8259 section 7: every control character escaped; U+2028/U+2029 too, so a literal never breaks a line. */
    @Test
    void escapesEveryControlCharacterAndTheUnicodeLineBreaks() {
        assertEquals("[\"\\t\\r\\u001f\\u2028\\u2029\\u0000\u00e9\"]",
                JsonOut.write(List.of("\t\r\u001f\u2028\u2029\u0000\u00e9")));
    }
}
