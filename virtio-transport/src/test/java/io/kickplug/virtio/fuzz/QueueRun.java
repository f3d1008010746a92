package io.kickplug.virtio.fuzz;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.fuzz.ChainModel.Buf;
import io.kickplug.virtio.fuzz.ChainModel.Walk;
import io.kickplug.virtio.fuzz.VirtioQueueInput.Op;
import io.kickplug.virtio.fuzz.VirtioQueueInput.WriterOp;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Replays one {@link VirtioQueueInput} against a {@link SplitDeviceQueue} and checks, after every
 * operation, the properties every input must keep:
 * <ul>
 * <li>nothing but {@link GuestFaultException} escapes (anything else fails the property as thrown);
 * <li>after a fault the queue is broken and yields nothing more;
 * <li>the device accepts exactly the chains {@link ChainModel} accepts, and a popped chain's buffers lie in
 * guest memory, readable before writable, at most queue size (+ indirect table size) of them, at most 2^32
 * bytes (its reader returns the model's bytes, its writer writes exactly the model's addresses);
 * <li>the used index only advances by pushes, one per push, with the pushed element;
 * <li>the device writes nothing but the used ring and the bytes the harness wrote through chain writers.
 * </ul>
 */
final class QueueRun {
    private final FuzzMemory fm;
    private final GuestMemory m;
    private final VirtioQueueInput in;
    private final int size;
    private int mask;
    private SplitDeviceQueue q;
    private boolean broken;
    private final List<Integer> inFlight = new ArrayList<>();
    private final BitSet inFlightHeads = new BitSet();
    private int pushedSinceCheck;
    private boolean signalledValid;
    private int signalled;
    private int pattern = 0x5b;
    /** Chains the device accepted (valid per the model): the input reached a live queue. */
    private int popped;

    QueueRun(FuzzMemory fm, VirtioQueueInput in) {
        this.fm = fm;
        this.m = fm.memory;
        this.in = in;
        this.size = in.size();
    }

    /** The spec's vring_need_event (VIRTIO 1.2 section 2.7.7.2), written out here rather than reused. */
    static boolean needEvent(int event, int newIdx, int old) {
        return ((newIdx - event - 1) & 0xffff) < ((newIdx - old) & 0xffff);
    }

    /** Chains the device accepted in {@link #run}. */
    int popped() {
        return popped;
    }

    /** Runs the input; returns true when the queue was created (false: the layout was refused). */
    boolean run() {
        fm.reset();
        DriverImage.write(m, in);
        long features = (in.eventIdx() ? VirtioFeatures.RING_EVENT_IDX : 0)
                | (in.indirect() ? VirtioFeatures.RING_INDIRECT_DESC : 0);
        boolean layoutValid = layoutValid();
        try {
            q = new SplitDeviceQueue(m, 0, new QueueLayout(size, in.desc(), in.avail(), in.used()), features);
        } catch (GuestFaultException e) {
            assertFalse(layoutValid, () -> "a valid layout was refused: " + e.getMessage());
            return false;
        }
        assertTrue(layoutValid, "section 2.7: an invalid queue layout was accepted");
        mask = size - 1;
        fm.snapshot();
        for (Op op : in.functions()) {
            step(op);
        }
        String unexpected = fm.firstUnexpectedWrite(in.used(), QueueLayout.usedRingBytes(size));
        assertNull(unexpected, "the device wrote outside the used ring and the chains' writable buffers");
        return true;
    }

    /** Section 2.7: power-of-two size up to 32768, parts aligned 16/2/4 and inside memory. */
    private boolean layoutValid() {
        if (size < 1 || size > 32768 || Integer.bitCount(size) != 1) {
            return false;
        }
        if ((in.desc() & 15) != 0 || (in.avail() & 1) != 0 || (in.used() & 3) != 0) {
            return false;
        }
        return FuzzMemory.inside(in.desc(), QueueLayout.descTableBytes(size))
                && FuzzMemory.inside(in.avail(), QueueLayout.availRingBytes(size))
                && FuzzMemory.inside(in.used(), QueueLayout.usedRingBytes(size));
    }

    private int memAvailIdx() {
        return m.readU16(in.avail() + 2) & 0xffff;
    }

    private int memUsedIdx() {
        return m.readU16(in.used() + 2) & 0xffff;
    }

    // ---- replay -----------------------------------------------------------------------------------

    private void step(Op op) {
        int nextUsedBefore = q.nextUsed();
        int usedIdxBefore = memUsedIdx();
        boolean deviceWroteBuffers = false;
        boolean driverOp = false;
        try {
            // (Java 17: no pattern matching in switch yet.)
            if (op instanceof VirtioQueueInput.Pop p) {
                deviceWroteBuffers = pop(p);
            } else if (op instanceof VirtioQueueInput.Push p) {
                push(p);
            } else if (op instanceof VirtioQueueInput.NeedsNotification) {
                needsNotification();
            } else if (op instanceof VirtioQueueInput.EnableNotification) {
                enableNotification();
            } else if (op instanceof VirtioQueueInput.DisableNotification) {
                disableNotification();
            } else if (op instanceof VirtioQueueInput.HasAvailable) {
                hasAvailable();
            } else {
                driverOp = true;
                if (op instanceof VirtioQueueInput.Publish p) {
                    fm.driverWriteU16(in.avail() + 2, (memAvailIdx() + p.delta()) & 0xffff);
                } else if (op instanceof VirtioQueueInput.SetAvailEntry s) {
                    fm.driverWriteU16(in.avail() + 4 + 2L * (s.slot() & mask), s.head());
                } else if (op instanceof VirtioQueueInput.SetAvailFlags f) {
                    fm.driverWriteU16(in.avail(), f.flags());
                } else if (op instanceof VirtioQueueInput.SetUsedEvent e) {
                    fm.driverWriteU16(in.avail() + 4 + 2L * size, e.value());
                }
            }
        } catch (GuestFaultException e) {
            onFault(e);
        }
        if (!(op instanceof VirtioQueueInput.Push)) {
            // The used index only advances by pushes (section 2.7.8).
            assertEquals(nextUsedBefore, q.nextUsed(), () -> "used index moved during " + op);
            if (!driverOp && !deviceWroteBuffers) {
                assertEquals(usedIdxBefore, memUsedIdx(), () -> "used.idx in memory moved during " + op);
            }
        }
    }

    private void onFault(GuestFaultException e) {
        assertNotNull(e.section());
        assertTrue(q.isBroken(), () -> "a fault must break the queue: " + e.getMessage());
        broken = true;
        assertNull(q.pop(), "a broken queue yields nothing");
        assertFalse(q.hasAvailable());
        assertFalse(q.enableNotification());
        assertFalse(q.needsNotification());
    }

    /** Returns true when the harness wrote through the chain's writer. */
    private boolean pop(VirtioQueueInput.Pop p) {
        int nextAvail = q.nextAvail();
        int memIdx = memAvailIdx();
        int head = m.readU16(in.avail() + 4 + 2L * (nextAvail & mask)) & 0xffff;
        DescriptorChain c;
        try {
            c = q.pop();
        } catch (GuestFaultException e) {
            boolean idxJump = ((memIdx - nextAvail) & 0xffff) > size;
            boolean badHead = head >= size || inFlightHeads.get(head);
            boolean badChain = !badHead && !ChainModel.walk(m, in.desc(), size, head, in.indirect()).valid();
            assertTrue(broken || idxJump || badHead || badChain, () -> "fault on an acceptable chain: " + e.getMessage());
            throw e;
        }
        if (broken) {
            assertNull(c, "a broken queue yields nothing");
            return false;
        }
        if (c == null) {
            assertEquals(nextAvail, memIdx, "pop() found nothing although avail.idx moved");
            return false;
        }
        assertEquals(head, c.head());
        assertTrue(head < size && !inFlightHeads.get(head));
        assertEquals((nextAvail + 1) & 0xffff, q.nextAvail());
        Walk w = ChainModel.walk(m, in.desc(), size, head, in.indirect());
        assertTrue(w.valid(), () -> "the device accepted a chain the spec forbids: " + w.violation());
        assertEquals(w.buffers().size(), c.bufferCount());
        assertEquals(w.bytes(false), c.readableBytes());
        assertEquals(w.bytes(true), c.writableBytes());
        checkChainShape(w);
        inFlight.add(head);
        inFlightHeads.set(head);
        popped++;
        checkReader(c.reader(), w, p);
        return applyWriter(c.writer(), w, p.writes());
    }

    /** The brief's chain invariants, on the model's buffers (tied to the device's by contents below). */
    private void checkChainShape(Walk w) {
        boolean seenWritable = false;
        long total = 0;
        for (Buf b : w.buffers()) {
            assertTrue(b.len() == 0 || FuzzMemory.inside(b.addr(), b.len()), "buffer outside guest memory");
            assertFalse(seenWritable && !b.writable(), "readable buffer after a writable one");
            seenWritable |= b.writable();
            total += b.len();
        }
        assertTrue(total <= 1L << 32, "chain longer than 2^32 bytes");
        assertTrue(w.buffers().size() <= size + w.indirectEntries(), "more buffers than queue + indirect table");
    }

    private void checkReader(ChainReader r, Walk w, VirtioQueueInput.Pop p) {
        assertEquals(w.bytes(false), r.remaining());
        long skip = Math.min(p.readSkip(), r.remaining());
        r.skip(skip);
        int n = (int) Math.min(p.readLen(), r.remaining());
        byte[] got = new byte[n];
        r.read(got, 0, n);
        for (int j = 0; j < n; j++) {
            long at = ChainModel.addressOf(w.buffers(), false, skip + j);
            assertEquals(m.readU8(at), got[j], "reader returned a byte from somewhere else");
        }
        assertEquals(skip + n, r.position());
    }

    private boolean applyWriter(ChainWriter writer, Walk w, List<WriterOp> ops) {
        assertEquals(w.bytes(true), writer.remaining());
        ChainWriter cur = writer;
        long pos = 0;
        boolean wrote = false;
        for (WriterOp op : ops) {
            long left = cur.remaining();
            long n = Math.min(op.n(), left);
            switch (op.kind()) {
                case SKIP -> cur.skip(n);
                case BYTES -> {
                    n = Math.min(n, 4096);
                    byte[] b = new byte[(int) n];
                    for (int j = 0; j < n; j++) {
                        b[j] = nextPattern();
                    }
                    cur.write(b, 0, (int) n);
                    allow(w, pos, b);
                    wrote |= n > 0;
                }
                case U8 -> {
                    if (left == 0) {
                        continue;
                    }
                    n = 1;
                    byte v = nextPattern();
                    cur.writeU8(v);
                    allow(w, pos, new byte[] {v});
                    wrote = true;
                }
                case ZEROES -> {
                    n = Math.min(n, 4096);
                    cur.writeZeroes(n);
                    allow(w, pos, new byte[(int) n]);
                    wrote |= n > 0;
                }
                case VIEWS -> {
                    n = Math.min(n, 4096);
                    ByteBuffer[] views = cur.views(n);
                    byte[] b = new byte[(int) n];
                    int k = 0;
                    for (ByteBuffer v : views) {
                        while (v.hasRemaining()) {
                            b[k] = nextPattern();
                            v.put(b[k++]);
                        }
                    }
                    assertEquals(n, k, "views cover exactly the requested bytes");
                    allow(w, pos, b);
                    wrote |= n > 0;
                }
                case SPLIT -> {
                    ChainWriter tail = cur.splitAt(n);
                    assertEquals(n, cur.remaining());
                    assertEquals(left - n, tail.remaining());
                    cur = tail;
                }
            }
            pos += n;
        }
        return wrote;
    }

    private byte nextPattern() {
        pattern = pattern * 0x343fd + 0x269ec3;
        return (byte) (pattern >>> 16);
    }

    private void allow(Walk w, long pos, byte[] b) {
        for (int j = 0; j < b.length; j++) {
            fm.allow(ChainModel.addressOf(w.buffers(), true, pos + j), b[j]);
        }
    }

    private void push(VirtioQueueInput.Push p) {
        if (inFlight.isEmpty()) {
            return;
        }
        int head = inFlight.remove(Math.floorMod(p.pick(), inFlight.size()));
        inFlightHeads.clear(head);
        int before = q.nextUsed();
        q.pushUsed(head, p.len());
        if (broken) {
            assertEquals(before, q.nextUsed(), "a broken queue publishes nothing");
            return;
        }
        int expected = (before + 1) & 0xffff;
        assertEquals(expected, q.nextUsed());
        assertEquals(expected, memUsedIdx(), "used.idx published");
        long elem = in.used() + 4 + 8L * (before & mask);
        assertEquals(head, m.readU32(elem), "used element id");
        assertEquals(p.len(), m.readU32(elem + 4), "used element len");
        pushedSinceCheck++;
    }

    private void needsNotification() {
        boolean r = q.needsNotification();
        if (broken || pushedSinceCheck == 0) {
            assertFalse(r, "no notification without new used entries");
            return;
        }
        pushedSinceCheck = 0;
        boolean expected;
        if (!in.eventIdx()) {
            // 2.7.7.2 without EVENT_IDX: flags 0 MUST notify; flags 1 SHOULD NOT (the queue suppresses).
            expected = (m.readU16(in.avail()) & 1) == 0;
        } else {
            // 2.7.7.2 with EVENT_IDX: notify when used idx passed used_event since the last check (the first
            // check after creation notifies unconditionally, as QEMU's signalled_used_valid).
            int usedEvent = m.readU16(in.avail() + 4 + 2L * size) & 0xffff;
            int now = q.nextUsed();
            expected = !signalledValid || needEvent(usedEvent, now, signalled);
            signalled = now;
            signalledValid = true;
        }
        assertEquals(expected, r, "section 2.7.7.2 notification decision");
    }

    private void enableNotification() {
        boolean r = q.enableNotification();
        if (broken) {
            assertFalse(r);
            return;
        }
        if (in.eventIdx()) {
            // 2.7.10.2: avail_event names the next entry the device will look at.
            assertEquals(q.nextAvail(), m.readU16(in.used() + 4 + 8L * size) & 0xffff);
        } else {
            assertEquals(0, m.readU16(in.used()) & 0xffff, "used.flags cleared");
        }
        if (!r) {
            assertEquals(q.nextAvail(), memAvailIdx(), "enableNotification() missed new entries");
        }
    }

    private void disableNotification() {
        q.disableNotification();
        if (!broken && !in.eventIdx()) {
            assertEquals(1, m.readU16(in.used()) & 0xffff, "used.flags = VIRTQ_USED_F_NO_NOTIFY");
        } else if (!broken) {
            // 2.7.10: avail_event one behind the next entry the device takes, behind all the driver may publish.
            assertEquals((q.nextAvail() - 1) & 0xffff, m.readU16(in.used() + 4 + 8L * size) & 0xffff,
                    "avail_event behind the driver's entries");
        }
    }

    private void hasAvailable() {
        boolean r = q.hasAvailable();
        if (broken) {
            assertFalse(r);
        } else if (!r) {
            assertEquals(q.nextAvail(), memAvailIdx(), "hasAvailable() missed new entries");
        }
    }
}
