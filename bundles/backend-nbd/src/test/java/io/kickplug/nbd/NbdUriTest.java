package io.kickplug.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import org.junit.jupiter.api.Test;

class NbdUriTest {

    @Test
    void tcpWithAndWithoutPort() {
        NbdUri a = NbdUri.parse("nbd://server.example:10900/vol%201");
        InetSocketAddress address = (InetSocketAddress) a.address();
        assertEquals("server.example", address.getHostString());
        assertEquals(10900, address.getPort());
        assertEquals("vol 1", a.export());
        assertFalse(a.unix());
        NbdUri b = NbdUri.parse("nbd://127.0.0.1/");
        assertEquals(NbdUri.DEFAULT_PORT, ((InetSocketAddress) b.address()).getPort());
        assertEquals("", b.export());
    }

    @Test
    void unixSocket() {
        NbdUri u = NbdUri.parse("nbd+unix:///disk?socket=/run/nbd/a%20b.sock");
        assertTrue(u.unix());
        assertEquals("disk", u.export());
        assertEquals("/run/nbd/a b.sock", ((UnixDomainSocketAddress) u.address()).getPath().toString());
    }

    @Test
    void errorsSayWhatIsWrong() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("nbds://h/x")).getMessage()
                .contains("TLS"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("nbd+unix:///x")).getMessage()
                .contains("?socket=PATH"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("http://h/x")).getMessage()
                .contains("unknown scheme"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("nbd:///x")).getMessage()
                .contains("no host"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("")).getMessage()
                .contains("needs a URI"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> NbdUri.parse("nbd+unix:///x?socket=/s&tls=1"))
                .getMessage().contains("unknown query parameter 'tls'"));
    }
}
