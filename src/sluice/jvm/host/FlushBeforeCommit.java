package sluice.jvmhost;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.connect.runtime.AbstractWorkerSourceTask;
import org.apache.kafka.connect.runtime.Worker;

/**
 * Makes the transactional producer of an exactly-once Java source task flush before each
 * {@code commitTransaction}.
 *
 * <p>Why: Kafka's producer (4.3.1) decides whether EndTxn may go out from
 * {@code accumulator.hasIncomplete()}, read by its sender thread before it takes the
 * transaction manager's lock. If the task thread appends a record and calls
 * {@code commitTransaction} in between, the sender acts on the stale "no batch pending" and
 * sends EndTxn ahead of the batch. With transactions V2 the coordinator never saw the
 * partition join the transaction, answers INVALID_TXN_STATE, and the task fails.
 * {@code ExactlyOnceWorkerSourceTask} commits after every poll, often of a single record, so
 * on a busy machine the window is hit within minutes. After a flush no batch is pending, so
 * the stale read is the true one. The flush waits for what the commit waits for anyway.
 */
final class FlushBeforeCommit {
    private FlushBeforeCommit() {
    }

    /**
     * Wraps the producer of each source task the worker starts from now on. A task is in
     * the worker's task map before it is submitted to the worker's executor, so wrapping at
     * submission happens before the task's thread first uses its producer.
     */
    static void install(Worker worker) throws ReflectiveOperationException {
        Field executorField = field(Worker.class, "executor");
        ExecutorService executor = (ExecutorService) executorField.get(worker);
        Map<?, ?> tasks = (Map<?, ?>) field(Worker.class, "tasks").get(worker);
        Field producerField = field(AbstractWorkerSourceTask.class, "producer");
        InvocationHandler submitting = (proxy, method, args) -> {
            if (method.getName().equals("submit")) {
                for (Object task : tasks.values()) {
                    if (task instanceof AbstractWorkerSourceTask) {
                        Producer<?, ?> producer = (Producer<?, ?>) producerField.get(task);
                        if (!Proxy.isProxyClass(producer.getClass())) {
                            producerField.set(task, flushing(producer));
                        }
                    }
                }
            }
            return delegate(executor, method, args);
        };
        executorField.set(worker, Proxy.newProxyInstance(
                ExecutorService.class.getClassLoader(), new Class<?>[] {ExecutorService.class}, submitting));
    }

    private static Producer<?, ?> flushing(Producer<?, ?> producer) {
        InvocationHandler committing = (proxy, method, args) -> {
            if (method.getName().equals("commitTransaction")) {
                producer.flush();
            }
            return delegate(producer, method, args);
        };
        return (Producer<?, ?>) Proxy.newProxyInstance(
                Producer.class.getClassLoader(), new Class<?>[] {Producer.class}, committing);
    }

    private static Object delegate(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static Field field(Class<?> owner, String name) throws NoSuchFieldException {
        Field field = owner.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }
}
