package io.kickplug.virtio.fuzz;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.virtio.fuzz.VirtioQueueInput.Desc;
import io.kickplug.virtio.fuzz.VirtioQueueInput.Table;
import java.util.List;

/** Writes a {@link VirtioQueueInput}'s rings into guest memory as a driver would, skipping what lies outside. */
final class DriverImage {
    private DriverImage() {
    }

    /** Writes the indirect tables, then the descriptor table, then the available ring. */
    static void write(GuestMemory m, VirtioQueueInput in) {
        int size = in.size();
        List<Table> tables = in.tables();
        for (Table t : tables) {
            for (int j = 0; j < t.entries().size(); j++) {
                writeDesc(m, in, t.addr() + 16L * j, t.entries().get(j), j + 1);
            }
        }
        for (int i = 0; i < in.descriptors().size() && i < Math.max(size, 0); i++) {
            writeDesc(m, in, in.desc() + 16L * i, in.descriptors().get(i), (i + 1) & (size - 1));
        }
        long a = in.avail();
        writeU16(m, a, in.availFlags());
        writeU16(m, a + 2, in.availIdx());
        if (size > 0 && size <= 32768) {
            // Slots past the generated entries name descriptor j, so that moving avail.idx finds heads.
            for (int j = 0; j < size; j++) {
                writeU16(m, a + 4 + 2L * j, j < in.availEntries().size() ? in.availEntries().get(j) : j);
            }
            writeU16(m, a + 4 + 2L * size, in.usedEvent());
        }
    }

    /** Writes {@code d} at {@code at}; a next of -1 stands for {@code following}. */
    private static void writeDesc(GuestMemory m, VirtioQueueInput in, long at, Desc d, int following) {
        if (!FuzzMemory.inside(at, 16)) {
            return;
        }
        long addr = d.addr();
        long len = d.len();
        if (d.tableRef() >= 0 && !in.tables().isEmpty()) {
            Table t = in.tables().get(d.tableRef() % in.tables().size());
            addr = t.addr();
            if (len < 0) {
                len = 16L * t.entries().size();
            }
        }
        if (len < 0) {
            len = 16;
        }
        m.writeU64(at, addr);
        m.writeU32(at + 8, (int) len);
        m.writeU16(at + 12, (short) d.flags());
        m.writeU16(at + 14, (short) (d.next() < 0 ? following : d.next()));
    }

    private static void writeU16(GuestMemory m, long at, int v) {
        if (FuzzMemory.inside(at, 2)) {
            m.writeU16(at, (short) v);
        }
    }
}
