package io.kickplug.virtio.fuzz;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.packed.PackedDeviceQueue;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.statistics.Statistics;

/**
 * Structure-aware fuzzing of {@link PackedDeviceQueue} (VIRTIO 1.2 section 2.8), the packed counterpart of
 * {@link DeviceQueueFuzzTest}: a hostile driver writes random descriptors (addresses in and out of memory,
 * random lengths, buffer IDs, NEXT/WRITE/INDIRECT/AVAIL/USED bits), indirect tables and event suppression
 * structures, then a random sequence of device calls and driver stores is replayed. After every step:
 * <ul>
 * <li>nothing but {@link GuestFaultException} escapes, and after one the queue is broken and yields nothing;
 * <li>the device accepts exactly the chains {@link #model} (an independent reading of sections 2.8.1, 2.8.4,
 * 2.8.6, 2.8.7, 2.8.13, 2.8.17, 2.8.19) accepts, with the model's buffers, buffer ID and descriptor count;
 * <li>a push writes the used descriptor where the driver will look for it: the pushed ID, the written length
 * and AVAIL = USED = the used wrap counter (section 2.8.22);
 * <li>the device writes nothing but the descriptor ring and its own event suppression structure.
 * </ul>
 * {@code -Dkickplug.fuzz.tries=N} sets a long run.
 */
@AddLifecycleHook(FuzzTries.class)
class PackedQueueFuzzTest {
    static final long MEM = 0x4000;
    /** One guest memory for every input (allocating one per input costs more than the run), rewritten by each. */
    private static final OffHeapGuestMemory MEMORY = OffHeapGuestMemory.allocate(MEM);
    static final long DATA = 0x800;
    static final long TABLES = 0x3000;
    static final int NEXT = 1;
    static final int WRITE = 2;
    static final int INDIRECT = 4;
    static final int AVAIL = 1 << 7;
    static final int USED = 1 << 15;

    record Desc(long addr, int len, int id, int flags) {
    }

    sealed interface Op permits Pop, Push, Needs, Enable, Disable, Has, Rewrite, DriverEvent {
    }

    record Pop() implements Op {
    }

    record Push(int pick, int len) implements Op {
    }

    record Needs() implements Op {
    }

    record Enable() implements Op {
    }

    record Disable() implements Op {
    }

    record Has() implements Op {
    }

    /** The driver rewrites ring slot {@code slot % size} (a new buffer, or a stale one). */
    record Rewrite(int slot, Desc desc) implements Op {
    }

    record DriverEvent(int offWrap, int flags) implements Op {
    }

    record Input(int size, boolean indirect, boolean eventIdx, List<Desc> ring, List<List<Desc>> tables, List<Op> ops) {
    }

    private static Arbitrary<Long> addresses() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(8, Arbitraries.longs().between(DATA, DATA + 0x1000)),
                net.jqwik.api.Tuple.of(2, Arbitraries.of(TABLES, TABLES + 0x100, TABLES + 0x200)),
                net.jqwik.api.Tuple.of(1, Arbitraries.longs().between(MEM - 64, MEM + 64)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(0xffff_ffff_ffff_ff00L, 0L, 1L << 40)));
    }

    private static Arbitrary<Desc> descs(int size) {
        Arbitrary<Integer> lens = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, Arbitraries.integers().between(0, 64)),
                net.jqwik.api.Tuple.of(2, Arbitraries.of(16, 32, 48, 64)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(-1, 0x10000, 24)));
        Arbitrary<Integer> ids = Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(9, Arbitraries.integers().between(0, size - 1)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(size, 0xffff)));
        // Mostly plausible flags of the first lap, sometimes anything.
        Arbitrary<Integer> flags = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(7, Arbitraries.of(0, NEXT, WRITE, NEXT | WRITE, INDIRECT).map(f -> f | AVAIL)),
                net.jqwik.api.Tuple.of(2, Arbitraries.of(0, NEXT, WRITE).map(f -> f | USED)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 0xffff)));
        return Combinators.combine(addresses(), lens, ids, flags).as(Desc::new);
    }

    private static Arbitrary<Op> ops(int size) {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.just(new Pop())),
                net.jqwik.api.Tuple.of(5, Combinators.combine(Arbitraries.integers().between(0, 99),
                        Arbitraries.integers().between(0, 64)).as(Push::new)),
                net.jqwik.api.Tuple.of(2, Arbitraries.just(new Needs())),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new Enable())),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new Disable())),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(new Has())),
                net.jqwik.api.Tuple.of(2, Combinators.combine(Arbitraries.integers().between(0, 99), descs(size))
                        .as(Rewrite::new)),
                net.jqwik.api.Tuple.of(1, Combinators.combine(Arbitraries.integers().between(0, 0xffff),
                        Arbitraries.integers().between(0, 3)).as(DriverEvent::new)));
    }

    @Provide
    Arbitrary<Input> inputs() {
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(6, Arbitraries.integers().between(1, 12)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(16, 32))).flatMap(size -> Combinators.combine(
                        Arbitraries.of(true, true, false), Arbitraries.of(true, false),
                        descs(size).list().ofSize(size),
                        descs(size).list().ofMinSize(1).ofMaxSize(4).list().ofMaxSize(3),
                        ops(size).list().ofMinSize(1).ofMaxSize(40))
                .as((ind, ev, ring, tables, ops) -> new Input(size, ind, ev, ring, tables, ops)));
    }

    @Property(tries = 1000, edgeCases = EdgeCasesMode.NONE)
    void packedDeviceQueueSurvivesAnyRing(@ForAll("inputs") Input input) {
        Run run = new Run(input);
        run.run();
        Statistics.label("chains").collect(run.popped > 0 ? "popped" : "none");
        Statistics.label("faults").collect(run.broken ? "fault" : "no fault");
        Statistics.label("chains").coverage(c -> c.check("popped").percentage(p -> p >= 20));
        Statistics.label("faults").coverage(c -> c.check("fault").percentage(p -> p >= 10));
        FuzzTries.tick("packedDeviceQueueSurvivesAnyRing");
    }

    /** What the spec makes of the chain at (pos, wrap): its buffers, ID and ring descriptors, or a violation. */
    record Walk(String violation, List<long[]> buffers, int id, int descriptors) {
    }

    static Walk model(GuestMemory m, int size, int pos, boolean wrap, boolean indirect, BitSet inFlight) {
        List<long[]> bufs = new ArrayList<>();
        boolean seenWritable = false;
        long total = 0;
        int p = pos;
        boolean w = wrap;
        for (int n = 1; ; n++) {
            long d = 16L * p;
            int flags = m.readU16(d + 14) & 0xffff;
            boolean avail = (flags & AVAIL) != 0;
            boolean used = (flags & USED) != 0;
            if (n > 1 && !(avail == w && used != w)) {
                return new Walk("not available in its lap (2.8.1)", null, 0, 0);
            }
            long addr = m.readU64(d);
            long len = m.readU32(d + 8) & 0xffffffffL;
            int id = m.readU16(d + 12) & 0xffff;
            boolean last = (flags & NEXT) == 0;
            List<long[]> entries = new ArrayList<>();
            if ((flags & INDIRECT) != 0) {
                if (!last || n > 1 || !indirect) {
                    return new Walk("INDIRECT with NEXT, in a chain or not negotiated (2.8.19)", null, 0, 0);
                }
                if (len == 0 || len % 16 != 0) {
                    return new Walk("table length (2.8.19)", null, 0, 0);
                }
                if (!inside(addr, len)) {
                    return new Walk("table outside memory (2.8.7)", null, 0, 0);
                }
                for (int k = 0; k < len / 16; k++) {
                    int f = m.readU16(addr + 16L * k + 14) & 0xffff;
                    if ((f & ~WRITE) != 0) {
                        return new Walk("flags in a table (2.8.19)", null, 0, 0);
                    }
                    entries.add(new long[] {m.readU64(addr + 16L * k), m.readU32(addr + 16L * k + 8) & 0xffffffffL, f});
                }
            } else {
                entries.add(new long[] {addr, len, flags & WRITE});
            }
            if (last || (flags & INDIRECT) != 0) {
                if (id >= size) {
                    return new Walk("ID out of range (2.8.13)", null, 0, 0);
                }
                if (inFlight.get(id)) {
                    return new Walk("ID in flight (2.8.21)", null, 0, 0);
                }
            }
            for (long[] e : entries) {
                boolean writable = e[2] != 0;
                if (!writable && seenWritable) {
                    return new Walk("readable after writable (2.8.17)", null, 0, 0);
                }
                seenWritable |= writable;
                if (!inside(e[0], e[1])) {
                    return new Walk("buffer outside memory (2.8.4)", null, 0, 0);
                }
                total += e[1];
                if (total > (1L << 32)) {
                    return new Walk("longer than 2^32 (2.8.17)", null, 0, 0);
                }
                bufs.add(new long[] {e[0], e[1], e[2]});
            }
            if (last) {
                return new Walk(null, bufs, id, n);
            }
            if (n == size) {
                return new Walk("longer than the queue (2.8.17)", null, 0, 0);
            }
            if (++p == size) {
                p = 0;
                w = !w;
            }
        }
    }

    /** A buffer lies in guest memory; a zero-length one touches nothing and is accepted anywhere. */
    static boolean inside(long addr, long len) {
        return len == 0 || addr >= 0 && addr + len >= addr && addr + len <= MEM;
    }

    private static final class Run {
        final Input in;
        final OffHeapGuestMemory m = MEMORY;
        final int size;
        PackedDeviceQueue q;
        boolean broken;
        int popped;
        final BitSet inFlight = new BitSet();
        final List<Integer> inFlightIds = new ArrayList<>();
        final List<Integer> descsOf = new ArrayList<>();
        int usedPos;
        boolean usedWrap = true;
        byte[] before;

        Run(Input in) {
            this.in = in;
            this.size = in.size();
        }

        void writeDesc(long table, int k, Desc d) {
            m.writeU64(table + 16L * k, d.addr());
            m.writeU32(table + 16L * k + 8, d.len());
            m.writeU16(table + 16L * k + 12, (short) d.id());
            m.writeU16(table + 16L * k + 14, (short) d.flags());
        }

        void run() {
            // A fixed pattern everywhere, then the rings and tables.
            for (long a = 0; a < MEM; a += 8) {
                m.writeU64(a, a * 0x9e3779b97f4a7c15L);
            }
            for (int k = 0; k < size; k++) {
                writeDesc(0, k, in.ring().get(k));
            }
            for (int t = 0; t < in.tables().size(); t++) {
                List<Desc> table = in.tables().get(t);
                for (int k = 0; k < table.size(); k++) {
                    // Mostly table-legal flags (WRITE or none); the rest as generated.
                    Desc d = table.get(k);
                    int f = (d.flags() & 0x8000) != 0 ? d.flags() : d.flags() & WRITE;
                    writeDesc(TABLES + 0x100L * t, k, new Desc(d.addr(), d.len(), 0, f));
                }
            }
            QueueLayout layout = RingFormat.PACKED.layout(size, 0);
            long features = VirtioFeatures.RING_PACKED | (in.indirect() ? VirtioFeatures.RING_INDIRECT_DESC : 0)
                    | (in.eventIdx() ? VirtioFeatures.RING_EVENT_IDX : 0);
            q = new PackedDeviceQueue(m, 0, layout, features);
            before = snapshot();
            for (Op op : in.ops()) {
                step(op);
            }
        }

        byte[] snapshot() {
            byte[] b = new byte[(int) MEM];
            m.read(0, b, 0, b.length);
            return b;
        }

        /** The device wrote nothing outside the ring and its event suppression structure (and what the driver wrote). */
        void checkWrites(long driverFrom, long driverTo) {
            byte[] now = snapshot();
            long ringEnd = 16L * size + 8; // ring, driver area (4), device area (4)
            for (int a = 0; a < now.length; a++) {
                if (now[a] != before[a] && (a >= ringEnd || a >= 16L * size && a < 16L * size + 4)
                        && !(a >= driverFrom && a < driverTo)) {
                    fail("the device wrote at 0x" + Integer.toHexString(a));
                }
            }
            before = now;
        }

        void step(Op op) {
            long drvFrom = 0;
            long drvTo = 0;
            try {
                if (op instanceof Pop) {
                    pop();
                } else if (op instanceof Push p) {
                    push(p);
                } else if (op instanceof Needs) {
                    q.needsNotification();
                } else if (op instanceof Enable) {
                    q.enableNotification();
                } else if (op instanceof Disable) {
                    q.disableNotification();
                } else if (op instanceof Has) {
                    boolean has = q.hasAvailable();
                    if (!broken) {
                        int f = m.readU16(16L * (q.nextAvail() & 0x7fff) + 14) & 0xffff;
                        boolean w = (q.nextAvail() & 0x8000) != 0;
                        assertEquals(((f & AVAIL) != 0) == w && ((f & USED) != 0) != w, has);
                    }
                } else if (op instanceof Rewrite r) {
                    int slot = r.slot() % size;
                    writeDesc(0, slot, r.desc());
                    drvFrom = 16L * slot;
                    drvTo = drvFrom + 16;
                } else if (op instanceof DriverEvent e) {
                    m.writeU16(16L * size, (short) e.offWrap());
                    m.writeU16(16L * size + 2, (short) e.flags());
                    drvFrom = 16L * size;
                    drvTo = drvFrom + 4;
                }
            } catch (GuestFaultException e) {
                assertNotNull(e.section());
                assertTrue(q.isBroken(), () -> "a fault must break the queue: " + e.getMessage());
                broken = true;
                assertNull(q.pop());
                assertFalse(q.hasAvailable());
            }
            checkWrites(drvFrom, drvTo);
        }

        void pop() {
            int at = q.nextAvail();
            int pos = at & 0x7fff;
            boolean wrap = (at & 0x8000) != 0;
            int f = m.readU16(16L * pos + 14) & 0xffff;
            boolean available = ((f & AVAIL) != 0) == wrap && ((f & USED) != 0) != wrap;
            Walk w = available && !broken ? model(m, size, pos, wrap, in.indirect(), inFlight) : null;
            DescriptorChain c;
            try {
                c = q.pop();
            } catch (GuestFaultException e) {
                assertTrue(w != null && w.violation() != null, () -> "fault on an acceptable chain: " + e.getMessage());
                throw e;
            }
            if (broken || !available) {
                assertNull(c);
                return;
            }
            assertNull(w.violation(), () -> "accepted a chain the spec forbids: " + w.violation());
            assertNotNull(c);
            popped++;
            assertEquals(w.id(), c.head());
            assertEquals(w.buffers().size(), c.bufferCount());
            long readable = 0;
            long writable = 0;
            for (long[] b : w.buffers()) {
                if (b[2] != 0) {
                    writable += b[1];
                } else {
                    readable += b[1];
                }
            }
            assertEquals(readable, c.readableBytes());
            assertEquals(writable, c.writableBytes());
            // The reader returns the model's first readable bytes.
            if (readable > 0) {
                long[] first = w.buffers().get(0);
                int n = (int) Math.min(8, first[1]);
                // n == 0: a zero-length first buffer, possibly at the end of guest memory (address 0x4000 of
                // 0x4000), where the model cannot read even nothing; the byte counts above cover it.
                if (n > 0) {
                    byte[] got = new byte[n];
                    byte[] want = new byte[n];
                    ChainReader r = c.reader();
                    r.read(got, 0, n);
                    m.read(first[0], want, 0, n);
                    assertArrayEquals(want, got);
                }
            }
            int expectNext = (pos + w.descriptors()) % size | ((pos + w.descriptors() >= size) != wrap ? 0x8000 : 0);
            assertEquals(expectNext, q.nextAvail());
            inFlight.set(c.head());
            inFlightIds.add(c.head());
            descsOf.add(w.descriptors());
        }

        void push(Push p) {
            if (inFlightIds.isEmpty()) {
                return;
            }
            int k = p.pick() % inFlightIds.size();
            int id = inFlightIds.remove(k);
            int descs = descsOf.remove(k);
            inFlight.clear(id);
            q.pushUsed(id, p.len());
            if (broken) {
                return;
            }
            long d = 16L * usedPos;
            assertEquals(id, m.readU16(d + 12) & 0xffff);
            assertEquals(p.len(), m.readU32(d + 8));
            assertEquals(usedWrap ? AVAIL | USED : 0, m.readU16(d + 14) & (AVAIL | USED));
            usedPos += descs;
            if (usedPos >= size) {
                usedPos -= size;
                usedWrap = !usedWrap;
            }
            assertEquals(usedPos | (usedWrap ? 0x8000 : 0), q.nextUsed());
        }
    }
}
