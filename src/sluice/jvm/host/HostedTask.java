package sluice.jvmhost;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.connector.policy.ConnectorClientConfigOverridePolicy;
import org.apache.kafka.connect.runtime.TargetState;
import org.apache.kafka.connect.runtime.TaskStatus;
import org.apache.kafka.connect.runtime.Worker;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.runtime.distributed.DistributedConfig;
import org.apache.kafka.connect.runtime.standalone.StandaloneConfig;
import org.apache.kafka.connect.storage.ClusterConfigState;
import org.apache.kafka.connect.util.ConnectorTaskId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Java Connect task in a JVM task host, on a thread and a connection of its own.
 *
 * <p>The task runs in a Kafka Connect {@link Worker} of its own, built from the worker's and
 * the connector's configs as Kafka Connect builds a task: Kafka's converters, transformation
 * chain, error handling and dead letter queue, producer or consumer with the client overrides,
 * topic creation, metrics. What Kafka's worker keeps in its own topics goes to Sluice's
 * supervisor instead: the source offsets the task commits ({@link TaskOffsetStore}) and the
 * topics it uses ({@link TaskStatuses}). Its status transitions become the protocol's
 * messages: {@code Started}, {@code PausedAck}, {@code Failed} with the Java stack trace.
 *
 * <p>All that happens to the task passes through one queue, read by the task's thread: the
 * worker's messages (read by a reader thread) and the task's failure.
 */
final class HostedTask {
    private static final Logger log = LoggerFactory.getLogger(HostedTask.class);
    /** A unique object that, put on the queue, says the task failed (its trace is in {@link #failure}). */
    private static final Channel.Message FAILURE = new Channel.Message("(failure)", null);
    private static final Channel.Message GONE = new Channel.Message("(gone)", null);

    private final String host;
    private final int port;
    private final String incarnation;
    private final String secret;
    private final TaskRuntime runtime;
    private final Thread thread;
    private final BlockingQueue<Channel.Message> events = new LinkedBlockingQueue<>();
    private volatile Channel channel;
    private volatile String failure;
    /** Answers to the task's offsets go here straight from the reader: the task's own thread may be stopping the task, which waits for them. */
    private volatile TaskOffsetStore offsets;
    /** The Kafka worker running the task, and its id, once it runs (for the heartbeat's metrics). */
    private volatile Worker worker;
    private volatile ConnectorTaskId id;

    HostedTask(String host, int port, JsonNode order, TaskRuntime runtime) {
        this.host = host;
        this.port = port;
        this.incarnation = order.path("incarnation").asText();
        this.secret = order.path("secret").asText();
        this.runtime = runtime;
        this.thread = new Thread(this::run, "sluice-jvm-task-" + incarnation.substring(0, Math.min(8, incarnation.length())));
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean isAlive() {
        return thread.isAlive();
    }

    void join() {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the task as soon as possible: its host's Spark task was cancelled. */
    void cancel() {
        events.add(GONE);
        Channel current = channel;
        if (current != null) {
            current.close();
        }
    }

    /**
     * Kafka's task metrics that Sluice's supervisors keep as totals (the names of
     * {@code sluice.taskhost.metering.TaskMeter}), by Kafka's metric name. The supervisor
     * makes rates and ratios of them as it does for Python tasks.
     */
    private static final Map<String, String> TOTALS = Map.ofEntries(
            Map.entry("source-record-poll-total", "poll_total"),
            Map.entry("source-record-write-total", "write_total"),
            Map.entry("sink-record-read-total", "read_total"),
            Map.entry("sink-record-send-total", "send_total"),
            Map.entry("offset-commit-completion-total", "commit_successes"),
            Map.entry("total-record-failures", "record_failures"),
            Map.entry("total-record-errors", "record_errors"),
            Map.entry("total-records-skipped", "records_skipped"),
            Map.entry("total-retries", "retries"),
            Map.entry("total-errors-logged", "errors_logged"),
            Map.entry("deadletterqueue-produce-requests", "dlq_requests"),
            Map.entry("deadletterqueue-produce-failures", "dlq_failures"),
            Map.entry("last-error-timestamp", "last_error_ms"));

    /** The totals last sent in a heartbeat (only the heartbeat thread reads and writes it). */
    private final Map<String, Double> sent = new HashMap<>();

    /**
     * Adds this task's totals that changed since its last heartbeat, read from its Kafka
     * worker's metrics, to a host heartbeat's; a task with none changed is left out, as the
     * protocol's {@code HostHeartbeat} says.
     */
    void heartbeatMetrics(ObjectNode metrics) {
        Worker running = worker;
        ConnectorTaskId task = id;
        if (running == null || task == null) {
            return;
        }
        ObjectNode totals = Channel.JSON.createObjectNode();
        String number = Integer.toString(task.task());
        running.metrics().metrics().metrics().forEach((name, metric) -> {
            String total = TOTALS.get(name.name());
            if (total != null && task.connector().equals(name.tags().get("connector"))
                    && number.equals(name.tags().get("task"))) {
                Object value = metric.metricValue();
                if (value instanceof Number n && !Double.isNaN(n.doubleValue())
                        && !Double.valueOf(n.doubleValue()).equals(sent.put(total, n.doubleValue()))) {
                    totals.put(total, n.doubleValue());
                }
            }
        });
        if (!totals.isEmpty()) {
            metrics.set(incarnation, totals);
        }
    }

    private void run() {
        Channel current;
        try {
            current = Channel.connect(host, port, incarnation, secret);
        } catch (IOException e) {
            log.warn("A task could not connect to the worker: {}", e.toString());
            return;
        }
        channel = current;
        try {
            Channel.Message launch = current.recv();
            Thread reader = new Thread(this::readMessages, thread.getName() + "-control");
            reader.setDaemon(true);
            reader.start();
            if (!"RunJavaTask".equals(launch.type())) {
                sendFailed("A JVM task host runs only Java tasks; it was sent a " + launch.type());
            } else {
                TargetState initial = firstTargetState();
                if (initial != null) {
                    runTask(launch.body(), initial);
                }
            }
            current.send("Stopped");
        } catch (IOException e) {
            log.debug("Task {}: the worker went away: {}", incarnation, e.toString());
        } finally {
            current.close();
        }
    }

    private void readMessages() {
        Channel current = channel;
        while (true) {
            try {
                Channel.Message message = current.recv();
                TaskOffsetStore store = offsets;
                if ("Committed".equals(message.type()) && store != null) {
                    store.committed(message.body());
                } else {
                    events.add(message);
                }
            } catch (Channel.Closed e) {
                events.add(GONE);
                return;
            } catch (IOException e) {
                log.error("Unreadable message from the worker on a task's connection", e);
                events.add(GONE);
                return;
            }
        }
    }

    /** Waits for the worker's first Resume, Pause or Stop: the state to start in, or null to stop at once. */
    private TargetState firstTargetState() {
        while (true) {
            Channel.Message message = take();
            switch (message.type()) {
                case "Resume":
                    return TargetState.STARTED;
                case "Pause":
                    return TargetState.PAUSED;
                case "Stop":
                case "(gone)":
                    return null;
                default:
                    log.debug("Task {}: {} before it started, ignored", incarnation, message.type());
            }
        }
    }

    private Channel.Message take() {
        try {
            return events.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return GONE;
        }
    }

    private void runTask(JsonNode launch, TargetState initial) throws Channel.Closed {
        JsonNode spec = launch.path("task");
        String connector = spec.path("connector").asText();
        ConnectorTaskId id = new ConnectorTaskId(connector, spec.path("task").asInt());
        boolean sink = launch.path("sink").asBoolean();
        Map<String, String> connectorConfig = strings(launch.path("connector_config"));
        Map<String, String> taskConfig = strings(spec.path("task_config"));
        TaskOffsetStore offsets = new TaskOffsetStore(connector, channel, launch.path("committed_offsets"));
        this.offsets = offsets;
        Worker worker;
        try {
            worker = newWorker(launch, connectorConfig, offsets);
            this.id = id;
            this.worker = worker;
        } catch (Throwable t) {
            log.error("Task {}: could not set up Kafka Connect's worker for it", id, t);
            sendFailed(trace(t));
            return;
        }
        try {
            ClusterConfigState configState = new ClusterConfigState(
                    -1, null,
                    Map.of(connector, launch.path("task_count").asInt(1)),
                    Map.of(connector, connectorConfig),
                    Map.of(connector, initial),
                    Map.of(id, taskConfig),
                    Map.of(), Map.of(), Map.of(), Set.of(), Set.of());
            Listener listener = new Listener();
            boolean started;
            if (sink) {
                started = worker.startSinkTask(id, configState, connectorConfig, taskConfig, listener, initial);
            } else if (exactlyOnce(launch)) {
                // Kafka's ExactlyOnceWorkerSourceTask: its transactional producer fences the
                // task's earlier instances; the group's leader fenced the previous generation
                // before Sluice's herder launched the task, so no checks are left to make here.
                started = worker.startExactlyOnceSourceTask(
                        id, configState, connectorConfig, taskConfig, listener, initial, () -> { }, () -> { });
            } else {
                started = worker.startSourceTask(id, configState, connectorConfig, taskConfig, listener, initial);
            }
            if (started) {
                serve(worker, connector);
            }
            worker.stopAndAwaitTask(id);
            if (failure != null) {
                sendFailed(failure);
            }
        } finally {
            this.worker = null;
            offsets.close();
            try {
                worker.stop();
            } catch (RuntimeException e) {
                log.warn("Task {}: stopping its Kafka Connect worker failed", id, e);
            }
        }
    }

    /** Serves the worker's messages until it says stop, the task failed, or the worker went away. */
    private void serve(Worker worker, String connector) {
        while (true) {
            Channel.Message message = take();
            switch (message.type()) {
                case "Pause":
                    worker.setTargetState(connector, TargetState.PAUSED, (error, state) -> { });
                    break;
                case "Resume":
                    worker.setTargetState(connector, TargetState.STARTED, (error, state) -> { });
                    break;
                case "Assign":
                    break; // a Java sink task's partitions come from Kafka's group protocol
                case "Stop":
                case "(gone)":
                case "(failure)":
                    return;
                default:
                    log.warn("Unexpected message on a Java task's connection: {}", message.type());
            }
        }
    }

    private Worker newWorker(JsonNode launch, Map<String, String> connectorConfig, TaskOffsetStore offsets) throws Exception {
        Map<String, String> props = strings(launch.path("worker_config"));
        // The offsets of a task live in Sluice's stores; Kafka's standalone config asks for a file anyway.
        props.putIfAbsent(StandaloneConfig.OFFSET_STORAGE_FILE_FILENAME_CONFIG, "sluice-offsets-kept-by-the-worker");
        // The task's metrics reach the worker in the host's heartbeats; the worker's reporters
        // (Python classes, possibly) are the worker's to run, and JMX would see one Kafka
        // worker per task register the same worker-level names.
        props.put(WorkerConfig.METRIC_REPORTER_CLASSES_CONFIG, "");
        ProducerDefaults.apply(props, connectorConfig);
        // A source task of a worker with exactly-once support runs in a distributed Kafka
        // worker (Kafka builds ExactlyOnceWorkerSourceTask only there): its transactional
        // producer writes the offsets to the worker's offsets topic itself, read back with a
        // read_committed consumer of its own.
        WorkerConfig config = exactlyOnce(launch) ? new DistributedConfig(props) : new StandaloneConfig(props);
        ConnectorClientConfigOverridePolicy policy = runtime.plugins.newPlugin(
                config.getString(WorkerConfig.CONNECTOR_CLIENT_POLICY_CLASS_CONFIG), config,
                ConnectorClientConfigOverridePolicy.class);
        String workerId = launch.path("worker_id").asText("sluice");
        Worker worker = new Worker(workerId, Time.SYSTEM, runtime.plugins, config, offsets, policy);
        TaskStatuses.attach(worker, channel);
        if (exactlyOnce(launch)) {
            FlushBeforeCommit.install(worker);
        }
        worker.start();
        return worker;
    }

    /** Whether the launched task is a source task of a worker with exactly-once source support. */
    private static boolean exactlyOnce(JsonNode launch) {
        String support = launch.path("worker_config").path(DistributedConfig.EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG).asText("");
        return !launch.path("sink").asBoolean() && "enabled".equalsIgnoreCase(support.trim());
    }

    private void sendFailed(String trace) throws Channel.Closed {
        ObjectNode body = Channel.JSON.createObjectNode();
        body.put("trace", trace);
        channel.send("Failed", body);
    }

    static String trace(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    static Map<String, String> strings(JsonNode object) {
        Map<String, String> result = new HashMap<>();
        for (Map.Entry<String, JsonNode> field : object.properties()) {
            result.put(field.getKey(), field.getValue().isNull() ? null : field.getValue().asText());
        }
        return result;
    }

    /** The task's status transitions, as protocol messages. */
    private final class Listener implements TaskStatus.Listener {
        @Override
        public void onStartup(ConnectorTaskId id) {
            sendQuietly("Started");
        }

        @Override
        public void onPause(ConnectorTaskId id) {
            sendQuietly("PausedAck");
        }

        @Override
        public void onResume(ConnectorTaskId id) {
        }

        @Override
        public void onFailure(ConnectorTaskId id, Throwable cause) {
            failure = trace(cause);
            events.add(FAILURE);
        }

        @Override
        public void onShutdown(ConnectorTaskId id) {
        }

        @Override
        public void onDeletion(ConnectorTaskId id) {
        }

        @Override
        public void onRestart(ConnectorTaskId id) {
        }

        private void sendQuietly(String type) {
            try {
                channel.send(type);
            } catch (Channel.Closed e) {
                events.add(GONE);
            }
        }
    }
}
