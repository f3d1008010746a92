package io.kickplug.blk.fake;

import static io.kickplug.api.virtio.BufferSpec.readable;
import static io.kickplug.api.virtio.BufferSpec.writable;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.guest.virtio.RawRingGuest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Writes a pattern over a disk through several queues of an {@link RawRingGuest}, each queue with several
 * requests in flight, then reads it back and compares.
 */
public final class PatternIo {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private PatternIo() {
    }

    /** The pattern block {@code block} of a run with {@code seed}. */
    public static byte[] block(long seed, long block, int size) {
        byte[] bytes = new byte[size];
        new Random(seed * 1_000_003L + block).nextBytes(bytes);
        return bytes;
    }

    /** Writes blocks {@code 0..blocks-1}; request i goes to queue {@code i % queues}. */
    public static void write(RawRingGuest guest, int queues, int blocks, int blockSize, int depth, long seed)
            throws InterruptedException {
        run(guest, queues, blocks, blockSize, depth, seed, true);
    }

    /** Reads blocks back; returns the numbers of the blocks that differ from the pattern. */
    public static List<Integer> verify(RawRingGuest guest, int queues, int blocks, int blockSize, int depth, long seed)
            throws InterruptedException {
        return run(guest, queues, blocks, blockSize, depth, seed, false);
    }

    private record Pending(int block, long data, long status) {
    }

    private static List<Integer> run(RawRingGuest guest, int queues, int blocks, int blockSize, int depth, long seed,
            boolean write) throws InterruptedException {
        List<Integer> bad = new ArrayList<>();
        long sectorsPerBlock = blockSize / VirtioBlk.SECTOR_SIZE;
        // Buffers are reused per slot so guest memory does not run out.
        long[] data = new long[queues * depth];
        long[] status = new long[queues * depth];
        long[] header = new long[queues * depth];
        for (int i = 0; i < data.length; i++) {
            data[i] = guest.alloc(blockSize, 16);
            status[i] = guest.alloc(1, 1);
            header[i] = guest.alloc(VirtioBlk.HEADER_SIZE, 16);
        }
        int next = 0;
        while (next < blocks) {
            // One round: up to `depth` requests on every queue, then collect them all.
            List<List<Integer>> round = new ArrayList<>();
            for (int q = 0; q < queues; q++) {
                round.add(new ArrayList<>());
            }
            for (int slot = 0; slot < depth && next < blocks; slot++) {
                for (int q = 0; q < queues && next < blocks; q++) {
                    int b = next++;
                    int s = q * depth + slot;
                    guest.memory().write(header[s], java.nio.ByteBuffer.allocate(16)
                            .order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(write ? VirtioBlk.T_OUT : VirtioBlk.T_IN)
                            .putInt(0).putLong(b * sectorsPerBlock).flip());
                    guest.memory().fill(status[s], 1, (byte) 0xFF);
                    if (write) {
                        byte[] pattern = block(seed, b, blockSize);
                        guest.memory().write(data[s], pattern, 0, blockSize);
                        guest.submit(q, List.of(readable(header[s], 16), readable(data[s], blockSize),
                                writable(status[s], 1)), false, new Pending(b, data[s], status[s]));
                    } else {
                        guest.memory().fill(data[s], blockSize, (byte) 0);
                        guest.submit(q, List.of(readable(header[s], 16), writable(data[s], blockSize),
                                writable(status[s], 1)), false, new Pending(b, data[s], status[s]));
                    }
                    round.get(q).add(b);
                }
            }
            for (int q = 0; q < queues; q++) {
                for (int n = round.get(q).size(); n > 0; n--) {
                    UsedBuffer used = guest.awaitUsed(q, TIMEOUT);
                    Pending p = (Pending) used.token();
                    if (guest.get(p.status(), 1)[0] != VirtioBlk.S_OK) {
                        throw new AssertionError((write ? "write" : "read") + " of block " + p.block()
                                + " ended with status " + guest.get(p.status(), 1)[0]);
                    }
                    if (!write && !java.util.Arrays.equals(block(seed, p.block(), blockSize),
                            guest.get(p.data(), blockSize))) {
                        bad.add(p.block());
                    }
                }
            }
        }
        return bad;
    }
}
