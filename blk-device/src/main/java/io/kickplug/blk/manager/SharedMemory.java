package io.kickplug.blk.manager;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.memory.MemoryRegion;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Named shared-memory files (tmpfs) for what must outlive a bundle update: a memory disk's bytes
 * ({@code .disk}) and the simulated guest's memory of the disk ({@code .ram}: its rings, request headers and
 * data buffers). No Kickplug bundle owns them: the block-device bundle's next version opens the same names
 * again, the guest keeps its mapping, and both see the same bytes (MAP_SHARED). Why files and not a bundle
 * that is never updated: every Kickplug bundle but api may be updated, and api holds no state.
 *
 * <p>Names carry the process id ({@code kickplug-<pid>-<disk>.disk}), so two runtimes never share a disk and
 * the files of a process that died are found and deleted by {@link #sweepDead}. The owner deletes a disk's
 * files when the disk is detached and when the runtime stops; a bundle update keeps them.
 */
public final class SharedMemory {

    private static final String PREFIX = "kickplug-";
    /** Guest memory is mapped in chunks of 1 GiB (a MappedByteBuffer holds at most 2 GiB). */
    private static final long CHUNK = 1L << 30;

    private final Path dir;
    private final long pid;

    public SharedMemory(Path dir) {
        this(dir, ProcessHandle.current().pid());
    }

    SharedMemory(Path dir, long pid) {
        this.dir = dir;
        this.pid = pid;
    }

    /** {@code /dev/shm} when it is a writable directory (Linux), else empty. */
    public static Optional<SharedMemory> system() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? Optional.of(new SharedMemory(shm))
                : Optional.empty();
    }

    public Path dir() {
        return dir;
    }

    /** The file holding a memory disk's bytes. */
    public Path diskFile(String disk) {
        return dir.resolve(PREFIX + pid + "-" + disk + ".disk");
    }

    /** The file holding the guest memory of a disk. */
    public Path ramFile(String disk) {
        return dir.resolve(PREFIX + pid + "-" + disk + ".ram");
    }

    /**
     * Maps the disk's guest-memory file (created sparse, or found with its contents) as guest memory of
     * {@code size} bytes at guest address 0. It is unmapped when the last of its leases closes (take one at once:
     * memory never leased is left to the garbage collector).
     */
    public MappedGuestMemory mapGuestMemory(String disk, long size, GuestMemoryFactory factory) throws IOException {
        List<ByteBuffer> chunks = new ArrayList<>();
        List<MappedByteBuffer> mappings = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(ramFile(disk), StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            if (ch.size() < size) {
                ch.write(ByteBuffer.allocate(1), size - 1); // sparse: tmpfs allocates on first touch
            }
            for (long at = 0; at < size; at += CHUNK) {
                // The mapping stays valid after the channel closes (FileChannel.map).
                MappedByteBuffer chunk = ch.map(FileChannel.MapMode.READ_WRITE, at, Math.min(CHUNK, size - at));
                mappings.add(chunk);
                chunks.add(chunk);
            }
        }
        return new MappedGuestMemory(ramFile(disk).getFileName().toString(),
                factory.wrap(List.of(new MemoryRegion(0, size)), List.of(chunks)), mappings);
    }

    /** Deletes the disk's files; the bytes stay as long as somebody still maps them. */
    public void delete(String disk) throws IOException {
        Files.deleteIfExists(diskFile(disk));
        Files.deleteIfExists(ramFile(disk));
    }

    /** Deletes every file of this process. */
    public void deleteAll() throws IOException {
        deleteMatching(pidOfFile -> pidOfFile == pid);
    }

    /** Deletes the files of processes that no longer run; returns how many. */
    public int sweepDead() throws IOException {
        return deleteMatching(p -> p != pid && ProcessHandle.of(p).map(h -> !h.isAlive()).orElse(true));
    }

    private int deleteMatching(java.util.function.LongPredicate which) throws IOException {
        int n = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PREFIX + "*")) {
            for (Path f : files) {
                String name = f.getFileName().toString();
                if (!name.endsWith(".disk") && !name.endsWith(".ram")) {
                    continue;
                }
                int dash = name.indexOf('-', PREFIX.length());
                if (dash < 0) {
                    continue;
                }
                long owner;
                try {
                    owner = Long.parseLong(name.substring(PREFIX.length(), dash));
                } catch (NumberFormatException e) {
                    continue;
                }
                if (which.test(owner) && Files.deleteIfExists(f)) {
                    n++;
                }
            }
        }
        return n;
    }
}
