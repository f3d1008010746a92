package io.kickplug.guest.engine;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.guest.KickPolicy;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.memory.GuestRam;
import io.kickplug.guest.transport.InterruptRouting;
import io.kickplug.guest.virtio.RequestQueue;
import io.kickplug.guest.virtio.RequestSlot;
import io.kickplug.guest.virtio.VirtioBlkDriver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * One vCPU of a {@link VcpuMachine}: its thread and loop (interrupts, polling, completions, jobs), the
 * {@link Vcpu} face its jobs see (submission with blk-mq's plug), and the {@link KickPolicy.Queue} it lends the
 * kick policy for one kick. See {@link VcpuMachine} for the model.
 */
final class VcpuThread implements Vcpu, Runnable, KickPolicy.Queue {
    /** Linux's BLK_MAX_REQUEST_COUNT: a plug holding this many requests is dispatched at once. */
    static final int PLUG_FLUSH_COUNT = 32;
    /** Longest park of an idle vCPU between checks of its deadlines. */
    static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    final int id;
    final Thread thread;
    private final VcpuMachine machine;
    private final VirtioBlkDriver driver;
    private final MachineConfig config;
    private final RequestQueue queue;
    /** Where this vCPU's hipri requests go: its poll queue, or {@link #queue} without poll queues. */
    private final RequestQueue pollQueue;
    /** The queues whose interrupts this vCPU handles. */
    final List<RequestQueue> affine = new ArrayList<>();
    private final AtomicBoolean irq = new AtomicBoolean();
    /** Causes the MSI-X vectors delivered here carried since the handler last ran. */
    private final AtomicInteger irqCause = new AtomicInteger();
    /** Completions collected by other vCPUs' handlers for this vCPU's requests (the IPI). */
    final ConcurrentLinkedQueue<Completion> remote = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Completion> local = new ArrayDeque<>();
    private final List<RequestSlot> plug = new ArrayList<>();
    /** Plugged hipri requests for a poll queue ({@link #pollQueue} differs from {@link #queue}). */
    private final List<RequestSlot> pollPlug = new ArrayList<>();
    /** This vCPU's hipri requests in the device, not yet completed here: while > 0 the vCPU polls. */
    private int hipriInFlight;
    /** The queue being dispatched, lent to the kick policy. */
    private RequestQueue kickQueue;
    private final List<JobRun> jobs = new ArrayList<>();
    private JobRun.Run seen;
    private JobRun current;
    private int inFlight;
    private long lastProgress;
    private volatile long exitNanos;
    private volatile long injectNanos;
    private volatile long notifies;
    private volatile long interrupts;
    private volatile long completions;
    private volatile long requests;
    /** Real or virtual time ({@link VcpuClock}). */
    final VcpuClock clock;
    /** The queue this vCPU waits on for room (a tag, descriptors), woken by the vCPU that collects from it. */
    volatile RequestQueue waitingOn;

    VcpuThread(VcpuMachine machine, int id, RequestQueue queue, RequestQueue pollQueue) {
        this.machine = machine;
        this.driver = machine.driver;
        this.config = machine.config();
        this.id = id;
        this.queue = queue;
        this.pollQueue = pollQueue;
        this.kickQueue = queue;
        this.thread = new Thread(this, "vcpu" + id + "-" + config.name());
        this.clock = new VcpuClock(machine.time, this, config, machine.cost);
        thread.setDaemon(true);
    }

    /** What this vCPU did so far, for a run's difference. */
    record Counters(long exitNanos, long injectNanos, long notifies, long interrupts, long completions,
            long requests) {
    }

    Counters counters() {
        return new Counters(exitNanos, injectNanos, notifies, interrupts, completions, requests);
    }

    /** The interrupt controller delivers a vector here ({@code cause} is an MSI-X vector's, 0 for a line). */
    void interrupt(int cause) {
        if (clock.heldUntilExitEnds(() -> interrupt(cause))) {
            return;
        }
        if (cause != 0) {
            irqCause.getAndAccumulate(cause, (a, b) -> a | b);
        }
        irq.set(true);
        wake();
    }

    /** Wakes this vCPU (LockSupport's unpark, or a wake at the caller's virtual time). */
    void wake() {
        clock.wake();
    }

    private long now() {
        return clock.now();
    }

    @Override
    public void run() {
        clock.enter();
        try {
            runLoop();
        } finally {
            clock.retire();
        }
    }

    private void runLoop() {
        try {
            while (!machine.stopped && machine.broken == null) {
                machine.recovery.safePoint(this);
                boolean work = handleInterrupt();
                work |= pollCompletions();
                work |= runCompletions();
                JobRun.Run r = machine.run;
                if (r != seen) {
                    seen = r;
                    startRun(r);
                    work = true;
                }
                if (!jobs.isEmpty()) {
                    work |= stepJobs();
                }
                if (!work && !irq.get() && remote.isEmpty() && machine.run == seen) {
                    checkProgress();
                    if (hipriInFlight > 0) {
                        clock.spin(); // polling: the vCPU spins on the used ring, as io_uring iopoll
                    } else {
                        clock.idle(IDLE_PARK_NANOS, inFlight > 0);
                    }
                } else {
                    clock.yieldTurn(); // virtual time: the vCPUs and I/O threads due earlier run first
                }
            }
        } catch (Throwable t) {
            machine.fail(t);
        }
    }

    /** After a recovery parked this vCPU: its deadlines start again. */
    void resumed() {
        lastProgress = now();
    }

    private void startRun(JobRun.Run r) {
        jobs.clear();
        for (GuestJob job : r.perVcpu.get(id)) {
            jobs.add(new JobRun(job));
        }
        lastProgress = now();
        if (jobs.isEmpty()) {
            r.vcpuDone();
            return;
        }
        for (JobRun j : jobs) {
            callAsJob(j, JobCall.START);
        }
    }

    /** Steps the jobs that may progress; finishes those done and drained. Returns true if any ran. */
    private boolean stepJobs() {
        boolean ran = false;
        boolean allFinished = true;
        for (JobRun j : jobs) {
            if (j.finished) {
                continue;
            }
            if (!j.done && j.needsStep) {
                ran = true;
                j.done = !callAsJob(j, JobCall.STEP);
                // A job that is not done and has nothing in flight is stepped again next round.
                j.needsStep = !j.done && j.inFlight == 0;
            }
            if (j.done && j.inFlight == 0) {
                ran = true;
                j.finished = true;
                callAsJob(j, JobCall.FINISH);
                if (j.inFlight > 0) {
                    throw new IllegalStateException("job " + j.job + " submitted I/O from finish()");
                }
            }
            allFinished &= j.finished;
        }
        if (allFinished) {
            jobs.clear();
            seen.vcpuDone();
        }
        return ran;
    }

    /** The calls of a job's own code that {@link #callAsJob} makes. */
    private enum JobCall { START, STEP, FINISH }

    /**
     * Calls the job's {@code start}, {@code step} or {@code finish} as that job (what it submits is its I/O), then
     * dispatches what it plugged. Returns what {@code step} returned; {@code false} for the other calls.
     */
    private boolean callAsJob(JobRun j, JobCall call) {
        current = j;
        boolean more = false;
        try {
            switch (call) {
                case START -> j.job.start(this);
                case STEP -> more = j.job.step(this);
                case FINISH -> j.job.finish(this);
            }
        } finally {
            current = null;
        }
        finishPlug();
        return more;
    }

    private void checkProgress() {
        if (inFlight == 0 || now() - lastProgress < config.timeout().toNanos()) {
            return;
        }
        int status = driver.deviceStatus();
        if (driver.needsReset() && machine.survivesRemoval()) {
            machine.deviceGone(machine.generation); // as in handleInterrupt: wait for the disk to come back
            lastProgress = now();
            return;
        }
        if (driver.needsReset()) {
            throw giveUp("device set DEVICE_NEEDS_RESET without a configuration-change interrupt (status 0x"
                    + Integer.toHexString(status) + ", VIRTIO 1.2 section 2.1.2)");
        }
        long millis = config.timeout().toMillis();
        throw new GuestDriverException("no completion within " + (millis % 1000 == 0 ? millis / 1000 + " s"
                : millis + " ms") + " (" + inFlight + " requests in flight on vcpu " + id
                + ", device status 0x" + Integer.toHexString(status) + ")");
    }

    /** The driver gives the device up (its requests fail); the exception fails the machine. */
    private GuestDriverException giveUp(String reason) {
        driver.fail(reason);
        return new GuestDriverException(reason);
    }

    // Completion side ------------------------------------------------------------------------------

    /** The interrupt handler: returns true when an interrupt was pending. Runs no job code. */
    private boolean handleInterrupt() {
        if (!irq.getAndSet(false)) {
            return false;
        }
        // vm_interrupt (virtio-mmio): read and acknowledge InterruptStatus (section 4.2.3.4); vp_interrupt
        // (virtio-pci INTx): read the ISR, which clears it (4.1.4.5); MSI-X: the vectors said it.
        int isr = driver.takeInterruptCause(irqCause.getAndSet(0));
        if ((isr & InterruptRouting.CONFIG_CHANGE) != 0) {
            if (driver.needsReset()) {
                if (machine.survivesRemoval()) {
                    // A device whose bundle is going away may fail first (its classes gone): treat it as a
                    // removal and wait for the disk to come back; one that does not come back fails the run.
                    machine.deviceGone(machine.generation);
                    return true;
                }
                // Section 2.1.2: an error the device cannot recover from without a reset.
                throw giveUp("device needs a reset (DEVICE_NEEDS_RESET set, status 0x"
                        + Integer.toHexString(driver.deviceStatus()) + ", VIRTIO 1.2 section 2.1.2)");
            }
            driver.readCapacity();
        }
        boolean mine = false;
        for (RequestQueue q : affine) {
            // vring_interrupt's more_used check, without the lock: only this vCPU consumes q's used ring.
            mine |= q.hasUsed();
        }
        if (!mine) {
            return true;
        }
        interrupts++;
        injectNanos += clock.inject();
        for (RequestQueue q : affine) {
            if (q.hasUsed()) {
                List<RequestSlot> done = new ArrayList<>();
                q.drain(id, done);
                route(q, done);
            }
        }
        return true;
    }

    /** Polls for this vCPU's hipri completions (virtblk_poll); returns true when the poll reaped something. */
    private boolean pollCompletions() {
        if (hipriInFlight == 0) {
            return false;
        }
        List<RequestSlot> done = new ArrayList<>();
        pollQueue.reap(id, done);
        if (done.isEmpty()) {
            return false;
        }
        route(pollQueue, done);
        return true;
    }

    /** Frees the slots of collected requests and hands their completions to the submitting vCPUs. */
    private void route(RequestQueue q, List<RequestSlot> done) {
        long now = now();
        machine.recovery.noteFirstCompletion(done.size(), now);
        List<VcpuThread> wake = new ArrayList<>();
        for (RequestSlot s : done) {
            IoRequest io = (IoRequest) s.context();
            Completion c = new Completion(io, s.result(), now, s.hipri());
            q.release(s);
            if (io.owner == this) {
                local.add(c);
            } else {
                io.owner.remote.add(c);
                if (!wake.contains(io.owner)) {
                    wake.add(io.owner);
                }
            }
        }
        completions += done.size();
        q.drained();
        if (clock.virtual()) {
            // drained() unparks the host threads waiting for room; in virtual time they are woken here.
            for (VcpuThread v : machine.vcpus) {
                if (v.waitingOn == q && !wake.contains(v)) {
                    wake.add(v);
                }
            }
        }
        for (VcpuThread v : wake) {
            v.wake();
        }
    }

    /** Runs the callbacks of completed I/O; returns true if any completion was processed. */
    private boolean runCompletions() {
        boolean any = false;
        Completion c;
        while ((c = local.poll()) != null || (c = remote.poll()) != null) {
            any = true;
            lastProgress = now();
            clock.chargeComplete();
            if (c.hipri()) {
                hipriInFlight--;
            }
            IoRequest io = c.io();
            if (io.status == VirtioBlk.S_OK && c.status() != VirtioBlk.S_OK) {
                io.status = c.status();
            }
            if (--io.partsLeft > 0) {
                continue;
            }
            inFlight--;
            io.job.inFlight--;
            io.job.needsStep = true;
            current = io.job;
            try {
                io.callback.done(io.status, c.at());
            } finally {
                current = null;
            }
            finishPlug();
        }
        return any;
    }

    // Submission side ------------------------------------------------------------------------------

    @Override
    public int id() {
        return id;
    }

    @Override
    public int queue() {
        return queue.index();
    }

    @Override
    public GuestBuffer allocate(int bytes) {
        onThisThread();
        if (bytes <= 0) {
            throw new IllegalArgumentException("buffer size must be positive: " + bytes);
        }
        GuestRam ram = driver.ram();
        long address;
        synchronized (ram) {
            address = ram.allocate(bytes, GuestRam.PAGE);
        }
        driver.memory().fill(address, bytes, (byte) 0);
        return new RamBuffer(driver.memory(), address, bytes);
    }

    @Override
    public void submit(IoOp op, long offset, int length, GuestBuffer buf, boolean hipri, IoCallback cb) {
        onThisThread();
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(cb, "cb");
        if (current == null) {
            throw new IllegalStateException("submit outside a job's start, step, finish or callback");
        }
        if (machine.broken != null || machine.stopped) {
            machine.checkUsable();
        }
        if (op == IoOp.FLUSH) {
            if (length != 0 || buf != null) {
                throw new IllegalArgumentException("a flush has no data (VIRTIO 1.2 section 5.2.6.1)");
            }
            IoRequest io = new IoRequest(current, cb, this, 1);
            count(io);
            if (!driver.hasFlush()) {
                // Linux: without VIRTIO_BLK_F_FLUSH there is no volatile cache, a flush completes at once.
                local.add(new Completion(io, VirtioBlk.S_OK, now(), false));
                return;
            }
            queueRequest(io, op, 0, List.of(), hipri);
            return;
        }
        checkData(op, offset, length, buf);
        List<RequestSplitter.Part> parts = RequestSplitter.split(offset, length, buf.address(), driver.segMax(),
                config.maxRequestBytes());
        IoRequest io = new IoRequest(current, cb, this, parts.size());
        count(io);
        for (RequestSplitter.Part p : parts) {
            List<BufferSpec> data = new ArrayList<>(p.segments().size());
            for (RequestSplitter.Segment s : p.segments()) {
                data.add(op == IoOp.READ ? BufferSpec.writable(s.address(), s.length())
                        : BufferSpec.readable(s.address(), s.length()));
            }
            queueRequest(io, op, p.offset() / VirtioBlk.SECTOR_SIZE, data, hipri);
        }
    }

    private void count(IoRequest io) {
        inFlight++;
        io.job.inFlight++;
        lastProgress = inFlight == 1 ? now() : lastProgress;
    }

    private void checkData(IoOp op, long offset, int length, GuestBuffer buf) {
        Objects.requireNonNull(buf, "buf");
        if (offset < 0 || offset % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("offset " + offset + " must be a non-negative multiple of 512 "
                    + "(VIRTIO 1.2 section 5.2.6.1)");
        }
        // Section 5.2.6.1: the data of IN and OUT requests is a multiple of 512 bytes.
        if (length <= 0 || length % VirtioBlk.SECTOR_SIZE != 0 || length > buf.size()) {
            throw new IllegalArgumentException("length " + length + " must be a positive multiple of 512 within "
                    + "the " + buf.size() + "-byte buffer (VIRTIO 1.2 section 5.2.6.1)");
        }
        if (buf.address() % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("buffer at 0x" + Long.toHexString(buf.address())
                    + " is not 512-byte aligned");
        }
        long capacity = driver.capacityBytes();
        if (offset > capacity - length) {
            throw new IllegalArgumentException("I/O of " + length + " bytes at offset " + offset
                    + " passes the capacity of " + capacity + " bytes");
        }
        if (op == IoOp.WRITE && driver.readOnly()) {
            throw new IllegalArgumentException("disk " + config.name()
                    + " is read-only (VIRTIO_BLK_F_RO, VIRTIO 1.2 section 5.2.6.2)");
        }
    }

    /**
     * Takes a slot of the request's queue (waiting if none), prepares it, and puts it on the plug. A hipri
     * request goes to the vCPU's poll queue when there are poll queues.
     */
    private void queueRequest(IoRequest io, IoOp op, long sector, List<BufferSpec> data, boolean hipri) {
        RequestQueue q = hipri ? pollQueue : queue;
        RequestSlot s = q.takeFree();
        if (s == null) {
            // blk_mq_get_tag: run the hardware queue (our plug) before sleeping for a tag.
            dispatchPlug();
            RequestSlot[] got = new RequestSlot[1];
            awaitQueue(q, () -> (got[0] = q.takeFree()) != null, "a free tag");
            s = got[0];
        }
        s.prepare(op.requestType(), sector, data, hipri, io);
        clock.chargeSubmit();
        List<RequestSlot> p = q == queue ? plug : pollPlug;
        p.add(s);
        requests++;
        if (p.size() >= PLUG_FLUSH_COUNT) {
            dispatchPlug();
        }
    }

    /**
     * Waits until {@code ready} holds for queue {@code q}, handling this vCPU's interrupts and polling for its
     * hipri completions meanwhile (their callbacks run later, from the loop). Bounded by the machine's timeout.
     */
    private void awaitQueue(RequestQueue q, BooleanSupplier ready, String what) {
        long deadline = now() + config.timeout().toNanos();
        while (!ready.getAsBoolean()) {
            q.addWaiter(thread);
            waitingOn = q;
            try {
                if (machine.recovery.safePoint(this)) {
                    deadline = now() + config.timeout().toNanos(); // the device was away
                }
                if (ready.getAsBoolean()) {
                    return;
                }
                if (handleInterrupt() || pollCompletions()) {
                    continue;
                }
                if (machine.broken != null || machine.stopped) {
                    machine.checkUsable();
                }
                long left = deadline - now();
                if (left <= 0) {
                    throw new GuestDriverException("vcpu " + id + " waited " + config.timeout().toMillis()
                            + " ms for " + what + " on queue " + q.index() + " (" + inFlight
                            + " requests in flight, device status 0x" + Integer.toHexString(driver.deviceStatus())
                            + ")");
                }
                if (hipriInFlight > 0) {
                    clock.spin();
                } else {
                    clock.idle(Math.min(left, IDLE_PARK_NANOS), inFlight > 0);
                }
            } finally {
                waitingOn = null;
                q.removeWaiter(thread);
            }
        }
    }

    @Override
    public void commit() {
        onThisThread();
        dispatchPlug();
    }

    private void finishPlug() {
        if (!plug.isEmpty() || !pollPlug.isEmpty()) {
            dispatchPlug();
        }
    }

    /** Dispatches the plugged requests of both queues. */
    private void dispatchPlug() {
        dispatch(plug, queue);
        dispatch(pollPlug, pollQueue);
    }

    /**
     * virtio_queue_rq over a plug list for queue {@code q}, kicking through the policy on the last request
     * ({@code bd->last}); other requests just unlock.
     */
    private void dispatch(List<RequestSlot> list, RequestQueue q) {
        int n = list.size();
        if (n == 0) {
            return;
        }
        kickQueue = q;
        for (int i = 0; i < n; i++) {
            RequestSlot s = list.get(i);
            boolean last = i == n - 1;
            q.lock().lock(id);
            while (!q.add(s)) {
                // BLK_STS_DEV_RESOURCE: kick what this round added, wait for completions, retry.
                long drains = q.drains();
                if (i > 0) {
                    kickLocked();
                } else {
                    q.lock().unlock();
                }
                awaitQueue(q, () -> q.drains() != drains, "free descriptors");
                kickQueue = q;
                q.lock().lock(id);
            }
            clock.chargeVqAdd(); // virtqueue_add, under the lock (model charging)
            if (s.hipri()) {
                hipriInFlight++;
            }
            if (last) {
                kickLocked();
            } else {
                q.lock().unlock();
            }
        }
        list.clear();
    }

    /** Hands the locked queue to the kick policy, which must release the lock. */
    private void kickLocked() {
        boolean returned = false;
        try {
            machine.policy.kick(this);
            returned = true;
        } finally {
            if (kickQueue.lock().isHeldByCurrentThread()) {
                kickQueue.lock().unlock();
                if (returned) {
                    throw new IllegalStateException("kick policy " + config.kickPolicy()
                            + " returned with the lock of queue " + kickQueue.index() + " held");
                }
            }
        }
    }

    // KickPolicy.Queue: this vCPU's queue, lent to the policy for one kick.

    @Override
    public int index() {
        return kickQueue.index();
    }

    @Override
    public boolean kickPrepare() {
        if (!kickQueue.lock().isHeldByCurrentThread()) {
            throw new IllegalStateException("kickPrepare of queue " + kickQueue.index() + " without its lock");
        }
        return kickQueue.kickPrepare();
    }

    @Override
    public void notifyDevice() {
        long t0 = now();
        // The exit: with ioeventfd off the device's queue handler runs during it (VirtualIoThread in virtual
        // time, SynchronousNotify in real time).
        clock.inExit(true);
        try {
            driver.notify(kickQueue.index());
            exitNanos += clock.exitCost(t0);
        } finally {
            clock.inExit(false);
        }
        notifies++;
    }

    @Override
    public void unlock() {
        kickQueue.lock().unlock();
    }

    @Override
    public int inFlight() {
        return inFlight;
    }

    @Override
    public long nowNanos() {
        return now();
    }

    private void onThisThread() {
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("vcpu " + id + " used from thread " + Thread.currentThread().getName());
        }
    }

    @Override
    public String toString() {
        return "vcpu" + id;
    }
}
