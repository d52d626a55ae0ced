package sluice.jvmhost;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.connect.runtime.Herder;
import org.apache.kafka.connect.runtime.TopicStatus;
import org.apache.kafka.connect.runtime.Worker;
import org.apache.kafka.connect.storage.StatusBackingStore;

/**
 * What a Kafka Connect worker in a JVM task host reaches through its herder: the status
 * store, where a task records the topics it uses. Statuses are Sluice's supervisor's to
 * write; of this store only the topics are used, and sent to the supervisor as
 * {@code TopicsSeen}. Every other call answers nothing (null, false, zero).
 */
final class TaskStatuses {
    private TaskStatuses() {
    }

    static void attach(Worker worker, Channel channel) throws ReflectiveOperationException {
        Set<String> seen = ConcurrentHashMap.newKeySet();
        StatusBackingStore store = proxy(StatusBackingStore.class, (method, args) -> {
            if (method.getName().equals("getTopic")) {
                return seen.contains((String) args[1]) ? new TopicStatus((String) args[1], (String) args[0], 0, 0L) : null;
            }
            if (method.getName().equals("put") && args[0] instanceof TopicStatus status) {
                if (seen.add(status.topic())) {
                    ObjectNode body = Channel.JSON.createObjectNode();
                    body.putArray("topics").add(status.topic());
                    try {
                        channel.send("TopicsSeen", body);
                    } catch (Channel.Closed e) {
                        // the task's thread hears of it
                    }
                }
            }
            return null;
        });
        Herder herder = proxy(Herder.class, (method, args) ->
                method.getName().equals("statusBackingStore") ? store : null);
        // Kafka's herder sets this package-private field of its worker; a task host has no herder.
        Field field = Worker.class.getDeclaredField("herder");
        field.setAccessible(true);
        field.set(worker, herder);
    }

    private interface Handler {
        Object handle(Method method, Object[] args);
    }

    private static <T> T proxy(Class<T> type, Handler handler) {
        Object instance = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (self, method, args) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "hashCode" -> System.identityHashCode(self);
                    case "equals" -> self == args[0];
                    default -> type.getSimpleName() + " of a JVM task host";
                };
            }
            Object result = handler.handle(method, args == null ? new Object[0] : args);
            return result != null ? result : empty(method.getReturnType());
        });
        return type.cast(instance);
    }

    /** What a proxy answers for a call it does not serve: null, or a primitive's zero. */
    private static final Map<Class<?>, Object> ZEROS = Map.of(
            boolean.class, false, byte.class, (byte) 0, short.class, (short) 0, int.class, 0,
            long.class, 0L, float.class, 0.0f, double.class, 0.0, char.class, '\0');

    private static Object empty(Class<?> type) {
        return type == List.class ? List.of() : ZEROS.get(type);
    }
}
