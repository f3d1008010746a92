package io.kickplug.guest.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * What the real guest needs on this host: QEMU, and the harness's image directory (the Debian cloud kernel
 * {@code vmlinuz}, the uncompressed initramfs {@code base.cpio} whose {@code /init} has step mode, and
 * {@code kernel-version}); the accelerator; QEMU's command line.
 *
 * @param qemu the QEMU binary
 * @param kernel {@code DIR/vmlinuz}
 * @param base {@code DIR/base.cpio}
 * @param kernelVersion the contents of {@code DIR/kernel-version}, or "unknown"
 */
record RealGuestImage(Path qemu, Path kernel, Path base, String kernelVersion) {

    static final String QEMU = "qemu-system-x86_64";

    /** Found, or why not ({@code missing} non-null: one line that says what to do). */
    record Located(RealGuestImage image, String missing) {
    }

    /** Looks for QEMU ({@code qemu}, else on {@code PATH}) and the image in {@code dir}. */
    static Located locate(String qemu, Path dir, Map<String, String> env) {
        Path q = qemu != null ? Path.of(qemu) : onPath(QEMU, env == null ? null : env.get("PATH"));
        if (q == null) {
            return new Located(null, QEMU + " is not on the PATH (install qemu-system-x86, or pass --qemu PATH)");
        }
        if (!Files.isRegularFile(q) || !Files.isExecutable(q)) {
            return new Located(null, q + " is not an executable file (--qemu)");
        }
        if (!Files.isDirectory(dir)) {
            return new Located(null, "no guest image directory " + dir + ": " + RealGuestOptions.HOW_TO_BUILD);
        }
        Path kernel = dir.resolve("vmlinuz");
        Path base = dir.resolve("base.cpio");
        for (Path p : List.of(kernel, base)) {
            if (!Files.isRegularFile(p)) {
                return new Located(null, "no " + p.getFileName() + " in " + dir + ": " + RealGuestOptions.HOW_TO_BUILD);
            }
        }
        String init;
        try (InputStream in = new java.io.BufferedInputStream(Files.newInputStream(base), 1 << 16)) {
            byte[] b = Cpio.find(in, "init");
            init = b == null ? null : new String(b, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return new Located(null, "cannot read " + base + ": " + e.getMessage());
        }
        if (init == null) {
            return new Located(null, base + " has no /init (not an uncompressed newc archive?): "
                    + RealGuestOptions.HOW_TO_BUILD);
        }
        if (!init.contains("RG-STEP-READY")) {
            return new Located(null, "the initramfs in " + dir + " was built before step mode: run realguest.sh prepare "
                    + dir + " again (it rebuilds base.cpio when /init changed)");
        }
        String version = "unknown";
        try {
            Path v = dir.resolve("kernel-version");
            if (Files.isRegularFile(v)) {
                version = Files.readString(v, StandardCharsets.UTF_8).trim();
            }
        } catch (IOException e) {
            // stays unknown
        }
        return new Located(new RealGuestImage(q, kernel, base, version), null);
    }

    static Path onPath(String name, String path) {
        if (path == null) {
            return null;
        }
        for (String d : path.split(java.io.File.pathSeparator)) {
            if (d.isEmpty()) {
                continue;
            }
            Path p = Path.of(d, name);
            if (Files.isExecutable(p) && Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }

    /**
     * "kvm" when the CPU flags offer vmx or svm and /dev/kvm is writable, "tcg" otherwise: the harness's rule
     * (real-guest facts: a host without vmx has a KVM that cannot run a stock kernel at speed).
     */
    static String accel(String cpuinfo, boolean kvmWritable) {
        boolean virt = cpuinfo != null && Pattern.compile("\\b(vmx|svm)\\b").matcher(cpuinfo).find();
        return virt && kvmWritable ? "kvm" : "tcg";
    }

    static String accel() {
        String cpuinfo;
        try {
            cpuinfo = Files.readString(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            cpuinfo = "";
        }
        return accel(cpuinfo, Files.isWritable(Path.of("/dev/kvm")));
    }

    /** QEMU's first {@code --version} line, or "unknown". */
    String qemuVersion() {
        try {
            Process p = new ProcessBuilder(qemu.toString(), "--version").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
            String first = out.lines().findFirst().orElse("").trim();
            return first.isEmpty() ? "unknown" : first;
        } catch (IOException e) {
            return "unknown";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    /**
     * QEMU's command line, as the harness's {@code realguest.sh run}: q35, 2 vCPUs, 1 GiB of shared memory (memfd,
     * vhost-user needs it), vhost-user-blk-pci with EVENT_IDX on the socket, the kernel with the initrd, the serial
     * console on stdio.
     *
     * @param blkParams virtio_blk's module parameters ("poll_queues=1"), or ""
     */
    List<String> command(Path initrd, Path socket, int queues, String accel, String blkParams) {
        List<String> c = new ArrayList<>(List.of(qemu.toString(), "-nodefaults", "-no-user-config", "-machine", "q35"));
        if (accel.equals("kvm")) {
            c.addAll(List.of("-accel", "kvm", "-cpu", "host"));
        } else {
            c.addAll(List.of("-accel", "tcg,thread=multi", "-cpu", "Nehalem"));
        }
        c.addAll(List.of("-smp", Integer.toString(RealGuestReport.VCPUS), "-m", "1G",
                "-object", "memory-backend-memfd,id=mem,size=1G,share=on", "-numa", "node,memdev=mem",
                "-chardev", "socket,id=c0,path=" + socket,
                "-device", "vhost-user-blk-pci,chardev=c0,num-queues=" + queues + ",queue-size=256",
                "-kernel", kernel.toString(), "-initrd", initrd.toString(),
                "-append", "console=ttyS0 mitigations=off clocksource=tsc tsc=reliable quiet panic=-1 rg.blk="
                        + blkParams + " rg.summb=1 rg.passes=1 rg.waitresize=0",
                "-display", "none", "-serial", "stdio", "-monitor", "none", "-no-reboot"));
        return c;
    }
}
