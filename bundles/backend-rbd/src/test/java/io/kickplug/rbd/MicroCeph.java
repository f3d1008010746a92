package io.kickplug.rbd;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The single-node Ceph cluster of the module's tests ({@code scripts/micro-ceph.sh}: one monitor, one manager, one
 * memstore OSD that keeps its objects across a restart, no authentication, pool "rbd"), started once per test JVM on
 * first use and stopped, by its daemons' process ids, when the JUnit run ends. A test class takes it with {@code @ExtendWith(MicroCeph.class)} and a
 * {@code MicroCeph} parameter.
 */
public final class MicroCeph implements ParameterResolver, ExtensionContext.Store.CloseableResource, AutoCloseable {

    /** scripts/micro-ceph.sh of the repository the tests run in (found upwards from the working directory). */
    static final Path SCRIPT = script();

    private static Path script() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path s = d.resolve("scripts").resolve("micro-ceph.sh");
            if (Files.isRegularFile(s)) {
                return s;
            }
        }
        throw new IllegalStateException("no scripts/micro-ceph.sh above " + Path.of("").toAbsolutePath());
    }

    private final Path dir;
    private final Path conf;
    /** How long the start took, for the log. */
    private final long startMs;

    /** For JUnit's extension instantiation only; the cluster itself is made by {@link #start}. */
    public MicroCeph() {
        this.dir = null;
        this.conf = null;
        this.startMs = 0;
    }

    private MicroCeph(Path dir, Path conf, long startMs) {
        this.dir = dir;
        this.conf = conf;
        this.startMs = startMs;
    }

    @Override
    public boolean supportsParameter(ParameterContext p, ExtensionContext e) {
        return p.getParameter().getType() == MicroCeph.class;
    }

    @Override
    public Object resolveParameter(ParameterContext p, ExtensionContext e) {
        return e.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(MicroCeph.class,
                k -> start(), MicroCeph.class);
    }

    private static MicroCeph start() {
        try {
            Path dir = Files.createTempDirectory("kp-ceph");
            long t0 = System.nanoTime();
            Process p = new ProcessBuilder(SCRIPT.toString(), "start", dir.toString())
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(180, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("micro-ceph.sh start failed: " + out);
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.err.println("micro-ceph: cluster in " + dir + " started in " + ms + " ms");
            return new MicroCeph(dir, dir.resolve("ceph.conf"), ms);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Stops the daemons by their pids (the script's stop) and removes the directory. */
    @Override
    public void close() throws IOException, InterruptedException {
        Process p = new ProcessBuilder(SCRIPT.toString(), "stop", dir.toString()).redirectErrorStream(true).start();
        p.getInputStream().transferTo(System.err);
        p.waitFor(60, TimeUnit.SECONDS);
        try (var files = Files.walk(dir)) {
            files.sorted((a, b) -> b.compareTo(a)).forEach(f -> f.toFile().delete());
        }
    }

    /**
     * Restarts the OSD ({@code micro-ceph.sh restart-osd}: SIGTERM by its pid, a clean stop that keeps memstore's
     * objects, a new ceph-osd, until the OSD map has it up again).
     *
     * @return the script's line with the stop and start times
     */
    public String restartOsd() throws IOException, InterruptedException {
        Process p = new ProcessBuilder(SCRIPT.toString(), "restart-osd", dir.toString()).redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(240, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("micro-ceph.sh restart-osd failed: " + out);
        }
        return out;
    }

    /** The cluster's ceph.conf. */
    public Path conf() {
        return conf;
    }

    public long startMs() {
        return startMs;
    }

    /** Runs the rbd CLI on this cluster; its standard output as bytes. */
    public byte[] rbdBytes(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("rbd", "--conf", conf.toString()));
        cmd.addAll(List.of(args));
        Path err = Files.createTempFile(dir, "rbd", ".err");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + Files.readString(err));
        }
        return out;
    }

    /** Runs the rbd CLI on this cluster; its standard output as text. */
    public String rbd(String... args) throws IOException, InterruptedException {
        return new String(rbdBytes(args), StandardCharsets.UTF_8);
    }
}
