package io.kickplug.guest.fio;

import java.util.ArrayList;
import java.util.List;

/**
 * fio job files: INI text with {@code [global]} and job sections. Lines are {@code key=value} or a bare
 * {@code key}; blank lines and lines starting with {@code ;} or {@code #} are comments, as is the rest of a
 * line after whitespace followed by {@code ;} or {@code #}. A {@code [global]} section sets defaults for
 * the job sections below it (fio's rule: a global section only affects jobs after it). Errors name the line.
 */
public final class JobFileParser {

    private JobFileParser() {
    }

    /** The jobs of a job file, clones expanded, in file order. */
    public static List<JobSpec> parse(String text) {
        List<JobSpec> jobs = new ArrayList<>();
        JobOptions global = new JobOptions();
        JobOptions current = null;
        String currentName = null;
        int currentLine = 0;
        boolean inGlobal = false;
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            int lineNo = i + 1;
            String line = stripComment(lines[i]).strip();
            if (line.isEmpty()) {
                continue;
            }
            if (line.startsWith("[")) {
                if (!line.endsWith("]") || line.length() < 3) {
                    throw new FioOptionException("line " + lineNo + ": malformed section header '" + line
                            + "' (expected [name])");
                }
                String section = line.substring(1, line.length() - 1).strip();
                if (section.isEmpty() || section.contains("[") || section.contains("]")) {
                    throw new FioOptionException("line " + lineNo + ": malformed section header '" + line + "'");
                }
                if (current != null) {
                    jobs.addAll(expand(current, currentName, currentLine, jobs.size()));
                    current = null;
                }
                if (section.equals("global")) {
                    inGlobal = true;
                } else {
                    inGlobal = false;
                    current = global.copy();
                    currentName = section;
                    currentLine = lineNo;
                }
                continue;
            }
            if (!inGlobal && current == null) {
                throw new FioOptionException("line " + lineNo + ": option '" + line
                        + "' outside a section (start with [global] or [jobname])");
            }
            int eq = line.indexOf('=');
            String key = eq < 0 ? line : line.substring(0, eq).strip();
            String value = eq < 0 ? null : line.substring(eq + 1).strip();
            if (key.isEmpty() || key.contains(" ") || key.contains("\t")) {
                throw new FioOptionException("line " + lineNo + ": malformed option line '" + line
                        + "' (expected key=value or key)");
            }
            try {
                (inGlobal ? global : current).set(key, value);
            } catch (FioOptionException e) {
                throw new FioOptionException("line " + lineNo + ": " + e.getMessage());
            }
        }
        if (current != null) {
            jobs.addAll(expand(current, currentName, currentLine, jobs.size()));
        }
        if (jobs.isEmpty()) {
            throw new FioOptionException("the job file defines no job (only [global] or nothing)");
        }
        return List.copyOf(jobs);
    }

    private static List<JobSpec> expand(JobOptions options, String section, int line, int first) {
        try {
            return options.expand(section, first);
        } catch (FioOptionException e) {
            throw new FioOptionException("line " + line + ": " + e.getMessage());
        }
    }

    /** Drops a comment: a whole line from ';' or '#', or the rest after whitespace and ';' or '#'. */
    static String stripComment(String line) {
        String s = line.stripLeading();
        if (s.startsWith(";") || s.startsWith("#")) {
            return "";
        }
        for (int i = 1; i < line.length(); i++) {
            char c = line.charAt(i);
            if ((c == ';' || c == '#') && Character.isWhitespace(line.charAt(i - 1))) {
                return line.substring(0, i);
            }
        }
        return line;
    }
}
