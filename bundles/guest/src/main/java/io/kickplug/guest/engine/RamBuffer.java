package io.kickplug.guest.engine;

import io.kickplug.api.memory.GuestMemory;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** A guest buffer carved from guest RAM. */
record RamBuffer(GuestMemory memory, long address, int size) implements GuestBuffer {

    @Override
    public ByteBuffer view() {
        ByteBuffer[] views = memory.views(address, size);
        if (views.length != 1) {
            throw new IllegalStateException("guest buffer at 0x" + Long.toHexString(address)
                    + " spans memory regions");
        }
        return views[0].slice().order(ByteOrder.LITTLE_ENDIAN);
    }
}
