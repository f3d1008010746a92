package io.kickplug.nbd;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection's commands in flight, by cookie. A cookie is the command's slot in the table (low 32 bits) and a
 * generation (high 32 bits), so a reply whose cookie names a slot that was reused since (a late or forged reply)
 * matches nothing (proto.md: the cookie is the client's; the server echoes it).
 */
final class InFlightTable {

    private final ReentrantLock lock = new ReentrantLock();
    /** Commands in flight by slot; under lock. */
    private Command[] table = new Command[256];
    private int[] freeSlots = new int[256];
    private int freeCount;
    private long generation;
    private int inFlight;

    InFlightTable() {
        for (int i = 0; i < table.length; i++) {
            freeSlots[freeCount++] = table.length - 1 - i;
        }
    }

    /** Gives {@code c} a fresh cookie and records it as sent at {@code now}; the table grows when full. */
    void register(Command c, long now) {
        lock.lock();
        try {
            if (freeCount == 0) {
                int old = table.length;
                table = Arrays.copyOf(table, old * 2);
                freeSlots = Arrays.copyOf(freeSlots, old * 2);
                for (int i = old * 2 - 1; i >= old; i--) {
                    freeSlots[freeCount++] = i;
                }
            }
            int slot = freeSlots[--freeCount];
            generation++;
            c.cookie = (generation << 32) | slot;
            c.sentNanos = now;
            table[slot] = c;
            inFlight++;
        } finally {
            lock.unlock();
        }
    }

    /** The command in flight under {@code cookie}, or {@code null} (no such slot, or a reused one). */
    Command lookup(long cookie) {
        lock.lock();
        try {
            int slot = (int) cookie;
            if (slot < 0 || slot >= table.length) {
                return null;
            }
            Command c = table[slot];
            return c != null && c.cookie == cookie ? c : null;
        } finally {
            lock.unlock();
        }
    }

    /** Takes {@code c}, found by {@link #lookup}, out of the table. */
    void remove(Command c) {
        lock.lock();
        try {
            int slot = (int) c.cookie;
            table[slot] = null;
            freeSlots[freeCount++] = slot;
            inFlight--;
        } finally {
            lock.unlock();
        }
    }

    /** Empties the table (the connection failed): its commands, oldest send first. */
    List<Command> drain() {
        List<Command> orphans = new ArrayList<>();
        lock.lock();
        try {
            for (int i = 0; i < table.length; i++) {
                if (table[i] != null) {
                    orphans.add(table[i]);
                    table[i] = null;
                    freeSlots[freeCount++] = i;
                }
            }
            inFlight = 0;
        } finally {
            lock.unlock();
        }
        orphans.sort((a, b) -> Long.compare(a.sentNanos, b.sentNanos));
        return orphans;
    }

    /** When the oldest command in flight was sent (System.nanoTime), or {@link Long#MAX_VALUE} when none is. */
    long oldestSentNanos() {
        long oldest = Long.MAX_VALUE;
        lock.lock();
        try {
            if (inFlight == 0) {
                return oldest;
            }
            for (Command c : table) {
                if (c != null && c.sentNanos < oldest) {
                    oldest = c.sentNanos;
                }
            }
        } finally {
            lock.unlock();
        }
        return oldest;
    }
}
