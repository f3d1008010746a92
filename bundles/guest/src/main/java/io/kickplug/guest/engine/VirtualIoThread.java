package io.kickplug.guest.engine;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;

/**
 * A device I/O thread under {@link VirtualTime}: a real thread running the device's handlers and tasks, one loop
 * iteration per turn of its actor. A queue notify from a vCPU wakes it {@link ModelCosts#ioeventfdWakeNs}
 * later (ioeventfd on), or runs the queue's handler at once on the notifying vCPU, inside its exit (ioeventfd
 * off); the device's cost is charged on the clock of whichever actor ran it.
 */
final class VirtualIoThread implements IoThread {

    private static final Logger LOG = System.getLogger(VirtualIoThread.class.getName());
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final VirtualTime time;
    private final VirtualTime.Actor actor;
    private final String name;
    private final Thread thread;
    private final List<Source> sources = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> endTasks = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;
    private volatile long iterations;
    /** A vCPU thread running a handler of this loop during its exit (ioeventfd off), else null. */
    private volatile Thread inline;
    /**
     * The loop's handlers are running, on the loop (an iteration) or on a vCPU (its exit). They may pause at a
     * scheduling point (the tracked-requests lock, an interrupt sent), and nobody else may run them meanwhile: who
     * finds this set waits in virtual time for {@link #handlersDone}. Read and written by the running actor only.
     */
    private volatile boolean handling;
    private final Object handlersDone = new Object();

    VirtualIoThread(VirtualTime time, String name) {
        this.time = time;
        this.name = name;
        this.actor = time.register(name);
        this.thread = new Thread(this::loop, name);
        thread.setDaemon(true);
    }

    void startThread() {
        thread.start();
    }

    private final class Source implements IoSource {
        final Runnable handler;
        volatile boolean pending;
        volatile boolean cancelled;

        Source(Runnable handler) {
            this.handler = handler;
        }

        @Override
        public void signal() {
            if (cancelled || closed) {
                return;
            }
            Thread me = Thread.currentThread();
            if (me != thread && me != inline && !time.ioeventfd() && time.inExit()) {
                runInline(this);
                return;
            }
            pending = true;
            wakeLoop(me != thread && me != inline && time.current() != null);
        }

        @Override
        public void cancel() {
            cancelled = true;
            sources.remove(this);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public IoSource register(String sourceName, Runnable handler) {
        Source s = new Source(handler);
        sources.add(s);
        return s;
    }

    @Override
    public void execute(Runnable task) {
        enqueue(tasks, task);
    }

    @Override
    public void executeAtEndOfIteration(Runnable task) {
        enqueue(endTasks, task);
    }

    private void enqueue(ConcurrentLinkedQueue<Runnable> queue, Runnable task) {
        if (closed) {
            throw new RejectedExecutionException("I/O thread " + name + " is closed");
        }
        queue.add(task);
        wakeLoop(false);
    }

    @Override
    public boolean inLoop() {
        Thread me = Thread.currentThread();
        return me == thread || me == inline;
    }

    @Override
    public long iterations() {
        return iterations;
    }

    @Override
    public long cpuTimeNanos() {
        return THREADS.isThreadCpuTimeSupported() ? THREADS.getThreadCpuTime(thread.getId()) : -1;
    }

    @Override
    public void close() {
        closed = true;
        time.wakeNow(actor);
        if (Thread.currentThread() != thread) {
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Wakes the loop: after the ioeventfd's wake-up cost for a vCPU's notify, at once otherwise. */
    private void wakeLoop(boolean notify) {
        if (Thread.currentThread() == thread) {
            return; // the loop looks again before it blocks
        }
        VirtualTime.Actor me = time.current();
        if (me == null) {
            time.wakeNow(actor);
        } else {
            time.wake(actor, time.now(me) + (notify ? time.costs().ioeventfdWakeNs() : 0));
        }
    }

    private void loop() {
        time.enter(actor);
        try {
            while (!closed) {
                while (handling && !time.isShutdown()) {
                    actor.await(handlersDone); // a vCPU's exit is running the handlers (ioeventfd off)
                }
                if (runIteration()) {
                    time.yieldTurn(actor);
                } else {
                    time.block(actor, VirtualTime.NEVER);
                }
            }
        } finally {
            time.retire(actor);
        }
    }

    /** One iteration: the signalled sources, the tasks, the end-of-iteration tasks; charged as the device's. */
    private boolean runIteration() {
        boolean any = false;
        handling = true;
        try {
            for (Source s : sources) {
                if (s.pending && !s.cancelled) {
                    s.pending = false;
                    any = true;
                    run(s.handler);
                }
            }
            Runnable t;
            while ((t = tasks.poll()) != null) {
                any = true;
                run(t);
            }
            any |= runEndTasks();
        } finally {
            handling = false;
            actor.wake(handlersDone, 0);
        }
        if (any) {
            iterations++;
            charge(actor);
        }
        return any;
    }

    private boolean runEndTasks() {
        List<Runnable> end = new ArrayList<>();
        Runnable t;
        while ((t = endTasks.poll()) != null) {
            end.add(t);
        }
        end.forEach(this::run);
        return !end.isEmpty();
    }

    /**
     * ioeventfd off: the notifying vCPU runs the queue's handler during its exit, once the device is free (one
     * at a time, as under QEMU's BQL), and the device is busy until the vCPU is done with it.
     */
    private void runInline(Source s) {
        VirtualTime.Actor vcpu = time.current();
        while (!time.isShutdown()) {
            if (handling) {
                vcpu.await(handlersDone); // the loop (or another exit) is in the handlers, paused at a scheduling point
                continue;
            }
            long busy = actor.clock;
            long now = time.now(vcpu);
            if (busy <= now) {
                break;
            }
            time.advance(vcpu, busy - now); // a scheduling point: the loop may have begun an iteration meanwhile
        }
        inline = Thread.currentThread();
        handling = true;
        try {
            s.pending = false;
            run(s.handler);
            runEndTasks();
        } finally {
            inline = null;
            handling = false;
            vcpu.wake(handlersDone, 0);
        }
        iterations++;
        charge(vcpu);
        time.occupy(actor, time.now(vcpu));
        if (!tasks.isEmpty() || s.pending) {
            time.wake(actor, time.now(vcpu));
        }
    }

    /** The model's device cost of the requests {@code who} completed and was not charged for, on its clock. */
    private void charge(VirtualTime.Actor who) {
        time.chargeDeviceWork(who, 0);
    }

    private void run(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "I/O thread " + name + ": handler failed", e);
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
