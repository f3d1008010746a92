package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SizesTest {

    @ParameterizedTest
    @CsvSource({
        "4096, 4096",
        "0, 0",
        "512K, 524288",
        "64M, 67108864",
        "64m, 67108864",
        "1G, 1073741824",
        "2T, 2199023255552",
        "' 8k ', 8192",
    })
    void parsesBytesWithBinarySuffixes(String text, long expected) {
        assertEquals(expected, Sizes.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc", "", "M", "-1", "1.5G", "64MB", "12X", "1 M"})
    void rejectsAnythingElseWithOneClearLine(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Sizes.parse(text));
        assertEquals("invalid size '" + text + "': expected bytes with an optional K, M, G or T suffix",
                e.getMessage());
    }

    @Test
    void rejectsNull() {
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse(null));
    }

    @Test
    void rejectsOverflow() {
        assertEquals("invalid size '8388608T': larger than 8 EiB",
                assertThrows(IllegalArgumentException.class, () -> Sizes.parse("8388608T")).getMessage());
        assertEquals("invalid size '99999999999999999999': larger than 8 EiB",
                assertThrows(IllegalArgumentException.class, () -> Sizes.parse("99999999999999999999")).getMessage());
        assertEquals(8388607L << 40, Sizes.parse("8388607T"));
    }

    @ParameterizedTest
    @CsvSource({
        "0, 0 B",
        "1023, 1023 B",
        "4096, 4 KiB",
        "67108864, 64 MiB",
        "1610612736, 1.5 GiB",
        "2199023255552, 2 TiB",
    })
    void formatsWithTheLargestFittingUnit(long bytes, String expected) {
        assertEquals(expected, Sizes.format(bytes));
    }
}
