package io.kickplug.blk.device;

import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.blk.request.BlkRequest;
import io.kickplug.blk.request.Outcome;

/**
 * One request through a {@link RequestProcessor} the way a queue's worker takes it ({@link QueueWorker}), all on
 * the calling thread: {@link RequestProcessor#accept accept} (parse, count in flight), the executor's backend work,
 * {@link RequestProcessor#finish finish} (status byte, counters, used length) and {@code released}.
 */
final class InlineServe {

    private InlineServe() {
    }

    /**
     * @return the used length to push: bytes written into the chain, status included
     * @throws io.kickplug.api.virtio.GuestFaultException when the chain cannot carry a request (it is abandoned)
     */
    static int serve(RequestProcessor processor, DescriptorChain chain) {
        BlkRequest request = processor.accept(chain, new BlkRequest());
        RequestExecutor.Result result;
        try {
            result = processor.executor().execute(request);
        } catch (RuntimeException e) {
            // The request is still well framed: answer it, then let the caller stop the queue (as the worker does).
            processor.finish(request, Outcome.IOERR, 0);
            processor.released();
            throw e;
        }
        int used = processor.finish(request, result.outcome(), result.dataWritten());
        processor.released();
        return used;
    }
}
