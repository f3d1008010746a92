package io.kickplug.sdk.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.ForwardingAsyncBackend;
import io.kickplug.api.poll.PollWindow;
import io.kickplug.blk.backend.MemoryBackendFactory;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/** Backends, filters and poll policies that break a rule fail the kit's contracts naming it. */
class BrokenPluginsTest {

    /** The memory backend behind a wrapper whose every 100th completion is reported twice. */
    static final class CompletesTwice implements BackendFactory {
        @Override
        public String kind() {
            return "twice";
        }

        @Override
        public BlockBackend open(BackendSpec spec) throws IOException {
            BlockBackend memory = new MemoryBackendFactory().open(new BackendSpec("memory", null, spec.sizeBytes(),
                    spec.readOnly()));
            return new AsyncBlockBackend() {
                private int n;

                @Override
                public synchronized void submit(BackendIo io) {
                    IOException error = null;
                    try {
                        switch (io.op()) {
                            case READ -> memory.read(io.offset(), io.buffers());
                            case WRITE -> memory.write(io.offset(), io.buffers());
                            case FLUSH -> memory.flush();
                            default -> throw new IOException("unsupported");
                        }
                    } catch (IOException e) {
                        error = e;
                    }
                    io.complete(error);
                    if (++n % 100 == 0) {
                        io.complete(error);
                    }
                }

                @Override
                public String kind() {
                    return "twice";
                }

                @Override
                public long size() {
                    return memory.size();
                }

                @Override
                public boolean readOnly() {
                    return memory.readOnly();
                }

                @Override
                public void close() throws IOException {
                    memory.close();
                }
            };
        }
    }

    @Test
    void aBackendThatCompletesTwiceFails() {
        ContractViolation v = assertThrows(ContractViolation.class,
                () -> BackendContract.of(new CompletesTwice()).checkExactlyOnce(1));
        assertEquals(Rule.COMPLETED_EXACTLY_ONCE, v.rule());
        assertTrue(v.getMessage().contains("VIRTIO 1.2 section 5.2.6"), v.getMessage());
    }

    /** A write-back "cache": completes writes at once and sends them on later; FLUSH goes straight through. */
    static final class WriteBackFilter implements BackendFilter {
        @Override
        public String name() {
            return "write-back";
        }

        @Override
        public AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
            return new ForwardingAsyncBackend(backend) {
                @Override
                public synchronized void submit(BackendIo io) {
                    if (io.op() == BackendIo.Op.WRITE) {
                        io.complete(null);
                        return; // dropped: a real cache would write it later
                    }
                    view.submit(io);
                }
            };
        }
    }

    /** Answers every operation with success, whatever the backend said. */
    static final class SwallowsErrors implements BackendFilter {
        @Override
        public String name() {
            return "swallow";
        }

        @Override
        public AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
            return new ForwardingAsyncBackend(backend) {
                @Override
                public void submit(BackendIo io) {
                    view.submit(new Wrapped(io));
                }
            };
        }

        private record Wrapped(BackendIo io) implements BackendIo {
            public Op op() {
                return io.op();
            }

            public long offset() {
                return io.offset();
            }

            public long length() {
                return io.length();
            }

            public java.nio.ByteBuffer[] buffers() {
                return io.buffers();
            }

            public boolean fua() {
                return io.fua();
            }

            public boolean mayUnmap() {
                return io.mayUnmap();
            }

            public void complete(IOException error) {
                io.complete(null);
            }
        }
    }

    @Test
    void aFilterThatSwallowsErrorsFails() {
        ContractViolation v = assertThrows(ContractViolation.class,
                () -> FilterContract.of(SwallowsErrors::new).checkPassesErrors());
        assertEquals(Rule.FILTER_PASSES_ERRORS, v.rule());
    }

    @Test
    void aFilterThatCompletesWritesBeforeTheBackendHasThemFailsTheFlushOrder() {
        ContractViolation v = assertThrows(ContractViolation.class,
                () -> FilterContract.of(WriteBackFilter::new).checkFlushOrder(1));
        assertEquals(Rule.FILTER_KEEPS_FLUSH_ORDER, v.rule());
    }

    @Test
    void aPollWindowBeyondPollMaxNsFails() {
        ContractViolation v = assertThrows(ContractViolation.class, () -> {
            for (long seed = 1; seed < 50; seed++) {
                PollPolicyContract.of(() -> params -> new PollWindow() {
                    private long ns;

                    @Override
                    public long pollNs() {
                        return ns;
                    }

                    @Override
                    public void update(long blockNs) {
                        ns = Math.max(1, ns * 2); // grows without bound
                    }
                }).checkWindow(seed);
            }
        });
        assertEquals(Rule.WINDOW_IN_BOUNDS, v.rule());
    }
}
