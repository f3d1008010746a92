package io.kickplug.virtio.transport;

import static io.kickplug.virtio.pci.PciRegisters.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The MSI-X table and PBA on their own (PCI Local Bus 3.0 section 6.8.2; VIRTIO 1.2 section 4.1.5.1.2). */
class MsixTableTest {
    private final List<Integer> delivered = new ArrayList<>();

    @Test
    void entriesStartMaskedAndNothingIsSentWhileDisabled() {
        MsixTable t = new MsixTable(3, delivered::add);
        // PCI 3.0 section 6.8.2.9: every mask bit is set after reset.
        for (int v = 0; v < 3; v++) {
            assertEquals(MSIX_ENTRY_MASKED, t.read(16L * v + MSIX_ENTRY_VECTOR_CONTROL, 4));
        }
        t.write(MSIX_ENTRY_VECTOR_CONTROL, 4, 0);
        t.signal(0);
        assertEquals(List.of(), delivered, "MSI-X is not enabled");
        assertFalse(t.isPending(0));
        t.setControl(true, false);
        t.signal(0);
        t.signal(3); // outside the table
        t.signal(-1);
        assertEquals(List.of(0), delivered);
    }

    @Test
    void tableDwordsAndQwordsRoundTripAndReservedControlBitsReadZero() {
        MsixTable t = new MsixTable(2, delivered::add);
        t.write(16 + MSIX_ENTRY_ADDR_LO, 8, 0x0000_0001_fee0_1000L);
        assertEquals(0xfee0_1000L, t.read(16 + MSIX_ENTRY_ADDR_LO, 4));
        assertEquals(1, t.read(16 + MSIX_ENTRY_ADDR_HI, 4));
        t.write(16 + MSIX_ENTRY_VECTOR_CONTROL, 4, 0xffff_fffeL);
        assertEquals(0, t.read(16 + MSIX_ENTRY_VECTOR_CONTROL, 4));
        // Only aligned dword or qword accesses decode.
        t.write(16 + MSIX_ENTRY_DATA, 2, 0x1234);
        assertEquals(0, t.read(16 + MSIX_ENTRY_DATA, 4));
        assertEquals(0, t.read(16 + MSIX_ENTRY_DATA + 1, 4));
    }

    @Test
    void pendingBitsAreReadOnlyAndClearOnDelivery() {
        MsixTable t = new MsixTable(MSIX_MAX_VECTORS, delivered::add);
        t.setControl(true, false);
        t.signal(70); // masked since reset
        assertTrue(t.isPending(70));
        long word = t.pbaOffset() + 8;
        assertEquals(1L << 6, t.read(word, 8));
        t.write(word, 8, 0);
        assertTrue(t.isPending(70), "the PBA is read-only");
        t.write(16L * 70 + MSIX_ENTRY_VECTOR_CONTROL, 4, 0);
        assertEquals(List.of(70), delivered);
        assertFalse(t.isPending(70));
        assertTrue(t.pbaOffset() >= MSIX_MAX_VECTORS * MSIX_ENTRY_SIZE);
        assertTrue(t.pbaOffset() + MSIX_MAX_VECTORS / 8 <= t.size());
        assertEquals(1, Long.bitCount(t.size()), "a BAR size is a power of two");
    }
}
