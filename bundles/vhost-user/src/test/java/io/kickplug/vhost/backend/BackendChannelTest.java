package io.kickplug.vhost.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.MessageChannel;
import io.kickplug.vhost.protocol.VhostUser;
import java.io.FileDescriptor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.newsclub.net.unix.AFUNIXSocket;
import org.newsclub.net.unix.AFUNIXSocketChannel;
import org.newsclub.net.unix.AFUNIXSocketPair;

/**
 * {@link BackendChannel} on one end of a socket pair, the test playing the front-end on the other: coalescing,
 * REPLY_ACK answers (vhost-user.rst "REPLY_ACK" applies to back-end requests too), and the cases that close the
 * channel without involving the caller: no answer within the timeout, a wrong answer, a closed peer.
 */
class BackendChannelTest {

    private AFUNIXSocketPair<AFUNIXSocketChannel> pair;
    private MessageChannel frontEnd;
    private BackendChannel channel;

    @BeforeEach
    void pair() throws Exception {
        pair = AFUNIXSocketPair.open();
        AFUNIXSocket s = (AFUNIXSocket) pair.getSocket1().socket();
        s.setSoTimeout(10_000);
        frontEnd = new MessageChannel(s);
    }

    @AfterEach
    void close() throws Exception {
        if (channel != null) {
            channel.close();
        }
        // The channel owns the pair's second socket (its descriptor was handed over, as SET_BACKEND_REQ_FD does).
        pair.getSocket1().close();
    }

    private BackendChannel open(boolean replyAck, long timeoutMillis) throws Exception {
        FileDescriptor fd = pair.getSocket2().getFileDescriptor();
        channel = BackendChannel.open("t", fd, replyAck, timeoutMillis);
        return channel;
    }

    private void ack(long status) throws Exception {
        frontEnd.send(VhostUser.BACKEND_CONFIG_CHANGE_MSG, VhostUser.VERSION | VhostUser.FLAG_REPLY,
                Message.u64(status), null);
    }

    private Message next() throws Exception {
        Message m = frontEnd.read();
        assertNotNull(m, "the back-end closed the channel");
        assertEquals(VhostUser.BACKEND_CONFIG_CHANGE_MSG, m.request());
        return m;
    }

    @Test
    void changesWhileAnAnswerIsOutstandingCoalesceIntoOneMessage() throws Exception {
        BackendChannel c = open(true, 10_000);
        assertTrue(c.configChanged());
        assertTrue(next().needReply());
        assertTrue(c.configChanged());
        assertTrue(c.configChanged());
        assertTrue(c.configChanged());
        ack(0);
        assertTrue(next().needReply(), "one more message for the three changes");
        ack(0);
        assertTrue(c.await(() -> c.acknowledged() == 2, 10, TimeUnit.SECONDS),
                "both answers counted: " + c.acknowledged());
        assertEquals(2, c.sent(), "the front-end reads the whole configuration each time: one message sufficed");
        assertTrue(c.isOpen());
    }

    @Test
    void aFailedStatusIsLoggedAndTheChannelStaysOpen() throws Exception {
        BackendChannel c = open(true, 10_000);
        c.configChanged();
        next();
        ack(1);
        c.configChanged();
        next();
        ack(0);
        assertTrue(c.await(() -> c.acknowledged() == 1, 10, TimeUnit.SECONDS));
        assertTrue(c.isOpen());
    }

    @Test
    void noAnswerWithinTheTimeoutClosesTheChannel() throws Exception {
        BackendChannel c = open(true, 200);
        assertTrue(c.configChanged(), "the caller never waits for the front-end");
        next(); // and no answer
        assertTrue(c.await(() -> !c.isOpen(), 10, TimeUnit.SECONDS), "closed after the reply timeout");
        assertTrue(c.closeReason().contains("did not acknowledge"), c.closeReason());
        assertFalse(c.configChanged(), "a closed channel tells the caller, who logs once");
    }

    @Test
    void anAnswerThatIsNotAReplyAckClosesTheChannel() throws Exception {
        BackendChannel c = open(true, 10_000);
        c.configChanged();
        next();
        frontEnd.send(VhostUser.GET_FEATURES, VhostUser.VERSION | VhostUser.FLAG_REPLY, Message.u64(0), null);
        assertTrue(c.await(() -> !c.isOpen(), 10, TimeUnit.SECONDS));
        assertTrue(c.closeReason().contains("not a REPLY_ACK"), c.closeReason());
    }

    @Test
    void aPeerThatClosedMakesTheChannelClose() throws Exception {
        BackendChannel c = open(false, 10_000);
        pair.getSocket1().close();
        c.configChanged();
        assertTrue(c.await(() -> !c.isOpen(), 10, TimeUnit.SECONDS), "the write fails and the channel closes");
    }

    @Test
    void withoutReplyAckEveryChangeIsSentWithoutNeedReply() throws Exception {
        BackendChannel c = open(false, 10_000);
        c.configChanged();
        assertFalse(next().needReply());
        assertTrue(c.awaitSent(1, 10, TimeUnit.SECONDS));
        c.configChanged();
        assertFalse(next().needReply());
        assertTrue(c.awaitSent(2, 10, TimeUnit.SECONDS));
        assertEquals(0, c.acknowledged());
    }

    @Test
    void closeWhileWaitingForAnAnswerReturns() throws Exception {
        BackendChannel c = open(true, 60_000);
        c.configChanged();
        next();
        c.close(); // the thread waits in read(); close shuts the socket down and joins it
        assertFalse(c.isOpen());
        assertEquals("closed by the back-end", c.closeReason());
        assertTrue(frontEnd.read() == null, "the front-end sees the end of the channel");
    }
}
