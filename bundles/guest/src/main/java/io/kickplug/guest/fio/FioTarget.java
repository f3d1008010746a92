package io.kickplug.guest.fio;

import java.util.regex.Pattern;

/**
 * How a job's {@code filename} maps to the disk under test. {@code kp:fio <disk> ...} runs every job on
 * {@code <disk>}, the one virtio-blk device of the simulated guest. Inside that guest the device is a
 * {@code /dev/vd*} node, so any {@code /dev/vd<letters>} name (the {@code /dev/vdc} of seed 000's job file
 * included) means that disk, whatever the letter; so does the disk's own name; no filename also means it.
 * Anything else (another path or another disk's name) is an error, since the guest has no other device.
 */
public final class FioTarget {

    private static final Pattern VIRTIO_NODE = Pattern.compile("/dev/vd[a-z]+");

    private FioTarget() {
    }

    /** @throws FioOptionException when {@code filename} cannot mean {@code disk} */
    public static void check(JobSpec job, String disk) {
        String f = job.filename();
        if (f == null || f.equals(disk) || VIRTIO_NODE.matcher(f).matches()) {
            return;
        }
        throw new FioOptionException("job '" + job.name() + "': filename=" + f + " is not the disk under test '"
                + disk + "' (use /dev/vd*, " + disk + " or no filename)");
    }
}
