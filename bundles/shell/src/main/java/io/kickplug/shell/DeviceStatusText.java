package io.kickplug.shell;

import io.kickplug.api.virtio.DeviceStatus;
import java.util.StringJoiner;

/** Device status bits (VIRTIO 1.2 section 2.1) as a short word for a table. */
public final class DeviceStatusText {

    private DeviceStatusText() {
    }

    /**
     * "reset" for 0, "live" for a device with DRIVER_OK and nothing wrong, otherwise the set bits joined
     * with '|' (for example "ACK|DRIVER|FEATURES_OK" or "DRIVER_OK|NEEDS_RESET").
     */
    public static String describe(int status) {
        if (status == 0) {
            return "reset";
        }
        int ok = DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK | DeviceStatus.DRIVER_OK;
        if (status == ok) {
            return "live";
        }
        StringJoiner j = new StringJoiner("|");
        add(j, status, DeviceStatus.ACKNOWLEDGE, "ACK");
        add(j, status, DeviceStatus.DRIVER, "DRIVER");
        add(j, status, DeviceStatus.FEATURES_OK, "FEATURES_OK");
        add(j, status, DeviceStatus.DRIVER_OK, "DRIVER_OK");
        add(j, status, DeviceStatus.DEVICE_NEEDS_RESET, "NEEDS_RESET");
        add(j, status, DeviceStatus.FAILED, "FAILED");
        int known = ok | DeviceStatus.DEVICE_NEEDS_RESET | DeviceStatus.FAILED;
        if ((status & ~known) != 0) {
            j.add("0x" + Integer.toHexString(status & ~known));
        }
        return j.toString();
    }

    private static void add(StringJoiner j, int status, int bit, String name) {
        if ((status & bit) != 0) {
            j.add(name);
        }
    }
}
