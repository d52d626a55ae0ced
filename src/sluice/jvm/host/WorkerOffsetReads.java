package sluice.jvmhost;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.ConverterConfig;
import org.apache.kafka.connect.storage.ConverterType;
import org.apache.kafka.connect.storage.OffsetBackingStore;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.apache.kafka.connect.storage.OffsetStorageReaderImpl;
import org.apache.kafka.connect.util.Callback;

/**
 * The source offsets a Java connector instance reads ({@code SourceConnectorContext.offsetStorageReader()}):
 * Kafka's own reader over a store that asks the worker, which keeps the offsets. A lookup is
 * queued as a {@code "offsets"} request with the partitions (their JSON) and waits for
 * {@link #answer(String, String)}: the offsets in the same order, each as the JSON Kafka
 * stores or null.
 */
final class WorkerOffsetReads {
    /** How long a lookup waits for the worker before it fails (the worker never answering). */
    private static final long ANSWER_TIMEOUT_MS = 60_000;

    private final Map<String, CompletableFuture<JsonNode>> waiting = new ConcurrentHashMap<>();
    private final AtomicLong requests = new AtomicLong();

    /**
     * A reader of connector {@code name}'s offsets, as Kafka's worker gives a connector;
     * {@code send} queues its requests (their {@code "request"} and {@code "partitions"} set) for the worker.
     */
    OffsetStorageReader reader(String name, Consumer<ObjectNode> send) {
        return new OffsetStorageReaderImpl(new Lookups(name, send), name, internalConverter(true), internalConverter(false));
    }

    /** The worker's answer to request {@code request}: a JSON array, or an object with an {@code "error"}. */
    void answer(String request, String answerJson) {
        CompletableFuture<JsonNode> future = waiting.remove(request);
        if (future == null) {
            return;
        }
        try {
            JsonNode answer = Channel.JSON.readTree(answerJson);
            if (answer.has("error")) {
                future.completeExceptionally(new ConnectException("Reading offsets failed: " + answer.get("error").asText()));
            } else {
                future.complete(answer);
            }
        } catch (IOException e) {
            future.completeExceptionally(new ConnectException("The worker's offsets are not JSON", e));
        }
    }

    /** Kafka's internal converter of offsets' keys and values: JSON without schemas. */
    private static JsonConverter internalConverter(boolean isKey) {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of(
                JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false",
                ConverterConfig.TYPE_CONFIG, (isKey ? ConverterType.KEY : ConverterType.VALUE).getName()));
        return converter;
    }

    /** A backing store that only reads, each lookup a request to the worker. */
    private final class Lookups implements OffsetBackingStore {
        private final String connector;
        private final Consumer<ObjectNode> send;

        Lookups(String connector, Consumer<ObjectNode> send) {
            this.connector = connector;
            this.send = send;
        }

        @Override
        public Future<Map<ByteBuffer, ByteBuffer>> get(Collection<ByteBuffer> keys) {
            List<ByteBuffer> asked = new ArrayList<>();
            ObjectNode request = Channel.JSON.createObjectNode();
            String id = Long.toString(requests.incrementAndGet());
            request.put("request", id);
            ArrayNode partitions = request.putArray("partitions");
            for (ByteBuffer key : keys) {
                JsonNode partition = TaskOffsetStore.partitionOf(connector, key);
                if (partition != null) {
                    asked.add(key);
                    partitions.add(partition);
                }
            }
            if (asked.isEmpty()) {
                return CompletableFuture.completedFuture(new HashMap<>());
            }
            CompletableFuture<JsonNode> answer = new CompletableFuture<>();
            waiting.put(id, answer);
            send.accept(request);
            return answer.orTimeout(ANSWER_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                    .whenComplete((ignored, error) -> waiting.remove(id))
                    .thenApply(offsets -> {
                        Map<ByteBuffer, ByteBuffer> found = new HashMap<>();
                        for (int i = 0; i < asked.size() && i < offsets.size(); i++) {
                            JsonNode offset = offsets.get(i);
                            if (offset != null && !offset.isNull()) {
                                found.put(asked.get(i), ByteBuffer.wrap(offset.asText().getBytes(StandardCharsets.UTF_8)));
                            }
                        }
                        return found;
                    });
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
        public Future<Void> set(Map<ByteBuffer, ByteBuffer> values, Callback<Void> callback) {
            throw new UnsupportedOperationException("A connector's offset reader does not write offsets");
        }

        @Override
        public Set<Map<String, Object>> connectorPartitions(String connectorName) {
            return Set.of();
        }
    }
}
