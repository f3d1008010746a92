package io.kickplug.blk.device;

import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.GuestFaultException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.function.BooleanSupplier;

/**
 * Serves one virtqueue on its I/O thread: the handler of the queue's {@link io.kickplug.api.iothread.IoSource}.
 * After a fault it stops serving the queue until the device is reset and activated again.
 */
final class QueueWorker implements Runnable {

    private static final Logger LOG = System.getLogger(QueueWorker.class.getName());

    private final String diskName;
    private final DeviceQueue queue;
    private final DeviceSignals signals;
    private final RequestProcessor processor;
    private final BooleanSupplier stopping;
    /** Written and read on the I/O thread only; volatile so that tests and diagnostics see it. */
    private volatile boolean stopped;

    /**
     * @param stopping true once the device is being reset: the worker then takes no new chain
     */
    QueueWorker(String diskName, DeviceQueue queue, DeviceSignals signals, RequestProcessor processor,
            BooleanSupplier stopping) {
        this.diskName = diskName;
        this.queue = queue;
        this.signals = signals;
        this.processor = processor;
        this.stopping = stopping;
    }

    /** Runs on the I/O thread; never throws. */
    @Override
    public void run() {
        if (stopped || stopping.getAsBoolean()) {
            return;
        }
        try {
            drain();
        } catch (GuestFaultException fault) {
            stopped = true;
            LOG.log(Level.WARNING, "disk " + diskName + " queue " + queue.index() + ": guest fault, queue stopped "
                    + "until reset: " + fault.getMessage());
            signals.deviceError(fault);
        } catch (Throwable t) {
            stopped = true;
            LOG.log(Level.ERROR, "disk " + diskName + " queue " + queue.index() + ": internal error, queue stopped "
                    + "until reset", t);
            // 2.1.2: DEVICE_NEEDS_RESET is how a device tells the driver it cannot go on.
            try {
                signals.deviceError(new GuestFaultException("2.1.2",
                        "device error while serving queue " + queue.index() + ": " + t, t));
            } catch (Throwable ignored) {
                // nothing more can be done on this thread
            }
        }
    }

    /** The loss-free drain loop of {@link DeviceQueue}, with one notification decision per batch. */
    private void drain() {
        do {
            queue.disableNotification();
            int pushed = 0;
            DescriptorChain chain;
            while (!stopping.getAsBoolean() && (chain = queue.pop()) != null) {
                int usedLength = processor.serve(chain);
                queue.pushUsed(chain.head(), usedLength);
                pushed++;
            }
            // 2.7.7.2: the queue decides (EVENT_IDX or NO_INTERRUPT) whether the driver wants an interrupt.
            if (pushed > 0 && queue.needsNotification()) {
                signals.usedBuffer(queue.index());
            }
        } while (!stopping.getAsBoolean() && queue.enableNotification());
    }

    boolean stopped() {
        return stopped;
    }
}
