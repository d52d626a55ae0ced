package sluice.jvmhost;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * One connection to the worker, in the control protocol's wire format (Sluice's
 * {@code sluice.taskhost.wire}): frames of a 4-byte big-endian length and that many bytes of
 * UTF-8 JSON, each {@code {"v": 1, "type": ..., "body": {...}}}. Sends are serialised; one
 * thread receives.
 */
final class Channel implements Closeable {
    static final int PROTOCOL_VERSION = 1;
    static final int MAX_FRAME_BYTES = 256 * 1024 * 1024;
    static final ObjectMapper JSON = new ObjectMapper();

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    /** Thrown once the other end closed the connection, or it broke. */
    static final class Closed extends IOException {
        private static final long serialVersionUID = 1L;

        Closed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** One received message: its type and body. */
    record Message(String type, JsonNode body) {
    }

    private Channel(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 64 * 1024));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream(), 64 * 1024));
    }

    /** Connects to the worker and says hello with {@code incarnation} and {@code secret}. */
    static Channel connect(String host, int port, String incarnation, String secret) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), 30_000);
            Channel channel = new Channel(socket);
            ObjectNode hello = JSON.createObjectNode();
            hello.put("incarnation", incarnation);
            hello.put("secret", secret);
            hello.put("pid", ProcessHandle.current().pid());
            hello.put("host", hostName());
            channel.send("Hello", hello);
            return channel;
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return ManagementFactory.getRuntimeMXBean().getName();
        }
    }

    void send(String type, JsonNode body) throws Closed {
        ObjectNode frame = JSON.createObjectNode();
        frame.put("v", PROTOCOL_VERSION);
        frame.put("type", type);
        frame.set("body", body == null ? JSON.createObjectNode() : body);
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(frame);
        } catch (IOException e) {
            throw new IllegalStateException("Could not encode a " + type + " message", e);
        }
        synchronized (out) {
            try {
                out.writeInt(bytes.length);
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                throw new Closed("The connection to the worker broke while sending " + type, e);
            }
        }
    }

    void send(String type) throws Closed {
        send(type, null);
    }

    /** The next message; {@link Closed} once the connection ended. */
    Message recv() throws IOException {
        int length;
        byte[] bytes;
        try {
            length = in.readInt();
            if (length < 0 || length > MAX_FRAME_BYTES) {
                throw new IOException("A frame of " + Integer.toUnsignedString(length) + " bytes is over the limit");
            }
            bytes = new byte[length];
            in.readFully(bytes);
        } catch (EOFException e) {
            throw new Closed("The worker closed the connection", e);
        } catch (IOException e) {
            if (socket.isClosed()) {
                throw new Closed("The connection was closed", e);
            }
            throw new Closed("The connection to the worker broke", e);
        }
        JsonNode frame = JSON.readTree(bytes);
        if (frame == null || frame.path("v").asInt(-1) != PROTOCOL_VERSION) {
            throw new IOException("Not a frame of protocol version " + PROTOCOL_VERSION);
        }
        return new Message(frame.path("type").asText(), frame.path("body"));
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing: nothing left to do with it
        }
    }
}
