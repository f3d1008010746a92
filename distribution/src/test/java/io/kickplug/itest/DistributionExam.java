package io.kickplug.itest;

import io.kickplug.api.blk.DiskManager;
import javax.inject.Inject;
import org.ops4j.pax.exam.Configuration;
import org.ops4j.pax.exam.Option;
import org.osgi.framework.BundleContext;

/**
 * What the Pax Exam tests here share: the distribution's bundle set booted in a clean framework cache in
 * {@code target/paxexam} ({@link DistributionBundles#paxExam}) with the test's {@link #extraOptions()}, and the
 * probe's bundle context and the disk manager injected (Pax Exam injects the fields of superclasses and finds
 * the inherited public {@link Configuration} method).
 */
public abstract class DistributionExam {

    @Inject
    protected BundleContext context;

    @Inject
    protected DiskManager disks;

    @Configuration
    public Option[] configuration() {
        return DistributionBundles.paxExam("target/paxexam", extraOptions());
    }

    /** Options on top of the distribution's bundle set (a system property of the test); none by default. */
    protected Option[] extraOptions() {
        return new Option[0];
    }
}
