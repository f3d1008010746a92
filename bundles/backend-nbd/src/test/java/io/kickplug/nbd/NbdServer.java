package io.kickplug.nbd;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A real NBD server (qemu-nbd or nbdkit) started by a test on a Unix socket of its own. */
final class NbdServer implements AutoCloseable {

    private final List<String> command;
    private final Path socket;
    private final Path log;
    private Process process;

    private NbdServer(List<String> command, Path socket, Path log) {
        this.command = command;
        this.socket = socket;
        this.log = log;
    }

    static boolean installed(String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/bin:/usr/sbin").split(":")) {
            if (Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    /** qemu-nbd exporting a raw file as {@code export}, persistent, shared by up to 8 clients (multi-conn). */
    static NbdServer qemuNbd(Path dir, Path image, String export) throws IOException, InterruptedException {
        Path socket = dir.resolve("qemu-nbd.sock");
        List<String> cmd = List.of("qemu-nbd", "-t", "-e", "8", "-f", "raw", "--cache=writeback", "-k",
                socket.toString(), "-x", export, image.toString());
        return new NbdServer(new ArrayList<>(cmd), socket, dir.resolve("qemu-nbd.log")).start();
    }

    /** As {@link #qemuNbd}, tracing {@code event} (QEMU's trace events) into its log. */
    static NbdServer qemuNbdTraced(Path dir, Path image, String export, String event)
            throws IOException, InterruptedException {
        Path socket = dir.resolve("qemu-nbd.sock");
        List<String> cmd = List.of("qemu-nbd", "-t", "-e", "8", "-f", "raw", "--cache=writeback", "-k",
                socket.toString(), "-x", export, "--trace", event, image.toString());
        return new NbdServer(new ArrayList<>(cmd), socket, dir.resolve("qemu-nbd.log")).start();
    }

    /** What the server printed so far. */
    String log() throws IOException {
        return Files.readString(log);
    }

    /** nbdkit's memory plugin: {@code size} bytes of RAM, any export name. */
    static NbdServer nbdkitMemory(Path dir, String size) throws IOException, InterruptedException {
        Path socket = dir.resolve("nbdkit.sock");
        List<String> cmd = List.of("nbdkit", "-f", "--exit-with-parent", "-U", socket.toString(), "memory", size);
        return new NbdServer(new ArrayList<>(cmd), socket, dir.resolve("nbdkit.log")).start();
    }

    /**
     * nbdkit's memory plugin behind its blocksize-policy filter: it announces a maximum payload of
     * {@code maximum} bytes (NBD_INFO_BLOCK_SIZE) and fails any longer request.
     */
    static NbdServer nbdkitMemoryMaxPayload(Path dir, String size, int maximum) throws IOException, InterruptedException {
        Path socket = dir.resolve("nbdkit-max.sock");
        List<String> cmd = List.of("nbdkit", "-f", "--exit-with-parent", "-U", socket.toString(),
                "--filter=blocksize-policy", "memory", size, "blocksize-maximum=" + maximum,
                "blocksize-error-policy=error");
        return new NbdServer(new ArrayList<>(cmd), socket, dir.resolve("nbdkit-max.log")).start();
    }

    NbdServer start() throws IOException, InterruptedException {
        Files.deleteIfExists(socket);
        process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            io.kickplug.virtio.testkit.Await.await(() -> !process.isAlive() || (Files.exists(socket) && connectable()),
                    java.time.Duration.ofSeconds(20), command.get(0) + " to listen on " + socket);
        } catch (AssertionError e) {
            close();
            throw new IOException(command.get(0) + " did not listen on " + socket + " in 20 s");
        }
        if (!process.isAlive()) {
            throw new IOException(command.get(0) + " exited with " + process.exitValue() + ": " + Files.readString(log));
        }
        return this;
    }

    private boolean connectable() {
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    String uri(String export) {
        return "nbd+unix:///" + export + "?socket=" + socket;
    }

    Path socket() {
        return socket;
    }

    /** SIGKILL, and wait for the process to end. */
    void kill() throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Override
    public void close() {
        try {
            kill();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
