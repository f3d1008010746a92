package io.kickplug.blk.device;

import io.kickplug.api.blk.DiskException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Which I/O thread serves each virtqueue (QEMU's iothread-vq-mapping): an explicit list per I/O thread,
 * or round-robin when none is given.
 */
public final class QueueMapping {

    private final int[] threadOfQueue;
    private final int ioThreads;

    private QueueMapping(int[] threadOfQueue, int ioThreads) {
        this.threadOfQueue = threadOfQueue;
        this.ioThreads = ioThreads;
    }

    /**
     * Checks {@code mapping} (entry {@code i}: the queues of I/O thread {@code i}; every queue exactly once;
     * at most {@code ioThreads} entries) or, when it is empty or {@code null}, maps queue {@code q} to I/O
     * thread {@code q % ioThreads}.
     *
     * @throws DiskException with a one-line reason when the mapping is wrong
     */
    public static QueueMapping of(List<List<Integer>> mapping, int numQueues, int ioThreads) {
        if (numQueues < 1) {
            throw new DiskException("number of queues " + numQueues + " must be positive");
        }
        if (ioThreads < 1) {
            throw new DiskException("number of I/O threads " + ioThreads + " must be positive");
        }
        int[] thread = new int[numQueues];
        if (mapping == null || mapping.isEmpty()) {
            for (int q = 0; q < numQueues; q++) {
                thread[q] = q % ioThreads;
            }
            return new QueueMapping(thread, ioThreads);
        }
        if (mapping.size() > ioThreads) {
            throw new DiskException("queue mapping has entries for " + mapping.size() + " I/O threads, but the disk has "
                    + ioThreads);
        }
        Arrays.fill(thread, -1);
        for (int t = 0; t < mapping.size(); t++) {
            List<Integer> queues = mapping.get(t);
            if (queues == null) {
                throw new DiskException("queue mapping entry " + t + " is missing");
            }
            for (Integer q : queues) {
                if (q == null || q < 0 || q >= numQueues) {
                    throw new DiskException("queue mapping names queue " + q + " (I/O thread " + t
                            + "), but the disk has queues 0.." + (numQueues - 1));
                }
                if (thread[q] >= 0) {
                    throw new DiskException("queue mapping names queue " + q + " twice (I/O threads " + thread[q]
                            + " and " + t + ")");
                }
                thread[q] = t;
            }
        }
        for (int q = 0; q < numQueues; q++) {
            if (thread[q] < 0) {
                throw new DiskException("queue mapping leaves queue " + q + " without an I/O thread");
            }
        }
        return new QueueMapping(thread, ioThreads);
    }

    /** The I/O thread index of queue {@code q}. */
    public int threadOf(int q) {
        return threadOfQueue[q];
    }

    public int queues() {
        return threadOfQueue.length;
    }

    /** The effective mapping: entry {@code i} lists the queues of I/O thread {@code i}, ascending. */
    public List<List<Integer>> asLists() {
        List<List<Integer>> lists = new ArrayList<>();
        for (int t = 0; t < ioThreads; t++) {
            lists.add(new ArrayList<>());
        }
        for (int q = 0; q < threadOfQueue.length; q++) {
            lists.get(threadOfQueue[q]).add(q);
        }
        return lists.stream().map(List::copyOf).toList();
    }
}
