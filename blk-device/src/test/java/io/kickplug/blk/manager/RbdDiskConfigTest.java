package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.RbdImage;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The rbd backend's disk configuration: QEMU rbd's property names (pool, namespace, image, snapshot, conf, user)
 * and keyring, kept as the backend's path in QEMU's rbd filename syntax, the size the image's.
 */
class RbdDiskConfigTest {

    @Test
    void theImagePropertiesAreThePathAndSurviveTheRoundTrip() {
        DiskSpec spec = DiskConfig.toSpec(Map.of("name", "r0", "backend", "rbd", "pool", "vms", "namespace", "t1",
                "image", "disk:1", "conf", "/etc/ceph/ceph.conf", "user", "kp", "keyring", "/etc/ceph/kp.keyring"));
        assertEquals("rbd", spec.backend().kind());
        assertEquals(new RbdImage("vms", "t1", "disk:1", null, "/etc/ceph/ceph.conf", "kp", "/etc/ceph/kp.keyring"),
                RbdImage.parse(spec.backend().path()));
        assertEquals(0, spec.backend().sizeBytes());
        DiskSpecCheck.check(spec);
        Map<String, Object> props = DiskConfigStore.toProperties(spec);
        assertEquals("vms", props.get("pool"));
        assertEquals("disk:1", props.get("image"));
        assertEquals("kp", props.get("user"));
        assertTrue(!props.containsKey("file") && !props.containsKey("size") && !props.containsKey("snapshot"),
                props.toString());
        assertEquals(spec.backend(), DiskConfig.toSpec(props).backend());
    }

    @Test
    void errorsNameTheProperty() {
        assertTrue(assertThrows(DiskException.class, () -> DiskConfig.toSpec(Map.of("name", "r0", "backend", "rbd",
                "pool", "rbd"))).getMessage().contains("needs an image"));
        assertTrue(assertThrows(DiskException.class, () -> DiskConfig.toSpec(Map.of("name", "m0", "size", "1M",
                "image", "x"))).getMessage().contains("'image' is only for the rbd backend"));
    }
}
