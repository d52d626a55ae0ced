package sluice.jvmhost;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.OffsetBackingStore;
import org.apache.kafka.connect.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Java source task's offsets, kept by Sluice's supervisor: the offsets stored when the task
 * was launched are what it reads; what Kafka's offset writer flushes goes to the supervisor as
 * {@code SourceOffsets} and completes when the supervisor answers {@code Committed}.
 *
 * <p>Kafka's worker hands this store keys and values as its internal JSON converter wrote
 * them ({@code ["connector", {partition}]} and {@code {offset}}, without schemas). A partition
 * is looked up by its JSON value, not its bytes: a map's keys may come in another order than
 * when the offsets were stored.
 */
final class TaskOffsetStore implements OffsetBackingStore {
    private static final Logger log = LoggerFactory.getLogger(TaskOffsetStore.class);

    private final String connector;
    private final Channel channel;
    private final Map<JsonNode, JsonNode> known = new ConcurrentHashMap<>();
    private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicInteger seq = new AtomicInteger();
    private volatile boolean closed;

    private record Pending(Map<JsonNode, JsonNode> offsets, Callback<Void> callback, CompletableFuture<Void> future) {
    }

    TaskOffsetStore(String connector, Channel channel, JsonNode committed) {
        this.connector = connector;
        this.channel = channel;
        for (JsonNode entry : committed) {
            known.put(entry.get(0), entry.get(1));
        }
    }

    @Override
    public void start() {
    }

    @Override
    public void stop() {
    }

    @Override
    public void configure(WorkerConfig config) {
    }

    @Override
    public Future<Map<ByteBuffer, ByteBuffer>> get(Collection<ByteBuffer> keys) {
        Map<ByteBuffer, ByteBuffer> found = new HashMap<>();
        for (ByteBuffer key : keys) {
            JsonNode partition = partitionOf(key);
            JsonNode offset = partition == null ? null : known.get(partition);
            if (offset != null && !offset.isNull()) {
                found.put(key, ByteBuffer.wrap(bytes(offset)));
            }
        }
        return CompletableFuture.completedFuture(found);
    }

    @Override
    public Future<Void> set(Map<ByteBuffer, ByteBuffer> values, Callback<Void> callback) {
        CompletableFuture<Void> future = new CompletableFuture<>();
        Map<JsonNode, JsonNode> offsets = new HashMap<>();
        ObjectNode body = Channel.JSON.createObjectNode();
        int number = seq.incrementAndGet();
        body.put("seq", number);
        ArrayNode list = body.putArray("offsets");
        for (Map.Entry<ByteBuffer, ByteBuffer> entry : values.entrySet()) {
            JsonNode partition = partitionOf(entry.getKey());
            if (partition == null) {
                continue;
            }
            JsonNode offset = entry.getValue() == null ? NullNode.getInstance() : parse(entry.getValue());
            offsets.put(partition, offset);
            list.addArray().add(partition).add(offset);
        }
        Pending waiting = new Pending(offsets, callback, future);
        pending.put(number, waiting);
        if (closed) {
            fail(number, "the task's connection to the worker is closed");
            return future;
        }
        try {
            channel.send("SourceOffsets", body);
        } catch (Channel.Closed e) {
            fail(number, "the worker went away");
        }
        return future;
    }

    /** The supervisor's answer to one {@code SourceOffsets} message. */
    void committed(JsonNode answer) {
        Pending waiting = pending.remove(answer.path("seq").asInt());
        if (waiting == null) {
            return;
        }
        JsonNode error = answer.path("error");
        if (!error.isMissingNode() && !error.isNull()) {
            ConnectException failure = new ConnectException("Storing offsets failed: " + error.asText());
            complete(waiting, failure);
            return;
        }
        if (answer.path("fenced").asBoolean(false)) {
            log.warn("{}: the task no longer owns its work here; its offsets were not stored", connector);
        } else {
            known.putAll(waiting.offsets());
        }
        complete(waiting, null);
    }

    /** Fails what still waits for an answer: the task's connection is closing. */
    void close() {
        closed = true;
        for (Integer number : Set.copyOf(pending.keySet())) {
            fail(number, "the task's connection to the worker closed");
        }
    }

    private void fail(int number, String why) {
        Pending waiting = pending.remove(number);
        if (waiting != null) {
            complete(waiting, new ConnectException("Offsets were not stored: " + why));
        }
    }

    private static void complete(Pending waiting, Throwable error) {
        if (waiting.callback() != null) {
            waiting.callback().onCompletion(error, null);
        }
        if (error == null) {
            waiting.future().complete(null);
        } else {
            waiting.future().completeExceptionally(error);
        }
    }

    @Override
    public Set<Map<String, Object>> connectorPartitions(String connectorName) {
        Set<Map<String, Object>> partitions = new HashSet<>();
        if (!connector.equals(connectorName)) {
            return partitions;
        }
        for (JsonNode partition : known.keySet()) {
            @SuppressWarnings("unchecked")
            Map<String, Object> map = Channel.JSON.convertValue(partition, Map.class);
            partitions.add(map);
        }
        return partitions;
    }

    private JsonNode partitionOf(ByteBuffer key) {
        return partitionOf(connector, key);
    }

    /** The partition of an offset key {@code ["connector", {partition}]}; null for another connector's. */
    static JsonNode partitionOf(String connector, ByteBuffer key) {
        JsonNode parsed = key == null ? null : parse(key);
        if (parsed == null || !parsed.isArray() || parsed.size() != 2 || !connector.equals(parsed.get(0).asText())) {
            return null;
        }
        return parsed.get(1);
    }

    private static JsonNode parse(ByteBuffer buffer) {
        ByteBuffer copy = buffer.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        try {
            return Channel.JSON.readTree(bytes);
        } catch (IOException e) {
            throw new ConnectException("An offset that is not JSON", e);
        }
    }

    private static byte[] bytes(JsonNode node) {
        try {
            return Channel.JSON.writeValueAsBytes(node);
        } catch (IOException e) {
            throw new ConnectException("Could not encode an offset", e);
        }
    }
}
