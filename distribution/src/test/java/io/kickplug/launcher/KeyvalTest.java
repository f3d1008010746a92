package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/**
 * QEMU's KEY=VALUE,... syntax; the cases and error messages follow QEMU's tests/unit/test-keyval.c
 * ({@code test_keyval_parse}, {@code test_keyval_parse_list}).
 */
class KeyvalTest {

    private static String parse(String params, String implied) throws Exception {
        return Json.write(Keyval.parse(params, implied));
    }

    private static String error(String params, String implied) {
        return assertThrows(Keyval.KeyvalException.class, () -> Keyval.parse(params, implied)).getMessage();
    }

    @Test
    void emptyIsAnEmptyObject() throws Exception {
        assertEquals("{}", parse("", null));
    }

    @Test
    void emptyKeyIsInvalid() {
        assertEquals("Invalid parameter ''", error("=val", null));
    }

    @Test
    void keyWithoutValueNeedsEquals() {
        assertEquals("Expected '=' after parameter 'key'", error("key", null));
    }

    @Test
    void keyFragmentLengthLimit() throws Exception {
        String max = "a".repeat(127);
        assertEquals("{\"" + max + "\":\"v\"}", parse(max + "=v", null));
        String tooLong = "a".repeat(128);
        assertEquals("Parameter '" + tooLong + "' is too long", error(tooLong + "=v", null));
        assertEquals("Parameter fragment '" + tooLong + "' is too long", error("b." + tooLong + "=v", null));
    }

    @Test
    void severalKeysKeepTheirOrderAndTheLastValueWins() throws Exception {
        assertEquals("{\"key1\":\"val1\",\"key2\":\"val2\"}", parse("key1=val1,key2=val2", null));
        assertEquals("{\"key1\":\"2\"}", parse("key1=1,key1=2", null));
    }

    @Test
    void dottedKeysNest() throws Exception {
        assertEquals("{\"a\":{\"b\":{\"c\":\"2\"}},\"d\":\"3\"}", parse("a.b.c=1,a.b.c=2,d=3", null));
        assertEquals("{\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/s\"}}",
                parse("addr.type=unix,addr.path=/tmp/s", null));
    }

    @Test
    void aKeyIsEitherAnObjectOrAValue() {
        assertEquals("Parameters 'a.*' used inconsistently", error("a.b=1,a=2", null));
        assertEquals("Parameters 'a.*' used inconsistently", error("a=2,a.b=1", null));
    }

    @Test
    void doubledCommaIsACommaAndATrailingCommaEnds() throws Exception {
        assertEquals("{\"key1\":\"val1,key2=val2\"}", parse("key1=val1,,key2=val2", null));
        assertEquals("{\"key\":\"v,\"}", parse("key=v,,,", null));
        assertEquals("{\"key\":\"val\"}", parse("key=val,", null));
        assertEquals("{\"key\":\"\"}", parse("key=", null));
    }

    @Test
    void valuesAreTakenAsTheyAre() throws Exception {
        assertEquals("{\"f\":\"a'b\\\"c\\\\d ${x} ; =\"}", parse("f=a'b\"c\\d ${x} ; =", null));
    }

    @Test
    void impliedKey() throws Exception {
        assertEquals("{\"implied\":\"an_implied_value\"}", parse("an_implied_value", "implied"));
        assertEquals("{\"qom-type\":\"iothread\",\"id\":\"io0\"}", parse("iothread,id=io0", "qom-type"));
        assertEquals("{\"no_implied\":\"val\"}", parse("no_implied=val", "implied"));
        assertEquals("{\"implied\":\"a,b\",\"k\":\"v\"}", parse("a,,b,k=v", "implied"));
        // Only the first item may omit its key.
        assertEquals("Expected '=' after parameter 'second'", error("first,second", "implied"));
        assertEquals("Invalid parameter ''", error(",k=v", "implied"));
    }

    @Test
    void keysAreQapiNames() {
        assertEquals("Invalid parameter 'bad key'", error("bad key=1", null));
        assertEquals("Invalid parameter '1a'", error("1a=1", null));
        assertEquals("Invalid parameter 'a.'", error("a.=1", null));
        assertEquals("Invalid parameter 'a..b'", error("a..b=1", null));
    }

    @Test
    void indexKeysMakeLists() throws Exception {
        assertEquals("{\"list\":[\"null\",\"eins\",\"zwei\"]}", parse("list.0=null,list.2=zwei,list.1=eins", null));
        assertEquals("{\"a\":[{\"b\":\"x\"},{\"b\":\"y\"}]}", parse("a.0.b=x,a.1.b=y", null));
        assertEquals("Parameter 'list.0' missing", error("list.1=x", null));
        assertEquals("Parameters 'a.*' used inconsistently", error("a.0=x,a.b=y", null));
        // The first fragment is never an index.
        assertEquals("Invalid parameter '0'", error("0=x", null));
    }
}
