package sluice.jvmhost;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.runtime.isolation.Plugins;

/**
 * Kafka Connect's plugins as one JVM sees them: {@code plugin.path} scanned once with Kafka's
 * own isolation ({@link Plugins}: each plugin in a class loader of its own, the Connect API,
 * kafka-clients and logging from the runtime) and shared by every task host and the driver's
 * plugin registry in that JVM with the same settings.
 */
final class TaskRuntime {
    private static final Map<String, TaskRuntime> RUNTIMES = new ConcurrentHashMap<>();
    /** The setting that lists the jars the worker's {@code CLASSPATH} adds to the runtime. */
    static final String EXTRA_CLASSPATH = "sluice.runtime.classpath.extra";

    final Plugins plugins;

    private TaskRuntime(Map<String, String> settings) {
        this.plugins = scan(settings);
    }

    /**
     * Kafka's scan of the worker's own class path reads {@code java.class.path}: in Spark's
     * JVM, Spark's hundreds of jars, none of which this runtime's loader can load (scanned by
     * reflection they take more heap than a driver of 512 MB has). The runtime's class path is
     * its loader's; the property is blank while the plugins are scanned, once per JVM.
     */
    private static synchronized Plugins scan(Map<String, String> settings) {
        String classPath = System.getProperty("java.class.path");
        System.setProperty("java.class.path", "");
        try {
            return new Plugins(settings);
        } finally {
            if (classPath != null) {
                System.setProperty("java.class.path", classPath);
            }
        }
    }

    /** The runtime for these plugin settings ({@code plugin.path}, {@code plugin.discovery}). */
    static TaskRuntime of(ObjectNode settings) {
        Map<String, String> props = HostedTask.strings(settings);
        return RUNTIMES.computeIfAbsent(new java.util.TreeMap<>(props).toString(), key -> new TaskRuntime(props));
    }
}
