package io.kickplug.launcher;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Reads {@code \n}-terminated lines of at most a given number of bytes from an untrusted stream. A longer
 * line is read to its end and thrown away without being kept in memory, and reported as {@link Line#tooLong}
 * so the caller can answer with an error and go on with the next line.
 */
final class LineReader {

    /** One line: its text (UTF-8, malformed bytes replaced, {@code \r} before the newline dropped). */
    record Line(String text, boolean tooLong, long bytes) {
    }

    private final InputStream in;
    private final int maxBytes;
    private final byte[] buffer = new byte[8192];
    private int start;
    private int end;

    LineReader(InputStream in, int maxBytes) {
        this.in = in;
        this.maxBytes = maxBytes;
    }

    /** The next line, or {@code null} at end of stream (a last line without a newline is still returned). */
    Line next() throws IOException {
        ByteArrayOutputStream kept = new ByteArrayOutputStream();
        long bytes = 0;
        boolean tooLong = false;
        while (true) {
            if (start == end) {
                int n = in.read(buffer);
                if (n < 0) {
                    if (bytes == 0) {
                        return null;
                    }
                    return line(kept, tooLong, bytes);
                }
                start = 0;
                end = n;
            }
            int newline = -1;
            for (int i = start; i < end; i++) {
                if (buffer[i] == '\n') {
                    newline = i;
                    break;
                }
            }
            int stop = newline < 0 ? end : newline;
            int n = stop - start;
            bytes += n;
            if (!tooLong) {
                if (kept.size() + n > maxBytes) {
                    tooLong = true;
                    kept.reset();
                } else {
                    kept.write(buffer, start, n);
                }
            }
            if (newline >= 0) {
                start = newline + 1;
                return line(kept, tooLong, bytes);
            }
            start = end;
        }
    }

    private static Line line(ByteArrayOutputStream kept, boolean tooLong, long bytes) {
        if (tooLong) {
            return new Line("", true, bytes);
        }
        String text = kept.toString(StandardCharsets.UTF_8);
        if (text.endsWith("\r")) {
            text = text.substring(0, text.length() - 1);
        }
        return new Line(text, false, bytes);
    }
}
