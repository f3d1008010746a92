package io.kickplug.virtio.fuzz;

import static io.kickplug.virtio.fuzz.FuzzMemory.*;

import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.virtio.fuzz.VirtioQueueInput.Desc;
import io.kickplug.virtio.fuzz.VirtioQueueInput.Op;
import io.kickplug.virtio.fuzz.VirtioQueueInput.Table;
import io.kickplug.virtio.fuzz.VirtioQueueInput.WriterKind;
import io.kickplug.virtio.fuzz.VirtioQueueInput.WriterOp;
import io.kickplug.virtio.testkit.RawRing;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Builders;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/** Generators for {@link VirtioQueueInput}: mostly plausible rings with hostile details. */
final class VirtioQueueInputs {
    private VirtioQueueInputs() {
    }

    private static final int NEXT = RawRing.NEXT;
    private static final int WRITE = RawRing.WRITE;
    private static final int INDIRECT = RawRing.INDIRECT;

    /** Powers of two most of the time; sometimes sizes that section 2.7 forbids. */
    static Arbitrary<Integer> sizes(int maxValid) {
        int maxShift = 31 - Integer.numberOfLeadingZeros(maxValid);
        return Arbitraries.frequencyOf(
                Tuple.of(40, Arbitraries.integers().between(0, Math.min(maxShift, 4)).map(s -> 1 << s)),
                Tuple.of(20, Arbitraries.integers().between(0, maxShift).map(s -> 1 << s)),
                Tuple.of(2, Arbitraries.of(0, 3, 6, 100, 65536, 32768, -1)));
    }

    /** Guest addresses: inside each region, across boundaries, in the holes, past the end, near 2^64. */
    static Arbitrary<Long> addresses() {
        return Arbitraries.frequencyOf(
                Tuple.of(30, Arbitraries.longs().between(A, A_END - 1)),
                Tuple.of(10, Arbitraries.longs().between(B - 64, C_END + 64)),
                Tuple.of(8, Arbitraries.longs().between(D - 64, D + 0x20000)),
                Tuple.of(4, Arbitraries.longs().between(D_END - 0x20000, D_END + 64)),
                Tuple.of(4, Arbitraries.longs().between(A_END - 64, B + 64)),
                Tuple.of(3, Arbitraries.longs().between(-0x10000L, -1L)),
                Tuple.of(2, Arbitraries.longs()));
    }

    /** Unsigned 32-bit lengths, 0 and 0xffffffff included. */
    static Arbitrary<Long> lengths() {
        return Arbitraries.frequencyOf(
                Tuple.of(8, Arbitraries.just(0L)),
                Tuple.of(30, Arbitraries.longs().between(1, 64)),
                Tuple.of(15, Arbitraries.longs().between(1, 4096)),
                Tuple.of(8, Arbitraries.integers().between(1, 8).map(k -> 16L * k)),
                Tuple.of(5, Arbitraries.just(0xffffffffL)),
                Tuple.of(4, Arbitraries.longs().between(0xffff_0000L, 0xffff_ffffL)),
                Tuple.of(3, Arbitraries.longs().between(0, 0xffff_ffffL)));
    }

    static Arbitrary<Integer> flags() {
        return Arbitraries.frequencyOf(
                Tuple.of(40, Arbitraries.of(0, NEXT, WRITE, NEXT | WRITE)),
                Tuple.of(10, Arbitraries.of(INDIRECT, INDIRECT | WRITE, INDIRECT | NEXT)),
                Tuple.of(4, Arbitraries.integers().between(0, 0xffff)));
    }

    static Arbitrary<Integer> nexts(int size) {
        return Arbitraries.frequencyOf(
                Tuple.of(30, Arbitraries.integers().between(0, Math.max(0, size - 1))),
                Tuple.of(3, Arbitraries.integers().between(size, size + 2)),
                Tuple.of(2, Arbitraries.integers().between(0, 0xffff)));
    }

    /**
     * Descriptors: three in four well-formed (in memory, a sensible length, next usually the following
     * entry), one in four hostile (any address, length, flags and next).
     */
    static Arbitrary<Desc> descs(int nextRange) {
        return Arbitraries.frequencyOf(Tuple.of(3, saneDescs(nextRange)), Tuple.of(1, hostileDescs(nextRange)));
    }

    static Arbitrary<Desc> hostileDescs(int nextRange) {
        Arbitrary<Integer> tableRef = Arbitraries.frequencyOf(
                Tuple.of(6, Arbitraries.just(-1)),
                Tuple.of(1, Arbitraries.integers().between(0, 7)));
        Arbitrary<Long> len = Arbitraries.frequencyOf(Tuple.of(6, lengths()), Tuple.of(1, Arbitraries.just(-1L)));
        return Combinators.combine(addresses(), len, flags(), nexts(nextRange), tableRef).as(Desc::new);
    }

    static Arbitrary<Desc> saneDescs(int nextRange) {
        Arbitrary<long[]> buffer = Arbitraries.frequencyOf(
                Tuple.of(10, Combinators.combine(Arbitraries.longs().between(A, A_END - 4097),
                        Arbitraries.longs().between(0, 512)).as((a, l) -> new long[] {a, l})),
                Tuple.of(4, Combinators.combine(Arbitraries.longs().between(B, B + 4095),
                        Arbitraries.longs().between(0, 4096)).as((a, l) -> new long[] {a, l})),
                Tuple.of(2, Combinators.combine(Arbitraries.longs().between(D, D + D_CHUNK),
                        Arbitraries.of(1L, 512L, 4096L, 0x8000_0000L, 0xffff_ffffL)).as((a, l) -> new long[] {a, l})));
        Arbitrary<Integer> flags = Arbitraries.frequencyOf(
                Tuple.of(3, Arbitraries.just(NEXT)), Tuple.of(2, Arbitraries.just(NEXT | WRITE)),
                Tuple.of(2, Arbitraries.just(0)), Tuple.of(2, Arbitraries.just(WRITE)));
        // next -1: the following entry of the same table.
        Arbitrary<Integer> next = Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.just(-1)),
                Tuple.of(2, Arbitraries.integers().between(0, Math.max(0, nextRange - 1))));
        Arbitrary<Desc> plain = Combinators.combine(buffer, flags, next)
                .as((b, f, n) -> new Desc(b[0], b[1], f, n, -1));
        Arbitrary<Desc> toTable = Arbitraries.integers().between(0, 7)
                .map(k -> new Desc(0, -1, INDIRECT, 0, k));
        return Arbitraries.frequencyOf(Tuple.of(8, plain), Tuple.of(1, toTable));
    }

    static Arbitrary<Table> tables() {
        Arbitrary<Long> where = Arbitraries.frequencyOf(
                Tuple.of(6, addresses().map(a -> a & ~15L)),
                Tuple.of(1, addresses()));
        return Combinators.combine(where, Arbitraries.integers().between(1, 9).flatMap(
                n -> descs(n).list().ofMinSize(0).ofMaxSize(n))).as(Table::new);
    }

    static Arbitrary<WriterOp> writerOps() {
        return Combinators.combine(Arbitraries.of(WriterKind.class), Arbitraries.frequencyOf(
                Tuple.of(10, Arbitraries.longs().between(0, 32)),
                Tuple.of(3, Arbitraries.longs().between(0, 4096)),
                Tuple.of(1, Arbitraries.longs().between(0, 0xffff_ffffL)))).as(WriterOp::new);
    }

    static Arbitrary<Op> ops(int size) {
        int s = Math.max(1, size);
        Arbitrary<Op> pop = Combinators.combine(
                Arbitraries.frequencyOf(Tuple.of(5, Arbitraries.longs().between(0, 16)),
                        Tuple.of(1, Arbitraries.longs().between(0, 0xffff_ffffL))),
                Arbitraries.integers().between(0, 64), writerOps().list().ofMaxSize(4))
                .as(VirtioQueueInput.Pop::new);
        Arbitrary<Op> push = Combinators.combine(Arbitraries.integers().between(0, 1000),
                Arbitraries.frequencyOf(Tuple.of(5, Arbitraries.integers().between(0, 64)),
                        Tuple.of(1, Arbitraries.integers()))).as(VirtioQueueInput.Push::new);
        Arbitrary<Op> publish = Arbitraries.frequencyOf(
                Tuple.of(20, Arbitraries.integers().between(1, Math.min(4, s))),
                Tuple.of(3, Arbitraries.just(0)),
                Tuple.of(1, Arbitraries.integers().between(s - 1, s + 2)),
                Tuple.of(1, Arbitraries.integers().between(0, 0xffff))).map(VirtioQueueInput.Publish::new);
        Arbitrary<Op> setEntry = Combinators.combine(Arbitraries.integers().between(0, 0xffff), nexts(s))
                .as(VirtioQueueInput.SetAvailEntry::new);
        Arbitrary<Op> setFlags = Arbitraries.frequencyOf(Tuple.of(5, Arbitraries.of(0, 1)),
                Tuple.of(1, Arbitraries.integers().between(0, 0xffff))).map(VirtioQueueInput.SetAvailFlags::new);
        Arbitrary<Op> setEvent = Arbitraries.integers().between(0, 0xffff).map(VirtioQueueInput.SetUsedEvent::new);
        return Arbitraries.frequencyOf(
                Tuple.of(30, pop),
                Tuple.of(20, push),
                Tuple.of(8, Arbitraries.just(new VirtioQueueInput.NeedsNotification())),
                Tuple.of(5, Arbitraries.just(new VirtioQueueInput.EnableNotification())),
                Tuple.of(5, Arbitraries.just(new VirtioQueueInput.DisableNotification())),
                Tuple.of(5, Arbitraries.just(new VirtioQueueInput.HasAvailable())),
                Tuple.of(12, publish),
                Tuple.of(5, setEntry),
                Tuple.of(3, setFlags),
                Tuple.of(3, setEvent));
    }

    /** Ring placement: mostly a contiguous layout in A or across B/C, sometimes parts anywhere. */
    private static Arbitrary<long[]> layouts(int size) {
        int s = size > 0 && size <= 32768 ? size : 1;
        long bytes = QueueLayout.contiguousBytes(s);
        Arbitrary<long[]> contiguousA = bytes <= A_END - A
                ? Arbitraries.longs().between(A, A_END - bytes).map(b -> contiguous(s, b & ~15L))
                : Arbitraries.just(contiguous(s, A));
        Arbitrary<long[]> contiguousBC = bytes <= C_END - B
                ? Arbitraries.longs().between(B, C_END - bytes).map(b -> contiguous(s, b & ~15L))
                : Arbitraries.just(contiguous(s, B));
        Arbitrary<Long> partAddress = Arbitraries.frequencyOf(
                Tuple.of(10, Arbitraries.longs().between(A, A_END - 1)),
                Tuple.of(4, Arbitraries.longs().between(B, C_END - 1)),
                Tuple.of(1, Arbitraries.longs().between(A_END, B - 1)),
                Tuple.of(1, Arbitraries.longs().between(-0x1000L, -1L)));
        Arbitrary<long[]> aligned = Combinators.combine(partAddress, partAddress, partAddress)
                .as((d, a, u) -> new long[] {d & ~15L, a & ~1L, u & ~3L});
        Arbitrary<long[]> anyParts = Combinators.combine(partAddress, partAddress, partAddress)
                .as((d, a, u) -> new long[] {d, a, u});
        return Arbitraries.frequencyOf(Tuple.of(50, contiguousA), Tuple.of(15, contiguousBC), Tuple.of(8, aligned),
                Tuple.of(2, anyParts));
    }

    private static long[] contiguous(int size, long base) {
        QueueLayout l = QueueLayout.contiguous(size, base);
        return new long[] {l.descTable(), l.availRing(), l.usedRing()};
    }

    /** The whole input; {@code maxSize} is the largest valid queue size generated. */
    static Arbitrary<VirtioQueueInput> inputs(int maxSize, int maxOps) {
        // One arbitrary per queue size, built once: rebuilding them inside flatMap for every try made
        // generation several times slower.
        java.util.Map<Integer, Arbitrary<VirtioQueueInput>> perSize = new java.util.concurrent.ConcurrentHashMap<>();
        return sizes(maxSize).flatMap(size -> perSize.computeIfAbsent(size, s -> forSize(s, maxOps)));
    }

    private static Arbitrary<VirtioQueueInput> forSize(int size, int maxOps) {
        {
            int s = size > 0 ? Math.min(size, 64) : 1;
            Arbitrary<Integer> availIdx = Arbitraries.frequencyOf(Tuple.of(20, Arbitraries.just(0)),
                    Tuple.of(10, Arbitraries.integers().between(1, Math.min(4, s))),
                    Tuple.of(1, Arbitraries.integers().between(0, 0xffff)));
            Arbitrary<Integer> head = nexts(s);
            return Builders.withBuilder(() -> new Partial(size))
                    .use(layouts(size)).inSetter((p, l) -> p.layout = l)
                    // bit 0 EVENT_IDX (1 in 2), bit 1 INDIRECT_DESC (3 in 4)
                    .use(Arbitraries.integers().between(0, 7).map(f -> (f & 1) | (f >= 2 ? 2 : 0)))
                    .inSetter((p, f) -> p.features = f)
                    .use(descs(s).list().ofMaxSize(Math.min(s, 48))).inSetter((p, d) -> p.descs = d)
                    .use(tables().list().ofMaxSize(3)).inSetter((p, t) -> p.tables = t)
                    .use(head.list().ofMaxSize(Math.min(s, 24))).inSetter((p, h) -> p.avail = h)
                    .use(availIdx).inSetter((p, i) -> p.availIdx = i)
                    .use(Arbitraries.frequencyOf(Tuple.of(4, Arbitraries.just(0)), Tuple.of(1, Arbitraries.just(1))))
                    .inSetter((p, f) -> p.availFlags = f)
                    .use(Arbitraries.integers().between(0, 0xffff)).inSetter((p, e) -> p.usedEvent = e)
                    .use(ops(s).list().ofMaxSize(maxOps)).inSetter((p, o) -> p.ops = o)
                    .build(Partial::build);
        }
    }

    /** Mutable holder for {@link Builders}: each combinator sets one field ({@code inSetter}). */
    private static final class Partial {
        final int size;
        long[] layout;
        int features;
        List<Desc> descs;
        List<Table> tables;
        List<Integer> avail;
        int availIdx;
        int availFlags;
        int usedEvent;
        List<Op> ops;

        Partial(int size) {
            this.size = size;
        }

        VirtioQueueInput build() {
            return new VirtioQueueInput(size, layout[0], layout[1], layout[2], (features & 1) != 0,
                    (features & 2) != 0, descs, tables, avail, availIdx, availFlags, usedEvent, ops);
        }
    }
}
