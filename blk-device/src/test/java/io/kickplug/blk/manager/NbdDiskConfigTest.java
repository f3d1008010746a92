package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The nbd backend's disk configuration: property {@code uri}, kept as the backend's path, size from the server. */
class NbdDiskConfigTest {

    @Test
    void uriIsThePathAndSurvivesTheRoundTrip() {
        DiskSpec spec = DiskConfig.toSpec(Map.of("name", "n0", "backend", "nbd",
                "uri", "nbd+unix:///disk?socket=/run/s.sock"));
        assertEquals("nbd", spec.backend().kind());
        assertEquals("nbd+unix:///disk?socket=/run/s.sock", spec.backend().path());
        assertEquals(0, spec.backend().sizeBytes());
        DiskSpecCheck.check(spec);
        Map<String, Object> props = DiskConfigStore.toProperties(spec);
        assertEquals("nbd+unix:///disk?socket=/run/s.sock", props.get("uri"));
        assertTrue(!props.containsKey("file") && !props.containsKey("size"), props.toString());
        assertEquals(spec.backend(), DiskConfig.toSpec(props).backend());
    }

    @Test
    void errorsNameTheProperty() {
        assertTrue(assertThrows(DiskException.class, () -> DiskConfig.toSpec(Map.of("name", "n0", "backend", "nbd")))
                .getMessage().contains("needs property 'uri'"));
        assertTrue(assertThrows(DiskException.class, () -> DiskConfig.toSpec(Map.of("name", "m0", "size", "1M",
                "uri", "nbd://h/x"))).getMessage().contains("'uri' is only for the nbd backend"));
    }
}
