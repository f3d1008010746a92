package io.kickplug.itest;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * QEMU's human monitor on a Unix socket (the harness's {@code RG_MONITOR=PATH}), for what a stalled guest's test
 * shows: each virtqueue's indices as QEMU sees them ({@code info virtio-queue-status}) and as its vhost device has
 * them ({@code info virtio-vhost-queue-status}). Every read is bounded (10 s); nothing here throws.
 */
final class HumanMonitor {

    private HumanMonitor() {
    }

    /**
     * {@code info virtio}, then both queue views of queues {@code 0..queues-1} of the first virtio device, of the
     * QEMU whose monitor is {@code monitor}; an error text instead when the monitor does not answer.
     */
    static String virtqueues(Path monitor, int queues) {
        StringBuilder b = new StringBuilder();
        try {
            String list = command(monitor, "info virtio");
            b.append(list);
            Matcher m = Pattern.compile("(/machine/\\S+)").matcher(list);
            if (m.find()) {
                for (int vq = 0; vq < queues; vq++) {
                    b.append(command(monitor, "info virtio-queue-status " + m.group(1) + " " + vq));
                    b.append(command(monitor, "info virtio-vhost-queue-status " + m.group(1) + " " + vq));
                }
            }
        } catch (IOException | RuntimeException e) {
            b.append("(monitor ").append(monitor).append(": ").append(e).append(")\n");
        }
        return b.toString();
    }

    /**
     * Commands in one connection (so "cpu N" selects the vCPU the next ones read); each one's output up to the next
     * prompt (10 s at most).
     */
    static String command(Path monitor, String... commands) throws IOException {
        try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(monitor))) {
            ch.configureBlocking(false);
            StringBuilder all = new StringBuilder();
            StringBuilder out = new StringBuilder();
            readToPrompt(ch, out);
            for (String command : commands) {
                out.setLength(0);
                ByteBuffer line = ByteBuffer.wrap((command + "\n").getBytes(StandardCharsets.US_ASCII));
                while (line.hasRemaining()) {
                    ch.write(line);
                }
                readToPrompt(ch, out);
                // The monitor echoes the command line with terminal escapes first: drop that line and the prompt.
                String text = out.toString().replace("\r", "");
                text = text.substring(text.indexOf('\n') + 1).replace("(qemu) ", "");
                all.append("(qemu) ").append(command).append('\n').append(text);
            }
            return all.toString();
        }
    }

    private static void readToPrompt(SocketChannel ch, StringBuilder out) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(8192);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (out.indexOf("(qemu) ") < 0 && System.nanoTime() < deadline) {
            buf.clear();
            int n = ch.read(buf);
            if (n < 0) {
                return;
            }
            if (n == 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
                continue;
            }
            out.append(new String(buf.array(), 0, n, StandardCharsets.UTF_8));
        }
    }
}
