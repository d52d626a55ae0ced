package sluice.jvmhost;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.connector.ConnectorContext;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.PluginDesc;
import org.apache.kafka.connect.runtime.isolation.PluginUtils;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkConnectorContext;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceConnectorContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.apache.kafka.connect.util.LoggingContext;

/**
 * The Java plugins as Sluice's worker (the Spark driver, in Python) reaches them through
 * PySpark's gateway: the plugins found on {@code plugin.path}, their config definitions, and
 * Java {@link Connector} instances (start, task configs, validate, stop). Every argument and
 * answer is a string of JSON, so that nothing but strings crosses the gateway and the isolated
 * runtime's class loader.
 *
 * <p>A connector's requests (new task configs, an error it raises) are queued for the worker,
 * which reads them with {@link #nextEvent(long)} on a thread of its own.
 */
public final class DriverRuntime {
    private final Plugins plugins;
    private final Map<String, Connector> connectors = new ConcurrentHashMap<>();
    /** The connector names of the instances that started (their log lines' context). */
    private final Map<String, String> names = new ConcurrentHashMap<>();
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private final AtomicLong ids = new AtomicLong();
    private final Metrics metrics = new Metrics();
    private final WorkerOffsetReads offsetReads = new WorkerOffsetReads();

    /** Jars the worker's {@code CLASSPATH} added to the runtime: their plugins are listed too. */
    private final Set<String> extraJars = new java.util.HashSet<>();

    public DriverRuntime(String settingsJson) throws Exception {
        ObjectNode settings = (ObjectNode) Channel.JSON.readTree(settingsJson);
        this.plugins = TaskRuntime.of(settings).plugins;
        for (String entry : settings.path(TaskRuntime.EXTRA_CLASSPATH).asText("").split(java.io.File.pathSeparator)) {
            if (!entry.isEmpty()) {
                extraJars.add(new java.io.File(entry).getCanonicalPath());
            }
        }
    }

    /** The plugins found on {@code plugin.path}: class, type, version and location of each. */
    public String plugins() throws Exception {
        ArrayNode list = Channel.JSON.createArrayNode();
        List<Set<? extends PluginDesc<?>>> all = List.of(
                plugins.sourceConnectors(), plugins.sinkConnectors(), plugins.converters(),
                plugins.headerConverters(), plugins.transformations(), plugins.predicates());
        for (Set<? extends PluginDesc<?>> kind : all) {
            for (PluginDesc<?> desc : kind) {
                if ("classpath".equals(desc.location()) && !fromExtraJar(desc)) {
                    continue; // Kafka's own, the Java twins of Sluice's built-ins
                }
                ObjectNode entry = list.addObject();
                entry.put("class", desc.className());
                entry.put("type", desc.typeName());
                entry.put("version", desc.version());
                entry.put("location", desc.location());
            }
        }
        return list.toString();
    }

    private boolean fromExtraJar(PluginDesc<?> desc) {
        try {
            java.security.CodeSource source = desc.pluginClass().getProtectionDomain().getCodeSource();
            if (source == null || source.getLocation() == null) {
                return false;
            }
            return extraJars.contains(new java.io.File(source.getLocation().toURI()).getCanonicalPath());
        } catch (Exception e) {
            return false;
        }
    }

    /** The config definition of a plugin of a version (null: the latest), as a list of keys. */
    public String configDef(String className, String version) throws Exception {
        Object plugin = plugins.newPlugin(className, PluginUtils.connectorVersionRequirement(version));
        ConfigDef def;
        try (LoaderSwap swap = swap(plugin)) {
            def = configDefOf(plugin);
        }
        return keys(def).toString();
    }

    /**
     * What the runtime loads for a converter, header converter, transformation or predicate
     * of that name (or alias): null when it loads none, else its version (null when it has none).
     */
    public String pluginInfo(String classOrAlias) {
        Object plugin;
        try {
            plugin = plugins.newPlugin(classOrAlias, null);
        } catch (Throwable t) {
            return null;
        }
        ObjectNode answer = Channel.JSON.createObjectNode();
        if (plugin instanceof org.apache.kafka.connect.components.Versioned versioned) {
            try (LoaderSwap swap = swap(plugin)) {
                answer.put("version", versioned.version());
            } catch (RuntimeException e) {
                answer.putNull("version");
            }
        } else {
            answer.putNull("version");
        }
        return answer.toString();
    }

    /** A new instance of a connector; answers its id, version and type. */
    public String newConnector(String className, String version) throws Exception {
        Connector connector = plugins.newConnector(className, PluginUtils.connectorVersionRequirement(version));
        String id = Long.toString(ids.incrementAndGet());
        connectors.put(id, connector);
        ObjectNode answer = Channel.JSON.createObjectNode();
        answer.put("id", id);
        try (LoaderSwap swap = swap(connector)) {
            answer.put("version", connector.version());
        }
        answer.put("type", connector instanceof SinkConnector ? "sink" : "source");
        return answer.toString();
    }

    public void initialize(String id) {
        Connector connector = connector(id);
        ConnectorContext context = connector instanceof SinkConnector ? new SinkContext(id) : new SourceContext(id);
        try (LoaderSwap swap = swap(connector)) {
            connector.initialize(context);
        }
    }

    public void start(String id, String propsJson) throws Exception {
        Connector connector = connector(id);
        Map<String, String> props = HostedTask.strings(Channel.JSON.readTree(propsJson));
        String name = props.get("name");
        if (name != null) {
            names.put(id, name);
        }
        try (LoaderSwap swap = swap(connector); LoggingContext logging = loggingContext(id)) {
            connector.start(props);
        }
    }

    /** The task class and the task configs the connector gives for at most {@code maxTasks} tasks. */
    public String taskConfigs(String id, int maxTasks) {
        Connector connector = connector(id);
        ObjectNode answer = Channel.JSON.createObjectNode();
        try (LoaderSwap swap = swap(connector); LoggingContext logging = loggingContext(id)) {
            answer.put("task_class", connector.taskClass().getName());
            ArrayNode configs = answer.putArray("configs");
            for (Map<String, String> config : connector.taskConfigs(maxTasks)) {
                configs.add(Channel.JSON.valueToTree(config));
            }
        }
        return answer.toString();
    }

    public void stop(String id) {
        Connector connector = connector(id);
        try (LoaderSwap swap = swap(connector); LoggingContext logging = loggingContext(id)) {
            connector.stop();
        }
    }

    /** Forgets an instance (after its stop, or when it failed to start). */
    public void release(String id) {
        connectors.remove(id);
        names.remove(id);
    }

    /** The connector's {@code config()}: its keys' definitions. */
    public String connectorConfigDef(String id) {
        Connector connector = connector(id);
        try (LoaderSwap swap = swap(connector)) {
            return keys(connector.config()).toString();
        }
    }

    /** The connector's {@code validate()}: each key's value, recommended values, errors and visibility. */
    public String validate(String id, String propsJson) throws Exception {
        Connector connector = connector(id);
        Map<String, String> props = HostedTask.strings(Channel.JSON.readTree(propsJson));
        ArrayNode values = Channel.JSON.createArrayNode();
        try (LoaderSwap swap = swap(connector)) {
            ConfigDef def = connector.config();
            Config config = connector.validate(props);
            for (ConfigValue value : config.configValues()) {
                ConfigDef.ConfigKey key = def == null ? null : def.configKeys().get(value.name());
                ObjectNode entry = values.addObject();
                entry.put("name", value.name());
                entry.put("value", text(value.value(), key));
                ArrayNode recommended = entry.putArray("recommended_values");
                for (Object item : value.recommendedValues()) {
                    recommended.add(text(item, key));
                }
                ArrayNode errors = entry.putArray("errors");
                value.errorMessages().forEach(errors::add);
                entry.put("visible", value.visible());
            }
        }
        return values.toString();
    }

    /**
     * A source connector's {@code exactlyOnceSupport} ({@code "exactly_once"}) or
     * {@code canDefineTransactionBoundaries} ({@code "transaction_boundaries"}) for a config:
     * {"answer": "SUPPORTED" | "UNSUPPORTED" | null}, or {"error": its exception's message}.
     */
    public String sourceCapability(String id, String capability, String propsJson) throws Exception {
        Connector connector = connector(id);
        Map<String, String> props = HostedTask.strings(Channel.JSON.readTree(propsJson));
        ObjectNode answer = Channel.JSON.createObjectNode();
        try (LoaderSwap swap = swap(connector)) {
            Object value = null;
            if (connector instanceof SourceConnector source) {
                value = "exactly_once".equals(capability)
                        ? source.exactlyOnceSupport(props)
                        : source.canDefineTransactionBoundaries(props);
            }
            answer.put("answer", value == null ? null : value.toString());
        } catch (Exception e) {
            answer.put("error", e.getMessage() == null ? "" : e.getMessage());
        }
        return answer.toString();
    }

    /**
     * The next request of a connector, or null after {@code timeoutMs}: {"id", "kind": "reconfigure"},
     * {"id", "kind": "error", "trace"}, or {"id", "kind": "offsets", "request", "partitions"}, which
     * the worker answers with {@link #answerOffsets(String, String)}.
     */
    public String nextEvent(long timeoutMs) throws InterruptedException {
        return events.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** The worker's answer to an {@code "offsets"} request: the offsets' JSON texts (or nulls) in order, or {"error"}. */
    public void answerOffsets(String request, String answerJson) {
        offsetReads.answer(request, answerJson);
    }

    private Connector connector(String id) {
        Connector connector = connectors.get(id);
        if (connector == null) {
            throw new IllegalStateException("No Java connector instance " + id);
        }
        return connector;
    }

    /** Kafka's "[connector|worker] " context of the connector's log lines (the instance id until it started with its name). */
    private LoggingContext loggingContext(String id) {
        return LoggingContext.forConnector(names.getOrDefault(id, id));
    }

    private LoaderSwap swap(Object plugin) {
        return plugins.withClassLoader(plugin.getClass().getClassLoader());
    }

    private static ConfigDef configDefOf(Object plugin) {
        if (plugin instanceof Connector connector) {
            return connector.config();
        }
        if (plugin instanceof org.apache.kafka.connect.storage.Converter converter) {
            return converter.config();
        }
        if (plugin instanceof org.apache.kafka.connect.storage.HeaderConverter converter) {
            return converter.config();
        }
        if (plugin instanceof org.apache.kafka.connect.transforms.Transformation<?> transformation) {
            return transformation.config();
        }
        if (plugin instanceof org.apache.kafka.connect.transforms.predicates.Predicate<?> predicate) {
            return predicate.config();
        }
        return new ConfigDef();
    }

    private static String text(Object value, ConfigDef.ConfigKey key) {
        if (value == null) {
            return null;
        }
        if (key != null) {
            return ConfigDef.convertToString(value, key.type);
        }
        return value instanceof List<?> list ? String.join(",", list.stream().map(String::valueOf).toList()) : String.valueOf(value);
    }

    static ArrayNode keys(ConfigDef def) {
        ArrayNode keys = Channel.JSON.createArrayNode();
        if (def == null) {
            return keys;
        }
        for (ConfigDef.ConfigKey key : def.configKeys().values()) {
            ObjectNode entry = keys.addObject();
            entry.put("name", key.name);
            entry.put("type", key.type.name());
            entry.put("has_default", key.hasDefault());
            entry.put("default", key.hasDefault() ? text(key.defaultValue, key) : null);
            entry.put("importance", key.importance == null ? null : key.importance.name());
            entry.put("documentation", key.documentation);
            entry.put("group", key.group);
            entry.put("order_in_group", key.orderInGroup);
            entry.put("width", key.width == null ? "NONE" : key.width.name());
            entry.put("display_name", key.displayName);
            ArrayNode dependents = entry.putArray("dependents");
            key.dependents.forEach(dependents::add);
            entry.put("internal", key.internalConfig);
        }
        return keys;
    }

    private void event(String id, String kind, Throwable error) {
        ObjectNode event = Channel.JSON.createObjectNode();
        event.put("id", id);
        event.put("kind", kind);
        if (error != null) {
            event.put("trace", HostedTask.trace(error));
        }
        events.add(event.toString());
    }

    /** What a connector instance's context does: its requests go to the worker's queue. */
    private abstract class Context implements ConnectorContext {
        final String id;
        private final PluginMetrics pluginMetrics;

        Context(String id) {
            this.id = id;
            this.pluginMetrics = new PluginMetricsImpl(metrics, Map.of("connector", id));
        }

        @Override
        public PluginMetrics pluginMetrics() {
            return pluginMetrics;
        }

        @Override
        public void requestTaskReconfiguration() {
            event(id, "reconfigure", null);
        }

        @Override
        public void raiseError(Exception e) {
            event(id, "error", e);
        }
    }

    private final class SourceContext extends Context implements SourceConnectorContext {
        SourceContext(String id) {
            super(id);
        }

        /** Made on first use (in start, once the connector's name is known), then the same one, as Kafka's. */
        private OffsetStorageReader offsetReader;

        @Override
        public synchronized OffsetStorageReader offsetStorageReader() {
            if (offsetReader == null) {
                offsetReader = offsetReads.reader(names.getOrDefault(id, id), request -> {
                    request.put("id", id);
                    request.put("kind", "offsets");
                    events.add(request.toString());
                });
            }
            return offsetReader;
        }
    }

    private final class SinkContext extends Context implements SinkConnectorContext {
        SinkContext(String id) {
            super(id);
        }
    }
}
