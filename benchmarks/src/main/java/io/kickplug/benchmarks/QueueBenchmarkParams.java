package io.kickplug.benchmarks;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The run settings and parameters the per-request queue benchmarks ({@link DeviceQueueBenchmark},
 * {@link DriverQueueBenchmark}) share; JMH's class annotations are {@code @Inherited} and it reads
 * {@code @Param} fields of superclasses.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public abstract class QueueBenchmarkParams {

    /** VIRTIO_RING_F_EVENT_IDX negotiated (changes the notification or kick decision). */
    @Param({"false", "true"})
    public boolean eventIdx;

    /** The ring format (VIRTIO 1.2 section 2.7 or 2.8). */
    @Param({"split", "packed"})
    public String ring;
}
