package io.kickplug.vhost;

import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.FrontendClient;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fixture of the tests that talk to one exported disk as one front-end: before each test the subclass's disk
 * is exported in a fresh folder ({@link #export}) and a front-end connects to it with its guest memory in
 * {@code guest-ram} beside the socket; after the test the front-end and then the disk are closed. A test may
 * replace either field (a second export, a reconnect); the fixture closes the ones the fields hold then. A
 * subclass's own {@code @BeforeEach} runs after this one, its {@code @AfterEach} before.
 */
abstract class ExportedDiskFixture {

    @TempDir
    Path dir;
    ExportedDisk disk;
    FrontendClient client;

    /** The disk this test class exports in {@link #dir}. */
    abstract ExportedDisk export() throws Exception;

    @BeforeEach
    final void exportAndConnect() throws Exception {
        disk = export();
        client = disk.connect(dir.resolve("guest-ram"));
    }

    @AfterEach
    final void closeClientAndDisk() throws Exception {
        client.close();
        disk.close();
    }
}
