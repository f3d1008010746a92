package io.kickplug.rbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.RbdImage;
import org.junit.jupiter.api.Test;

/** QEMU's legacy rbd filename, as an rbd disk keeps its image in the backend spec's path. */
class RbdImageTest {

    @Test
    void everyFieldSurvivesTheRoundTripIncludingEscapedSeparators() {
        RbdImage full = new RbdImage("p:1", "ns/x", "img@a", "snap\\1", "/etc/ceph/a:b.conf", "kp", "/k/ring");
        String path = full.toPath();
        assertEquals("rbd:p\\:1/ns\\/x/img\\@a@snap\\\\1:conf=/etc/ceph/a\\:b.conf:id=kp:keyring=/k/ring", path);
        assertEquals(full, RbdImage.parse(path));
        RbdImage plain = new RbdImage("rbd", null, "vm1", null, null, null, null);
        assertEquals("rbd:rbd/vm1", plain.toPath());
        assertEquals(plain, RbdImage.parse("rbd:rbd/vm1"));
        assertEquals("rbd/ns/vm1@s", new RbdImage("rbd", "ns", "vm1", "s", null, null, null).displayName());
    }

    @Test
    void qemuStyleNamesParse() {
        RbdImage i = RbdImage.parse("rbd:pool/image@snap:id=admin:conf=/etc/ceph/ceph.conf");
        assertEquals("pool", i.pool());
        assertEquals("image", i.image());
        assertEquals("snap", i.snapshot());
        assertEquals("admin", i.user());
        assertEquals("/etc/ceph/ceph.conf", i.conf());
    }

    @Test
    void disksOfOneConfUserAndKeyringShareAClusterKey() {
        RbdImage a = new RbdImage("rbd", null, "a", null, "/c", "u", null);
        RbdImage b = new RbdImage("other", "ns", "b", "s", "/c", "u", null);
        RbdImage c = new RbdImage("rbd", null, "a", null, "/c", "v", null);
        assertEquals(a.clusterKey(), b.clusterKey());
        assertTrue(!a.clusterKey().equals(c.clusterKey()));
    }

    @Test
    void malformedNamesAreRefusedWithTheReason() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RbdImage.parse("pool/image")).getMessage()
                .contains("not an rbd name"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RbdImage.parse("rbd:image")).getMessage()
                .contains("pool/image"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RbdImage.parse("rbd:p/i:mon_host=x"))
                .getMessage().contains("unknown rbd option 'mon_host'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RbdImage.parse("rbd:p/i@a@b")).getMessage()
                .contains("more than one '@'"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> new RbdImage("p", null, " ", null, null, null, null)).getMessage().contains("needs an image"));
    }
}
