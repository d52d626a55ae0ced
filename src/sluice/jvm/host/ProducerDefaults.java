package sluice.jvmhost;

import java.util.Map;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.connect.runtime.ConnectorConfig;

/**
 * The producer settings a Java task gets in the JVM task host where neither the worker
 * ({@code producer.*}) nor its connector ({@code producer.override.*}) sets them.
 *
 * <p>{@code buffer.memory} is 1 MiB here, not Kafka's 32 MiB. A source task's producer sends
 * with {@code max.in.flight.requests.per.connection=1} (Kafka Connect's setting), so one
 * request of at most {@code max.request.size} (1 MiB) is on its way to each broker; what the
 * buffer holds beyond the next request adds no throughput. It costs heap: every buffered record
 * keeps its {@code SourceRecord}, {@code ProducerRecord} and callback alive until acknowledged,
 * several times the buffer's bytes for small records (a source of 100-byte records held
 * 150–270 MB live with 32 MiB), and all tasks of a task host share one JVM with Spark. The
 * buffer is never smaller than one request or one batch, so every record that Kafka's limits
 * let through still fits.
 */
final class ProducerDefaults {
    static final long BUFFER_MEMORY = 1024L * 1024L;
    private static final String WORKER_PREFIX = "producer.";
    private static final String CONNECTOR_PREFIX = ConnectorConfig.CONNECTOR_CLIENT_PRODUCER_OVERRIDES_PREFIX;

    private ProducerDefaults() {
    }

    /** Adds the host's producer defaults to a task's worker config, where nothing sets them. */
    static void apply(Map<String, String> workerProps, Map<String, String> connectorConfig) {
        String key = ProducerConfig.BUFFER_MEMORY_CONFIG;
        if (workerProps.get(WORKER_PREFIX + key) != null || connectorConfig.get(CONNECTOR_PREFIX + key) != null) {
            return;
        }
        long buffer = Math.max(BUFFER_MEMORY, Math.max(
                effective(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, workerProps, connectorConfig),
                effective(ProducerConfig.BATCH_SIZE_CONFIG, workerProps, connectorConfig)));
        workerProps.put(WORKER_PREFIX + key, Long.toString(buffer));
    }

    /** A size the task's producer will use as Kafka's worker merges it, or 0 where it is Kafka's default or unreadable (Kafka reports that). */
    private static long effective(String key, Map<String, String> workerProps, Map<String, String> connectorConfig) {
        String value = connectorConfig.get(CONNECTOR_PREFIX + key);
        if (value == null) {
            value = workerProps.get(WORKER_PREFIX + key);
        }
        if (value == null) {
            return 0;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
