package io.kickplug.guest.virtio;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.lock.LockRegistry;
import io.kickplug.guest.transport.InterruptRouting;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The test's vCPU over {@link VirtioBlkDriver}: one thread submits and waits on the interrupt (no plug, no kick
 * policy, no cost model), as the tests of the driver's request path need. Data goes through a buffer in guest RAM
 * per request.
 */
public final class DriverHarness implements AutoCloseable {
    private final Semaphore interrupts = new Semaphore(0);
    private final AtomicInteger causes = new AtomicInteger();
    private final VirtioBlkDriver driver;

    private DriverHarness(GuestPort port, VirtqueueFactory rings, DriverConfig config) {
        driver = VirtioBlkDriver.boot("test", port, rings, config, new GuestInterrupts() {
            @Override
            public void raise(int vector) {
                VirtioBlkDriver d = driverOrNull();
                InterruptRouting r = d == null ? null : d.routing();
                if (r != null && r.cause(vector) != 0) {
                    causes.getAndAccumulate(r.cause(vector), (a, b) -> a | b);
                }
                interrupts.release();
            }
        }, new LockRegistry());
    }

    private VirtioBlkDriver driverOrNull() {
        return driver;
    }

    /** Every supported feature, up to {@code maxQueues} queues of {@code slots} slots (0: the queue size). */
    public static DriverConfig config(int maxQueues, int slots, java.time.Duration timeout) {
        return new DriverConfig(DriverConfig.SUPPORTED_FEATURES, maxQueues, slots,
                DriverConfig.DEFAULT_MAX_REQUEST_BYTES, 0, timeout);
    }

    public static DriverHarness boot(GuestPort port, VirtqueueFactory rings, DriverConfig config) {
        return new DriverHarness(port, rings, config);
    }

    public VirtioBlkDriver driver() {
        return driver;
    }

    /** A request submitted with the data buffer it reads into or writes from. */
    public record Request(RequestSlot slot, long data, int length, byte[] buffer) {
    }

    /**
     * Submits a request of {@code type} on {@code queue}: {@code buffer[0..length)} written, or read into it once
     * collected. Returns {@code null} when the queue has no free slot or no room in the ring.
     */
    public Request trySubmit(int queue, int type, long sector, byte[] buffer, int length) {
        driver.checkUsable();
        RequestSlot slot = driver.queue(queue).takeFree();
        if (slot == null) {
            return null;
        }
        long data = 0;
        List<BufferSpec> chain = List.of();
        if (length > 0) {
            synchronized (driver.ram()) {
                data = driver.ram().allocate(length, 512);
            }
            if (type == VirtioBlk.T_OUT) {
                driver.memory().write(data, buffer, 0, length);
                chain = List.of(BufferSpec.readable(data, length));
            } else {
                chain = List.of(BufferSpec.writable(data, length));
            }
        }
        Request r = new Request(slot, data, length, buffer);
        slot.prepare(type, sector, chain, false, r);
        if (!driver.submit(slot, 0)) {
            driver.queue(queue).release(slot);
            return null;
        }
        return r;
    }

    /**
     * Waits for at least one completion (bounded by the driver's timeout), hands every completed request to
     * {@code sink} and returns how many there were.
     *
     * @throws GuestDriverException when nothing completes in time or the device needs a reset
     * @throws IllegalStateException when nothing is in flight
     */
    public int awaitCompletions(Consumer<Request> sink) throws InterruptedException {
        long deadline = System.nanoTime() + driver.config().timeout().toNanos();
        boolean interrupted = interrupts.tryAcquire();
        while (true) {
            driver.checkUsable();
            if (interrupted) {
                interrupts.drainPermits();
                int isr = driver.takeInterruptCause(causes.getAndSet(0));
                if ((isr & InterruptRouting.CONFIG_CHANGE) != 0) {
                    if (driver.needsReset()) {
                        driver.fail("device needs a reset (DEVICE_NEEDS_RESET set, status 0x"
                                + Integer.toHexString(driver.deviceStatus()) + ", VIRTIO 1.2 section 2.1.2)");
                        driver.checkUsable();
                    }
                    driver.readCapacity();
                }
            }
            int n = 0;
            for (int q = 0; q < driver.queueCount(); q++) {
                List<RequestSlot> done = new ArrayList<>();
                driver.queue(q).drain(0, done);
                for (RequestSlot s : done) {
                    Request r = (Request) s.context();
                    if (s.result() == VirtioBlk.S_OK && s.chain.size() > 2
                            && s.chain.get(1).deviceWritable()) {
                        driver.memory().read(r.data(), r.buffer(), 0, r.length());
                    }
                    driver.queue(q).release(s);
                    sink.accept(r);
                    n++;
                }
            }
            if (n > 0) {
                return n;
            }
            if (driver.inDevice() == 0) {
                throw new IllegalStateException("no request in flight to wait for");
            }
            long left = deadline - System.nanoTime();
            interrupted = left > 0 && interrupts.tryAcquire(left, TimeUnit.NANOSECONDS);
            if (!interrupted && System.nanoTime() - deadline >= 0) {
                throw new GuestDriverException("no completion within " + driver.config().timeout().toMillis()
                        + " ms (" + driver.inDevice() + " requests in flight, device status 0x"
                        + Integer.toHexString(driver.deviceStatus()) + ")");
            }
        }
    }

    @Override
    public void close() {
        driver.close();
    }
}
