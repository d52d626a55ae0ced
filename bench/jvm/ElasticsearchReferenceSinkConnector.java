/*
 * bench/elasticsearch_sink.py's Kafka Connect side: a minimal Kafka Connect sink with
 * Confluent's request shape, written for the benchmark because no Kafka Connect
 * Elasticsearch/OpenSearch sink resolves from Maven Central. It is not Confluent's connector.
 * Compiled at run time with javac against Kafka Connect's own jars (no other dependency) and
 * loaded from a plugin.path directory.
 *
 * What it does per record, as Confluent's kafka-connect-elasticsearch does with
 * key.ignore=false, schema.ignore=false, write.method=INSERT:
 *  - the document is the record value (a Struct from the worker's converter) written by
 *    Kafka's JsonConverter with schemas.enable=false (Timestamp fields as epoch ms);
 *  - the index is the topic lower-cased, created with PUT /<index> on first use (an existing
 *    one is fine), then given a mapping derived from the value schema when it has none;
 *  - the action is {"index":{"_index":i,"_id":<key as a string>,"version":<Kafka offset>,
 *    "version_type":"external"}}; a version conflict in the answer is a replay and ignored,
 *    any other item failure fails the task (behavior.on.malformed.documents=fail);
 *  - actions go out as _bulk NDJSON: a batch is sent when it holds batch.size actions or
 *    bulk.size.bytes, and a partial one by a timer every linger.ms (the flush interval of the
 *    bulk processor Confluent uses), with at most max.in.flight.requests bulks in flight
 *    (put() blocks for a free slot); a request failing with an I/O error, 429 or 5xx is
 *    retried max.retries times with exponential backoff from retry.backoff.ms;
 *  - offsets: flush() (called by the default preCommit()) sends the partial batch and waits
 *    until every bulk sent so far is acknowledged, so the worker commits only offsets whose
 *    documents are in the index.
 * Left out: Confluent's per-record pre-pass over the value (decimals to doubles, maps to
 * arrays, defaults for null fields; a no-op for the benchmark's flat struct), null values
 * (a DataException, as behavior.on.null.values=fail), data streams, upserts, deletes,
 * security, the dead letter queue and null_value defaults in the mapping.
 *
 * HTTP: java.net.http.HttpClient (HTTP/1.1; it opens as many connections as requests are in
 * flight).
 */
package sluice.bench;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

public final class ElasticsearchReferenceSinkConnector extends SinkConnector {

    static final String CONNECTION_URL = "connection.url";
    static final String BATCH_SIZE = "batch.size";
    static final String BULK_SIZE_BYTES = "bulk.size.bytes";
    static final String MAX_IN_FLIGHT = "max.in.flight.requests";
    static final String LINGER_MS = "linger.ms";
    static final String FLUSH_TIMEOUT_MS = "flush.timeout.ms";
    static final String MAX_RETRIES = "max.retries";
    static final String RETRY_BACKOFF_MS = "retry.backoff.ms";
    static final String CONNECTION_TIMEOUT_MS = "connection.timeout.ms";
    static final String READ_TIMEOUT_MS = "read.timeout.ms";
    static final String KEY_IGNORE = "key.ignore";
    static final String SCHEMA_IGNORE = "schema.ignore";

    // Confluent's names and defaults
    static final ConfigDef CONFIG = new ConfigDef()
            .define(CONNECTION_URL, ConfigDef.Type.LIST, ConfigDef.Importance.HIGH, "Server URLs (the first is used).")
            .define(BATCH_SIZE, ConfigDef.Type.INT, 2000, ConfigDef.Importance.MEDIUM, "Actions per bulk request.")
            .define(BULK_SIZE_BYTES, ConfigDef.Type.LONG, 5L * 1024 * 1024, ConfigDef.Importance.LOW, "Bytes per bulk request.")
            .define(MAX_IN_FLIGHT, ConfigDef.Type.INT, 5, ConfigDef.Importance.MEDIUM, "Bulk requests in flight per task.")
            .define(LINGER_MS, ConfigDef.Type.LONG, 1L, ConfigDef.Importance.LOW, "Interval of sending partial batches.")
            .define(FLUSH_TIMEOUT_MS, ConfigDef.Type.LONG, 180_000L, ConfigDef.Importance.LOW, "flush() waits this long.")
            .define(MAX_RETRIES, ConfigDef.Type.INT, 5, ConfigDef.Importance.LOW, "Retries of a failed request.")
            .define(RETRY_BACKOFF_MS, ConfigDef.Type.LONG, 100L, ConfigDef.Importance.LOW, "First retry backoff.")
            .define(CONNECTION_TIMEOUT_MS, ConfigDef.Type.INT, 1000, ConfigDef.Importance.LOW, "Connect timeout.")
            .define(READ_TIMEOUT_MS, ConfigDef.Type.INT, 3000, ConfigDef.Importance.LOW, "Response timeout.")
            .define(KEY_IGNORE, ConfigDef.Type.BOOLEAN, false, ConfigDef.Importance.LOW, "Only false is supported.")
            .define(SCHEMA_IGNORE, ConfigDef.Type.BOOLEAN, false, ConfigDef.Importance.LOW, "Only false is supported.");

    private Map<String, String> props;

    @Override
    public String version() {
        return "bench";
    }

    @Override
    public void start(Map<String, String> props) {
        AbstractConfig config = new AbstractConfig(CONFIG, props);
        if (config.getBoolean(KEY_IGNORE) || config.getBoolean(SCHEMA_IGNORE)) {
            throw new ConnectException("this reference sink supports key.ignore=false and schema.ignore=false only");
        }
        this.props = new HashMap<>(props);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ReferenceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> configs = new ArrayList<>();
        for (int i = 0; i < maxTasks; i++) {
            configs.add(new HashMap<>(props));
        }
        return configs;
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return CONFIG;
    }

    /** The task: records → bulk batches → asynchronous requests. */
    public static final class ReferenceTask extends SinkTask {

        private static final ObjectMapper MAPPER = new ObjectMapper();
        private static final byte[] VERSION = ",\"version\":".getBytes(StandardCharsets.UTF_8);
        private static final byte[] ACTION_END = ",\"version_type\":\"external\"}}\n".getBytes(StandardCharsets.UTF_8);

        private final JsonConverter converter = new JsonConverter();
        private final Object lock = new Object();
        private final Set<String> knownIndices = new HashSet<>();
        private final Map<String, byte[]> actionPrefixes = new HashMap<>();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();

        private HttpClient client;
        private String baseUrl;
        private URI bulkUri;
        private int batchSize;
        private long bulkBytes;
        private int maxInFlight;
        private long flushTimeoutMs;
        private int maxRetries;
        private long retryBackoffMs;
        private Duration readTimeout;
        private Semaphore inFlight;
        private ScheduledExecutorService timers;

        // the batch being filled, guarded by lock
        private byte[] buffer = new byte[1 << 20];
        private int length;
        private int actions;

        @Override
        public String version() {
            return "bench";
        }

        @Override
        public void start(Map<String, String> props) {
            AbstractConfig config = new AbstractConfig(CONFIG, props);
            baseUrl = config.getList(CONNECTION_URL).get(0).replaceAll("/+$", "");
            bulkUri = URI.create(baseUrl + "/_bulk");
            batchSize = config.getInt(BATCH_SIZE);
            bulkBytes = config.getLong(BULK_SIZE_BYTES);
            maxInFlight = config.getInt(MAX_IN_FLIGHT);
            flushTimeoutMs = config.getLong(FLUSH_TIMEOUT_MS);
            maxRetries = config.getInt(MAX_RETRIES);
            retryBackoffMs = config.getLong(RETRY_BACKOFF_MS);
            readTimeout = Duration.ofMillis(config.getInt(READ_TIMEOUT_MS));
            inFlight = new Semaphore(maxInFlight);
            client = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofMillis(config.getInt(CONNECTION_TIMEOUT_MS)))
                    .build();
            Map<String, Object> converterConfig = new HashMap<>();
            converterConfig.put("schemas.enable", "false");
            converter.configure(converterConfig, false);
            timers = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "reference-es-sink-linger");
                t.setDaemon(true);
                return t;
            });
            long linger = Math.max(1L, config.getLong(LINGER_MS));
            timers.scheduleAtFixedRate(this::lingerFlush, linger, linger, TimeUnit.MILLISECONDS);
        }

        @Override
        public void put(Collection<SinkRecord> records) {
            checkFailure();
            for (SinkRecord record : records) {
                String index = indexFor(record.topic());
                if (!knownIndices.contains(index)) {
                    ensureIndex(index, record.valueSchema());
                    knownIndices.add(index);
                }
                if (record.value() == null) {
                    throw new DataException("null value at " + record.topic() + "-" + record.kafkaPartition() + "@"
                            + record.kafkaOffset() + " (behavior.on.null.values=fail)");
                }
                byte[] doc = converter.fromConnectData(record.topic(), record.valueSchema(), record.value());
                byte[] id = JsonStringEncoder.getInstance().quoteAsUTF8(documentId(record));
                byte[] offset = Long.toString(record.kafkaOffset()).getBytes(StandardCharsets.US_ASCII);
                byte[] prefix = actionPrefixes.get(index);
                synchronized (lock) {
                    append(prefix);
                    append(id);
                    append('"');
                    append(VERSION);
                    append(offset);
                    append(ACTION_END);
                    append(doc);
                    append('\n');
                    actions++;
                    if (actions >= batchSize || length >= bulkBytes) {
                        sendBatch();
                    }
                }
            }
        }

        @Override
        public void flush(Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets) {
            synchronized (lock) {
                if (actions > 0) {
                    sendBatch();
                }
            }
            try {
                // every permit back: every bulk sent so far has been answered
                if (!inFlight.tryAcquire(maxInFlight, flushTimeoutMs, TimeUnit.MILLISECONDS)) {
                    throw new ConnectException("bulk requests not answered within flush.timeout.ms=" + flushTimeoutMs);
                }
                inFlight.release(maxInFlight);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ConnectException("interrupted while waiting for bulk requests", e);
            }
            checkFailure();
        }

        @Override
        public void stop() {
            if (timers != null) {
                timers.shutdownNow();
            }
        }

        private static String indexFor(String topic) {
            return topic.toLowerCase(Locale.ROOT);
        }

        private static String documentId(SinkRecord record) {
            Object key = record.key();
            if (key instanceof String || key instanceof Byte || key instanceof Short || key instanceof Integer
                    || key instanceof Long) {
                String id = key.toString();
                if (!id.isEmpty()) {
                    return id;
                }
            }
            throw new DataException("key " + key + " of " + record.topic() + "-" + record.kafkaPartition() + "@"
                    + record.kafkaOffset() + " is not a non-empty string or integer (key.ignore=false)");
        }

        private void lingerFlush() {
            try {
                synchronized (lock) {
                    if (actions > 0) {
                        sendBatch();
                    }
                }
            } catch (RuntimeException e) {
                failure.compareAndSet(null, e);
            }
        }

        private void checkFailure() {
            Throwable t = failure.get();
            if (t != null) {
                throw new ConnectException("bulk request failed: " + t.getMessage(), t);
            }
        }

        private void append(byte[] bytes) {
            if (length + bytes.length > buffer.length) {
                buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, length + bytes.length));
            }
            System.arraycopy(bytes, 0, buffer, length, bytes.length);
            length += bytes.length;
        }

        private void append(char c) {
            if (length + 1 > buffer.length) {
                buffer = Arrays.copyOf(buffer, buffer.length * 2);
            }
            buffer[length++] = (byte) c;
        }

        /** Sends the current batch (called with lock held); blocks for a free in-flight slot. */
        private void sendBatch() {
            byte[] body = Arrays.copyOf(buffer, length);
            length = 0;
            actions = 0;
            try {
                inFlight.acquire();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ConnectException("interrupted while waiting for a free bulk slot", e);
            }
            send(body, 0);
        }

        private void send(byte[] body, int attempt) {
            HttpRequest request = HttpRequest.newBuilder(bulkUri)
                    .timeout(readTimeout)
                    .header("Content-Type", "application/x-ndjson")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                    .build();
            client.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).whenComplete((response, error) -> {
                boolean retriable = error != null || response.statusCode() == 429 || response.statusCode() >= 500;
                if (retriable && attempt < maxRetries) {
                    long wait = retryBackoffMs << Math.min(attempt, 10);
                    CompletableFuture.delayedExecutor(wait, TimeUnit.MILLISECONDS).execute(() -> send(body, attempt + 1));
                    return;
                }
                try {
                    if (error != null) {
                        failure.compareAndSet(null, error);
                    } else if (response.statusCode() != 200) {
                        failure.compareAndSet(null, new ConnectException("_bulk answered " + response.statusCode() + ": "
                                + abbreviate(new String(response.body(), StandardCharsets.UTF_8))));
                    } else {
                        checkItems(response.body());
                    }
                } catch (RuntimeException e) {
                    failure.compareAndSet(null, e);
                } finally {
                    inFlight.release();
                }
            });
        }

        /** Item failures other than version conflicts (replays of older offsets) fail the task. */
        private void checkItems(byte[] body) {
            String head = new String(body, 0, Math.min(body.length, 64), StandardCharsets.UTF_8);
            if (head.contains("\"errors\":false")) {
                return;
            }
            JsonNode root;
            try {
                root = MAPPER.readTree(body);
            } catch (IOException e) {
                throw new ConnectException("unreadable _bulk answer: " + abbreviate(new String(body, StandardCharsets.UTF_8)), e);
            }
            if (!root.path("errors").asBoolean(true)) {
                return;
            }
            for (JsonNode item : root.path("items")) {
                JsonNode result = item.elements().hasNext() ? item.elements().next() : item;
                JsonNode error = result.get("error");
                if (error == null) {
                    continue;
                }
                if ("version_conflict_engine_exception".equals(error.path("type").asText())) {
                    continue;
                }
                throw new ConnectException("indexing " + result.path("_id").asText() + " failed: " + error);
            }
        }

        private static String abbreviate(String text) {
            return text.length() > 2000 ? text.substring(0, 2000) + "…" : text;
        }

        // ------------------------------------------------------------------ index and mapping

        private void ensureIndex(String index, Schema valueSchema) {
            byte[] quoted = JsonStringEncoder.getInstance().quoteAsUTF8(index);
            actionPrefixes.put(index, ("{\"index\":{\"_index\":\"" + new String(quoted, StandardCharsets.UTF_8)
                    + "\",\"_id\":\"").getBytes(StandardCharsets.UTF_8));
            HttpResponse<String> created = call("PUT", "/" + index, null);
            if (created.statusCode() != 200 && !created.body().contains("resource_already_exists_exception")) {
                throw new ConnectException("creating index " + index + " answered " + created.statusCode() + ": "
                        + abbreviate(created.body()));
            }
            if (valueSchema == null) {
                throw new DataException("a record of " + index + " has no value schema (schema.ignore=false)");
            }
            HttpResponse<String> current = call("GET", "/" + index + "/_mapping", null);
            JsonNode properties;
            try {
                properties = MAPPER.readTree(current.body()).path(index).path("mappings").path("properties");
            } catch (IOException e) {
                throw new ConnectException("unreadable mapping of " + index, e);
            }
            if (properties.size() > 0) {
                return;
            }
            String mapping = mapping(valueSchema).toString();
            HttpResponse<String> put = call("PUT", "/" + index + "/_mapping", mapping);
            if (put.statusCode() != 200) {
                throw new ConnectException("putting the mapping of " + index + " answered " + put.statusCode() + ": "
                        + abbreviate(put.body()));
            }
        }

        private HttpResponse<String> call(String method, String path, String json) {
            HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(60));
            if (json == null) {
                builder.method(method, HttpRequest.BodyPublishers.noBody());
            } else {
                builder.header("Content-Type", "application/json")
                        .method(method, HttpRequest.BodyPublishers.ofString(json));
            }
            try {
                return client.send(builder.build(), HttpResponse.BodyHandlers.ofString());
            } catch (IOException e) {
                throw new ConnectException(method + " " + path + " failed", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ConnectException(method + " " + path + " interrupted", e);
            }
        }

        /** The mapping of a value schema, with the types Confluent's sink gives each Connect type. */
        static ObjectNode mapping(Schema schema) {
            if (schema.type() != Schema.Type.STRUCT) {
                throw new DataException("the value schema is " + schema.type() + ", not a struct");
            }
            return properties(schema);
        }

        private static ObjectNode properties(Schema struct) {
            ObjectNode props = JsonNodeFactory.instance.objectNode();
            for (Field field : struct.fields()) {
                props.set(field.name(), fieldMapping(field.schema()));
            }
            ObjectNode node = JsonNodeFactory.instance.objectNode();
            node.set("properties", props);
            return node;
        }

        private static ObjectNode fieldMapping(Schema schema) {
            ObjectNode node = JsonNodeFactory.instance.objectNode();
            String name = schema.name();
            if (Date.LOGICAL_NAME.equals(name) || Time.LOGICAL_NAME.equals(name) || Timestamp.LOGICAL_NAME.equals(name)) {
                return node.put("type", "date");
            }
            if (Decimal.LOGICAL_NAME.equals(name)) {
                return node.put("type", "double");
            }
            switch (schema.type()) {
                case BOOLEAN: return node.put("type", "boolean");
                case INT8: return node.put("type", "byte");
                case INT16: return node.put("type", "short");
                case INT32: return node.put("type", "integer");
                case INT64: return node.put("type", "long");
                case FLOAT32: return node.put("type", "float");
                case FLOAT64: return node.put("type", "double");
                case BYTES: return node.put("type", "binary");
                case STRING: {
                    node.put("type", "text");
                    ObjectNode keyword = JsonNodeFactory.instance.objectNode().put("type", "keyword").put("ignore_above", 256);
                    node.putObject("fields").set("keyword", keyword);
                    return node;
                }
                case ARRAY: return fieldMapping(schema.valueSchema());
                case MAP: {
                    ObjectNode props = node.putObject("properties");
                    props.set("key", fieldMapping(schema.keySchema()));
                    props.set("value", fieldMapping(schema.valueSchema()));
                    return node;
                }
                case STRUCT: return properties(schema);
                default: throw new DataException("no mapping for " + schema.type());
            }
        }
    }
}
