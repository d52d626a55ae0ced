package sluice.jvmhost;

import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;
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
                    if (task instanceof AbstractWorkerSourceTask
                            && producerField.get(task) instanceof Producer<?, ?> producer
                            && !(producer instanceof Flushing<?, ?>)) {
                        producerField.set(task, new Flushing<>(producer));
                    }
                }
            }
            try {
                return method.invoke(executor, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        executorField.set(worker, Proxy.newProxyInstance(
                ExecutorService.class.getClassLoader(), new Class<?>[] {ExecutorService.class}, submitting));
    }

    private static Field field(Class<?> owner, String name) throws NoSuchFieldException {
        Field field = owner.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }

    /**
     * A producer that flushes before it commits and otherwise passes every call on. Written
     * out rather than a dynamic proxy: {@code send} runs for every record.
     */
    private static final class Flushing<K, V> implements Producer<K, V> {
        private final Producer<K, V> producer;

        Flushing(Producer<K, V> producer) {
            this.producer = producer;
        }

        @Override
        public void commitTransaction() {
            producer.flush();
            producer.commitTransaction();
        }

        @Override
        public void initTransactions() {
            producer.initTransactions();
        }

        @Override
        public void beginTransaction() {
            producer.beginTransaction();
        }

        @Override
        public void sendOffsetsToTransaction(Map<TopicPartition, OffsetAndMetadata> offsets,
                ConsumerGroupMetadata groupMetadata) {
            producer.sendOffsetsToTransaction(offsets, groupMetadata);
        }

        @Override
        public void abortTransaction() {
            producer.abortTransaction();
        }

        @Override
        public void registerMetricForSubscription(KafkaMetric metric) {
            producer.registerMetricForSubscription(metric);
        }

        @Override
        public void unregisterMetricFromSubscription(KafkaMetric metric) {
            producer.unregisterMetricFromSubscription(metric);
        }

        @Override
        public Future<RecordMetadata> send(ProducerRecord<K, V> record) {
            return producer.send(record);
        }

        @Override
        public Future<RecordMetadata> send(ProducerRecord<K, V> record, Callback callback) {
            return producer.send(record, callback);
        }

        @Override
        public void flush() {
            producer.flush();
        }

        @Override
        public List<PartitionInfo> partitionsFor(String topic) {
            return producer.partitionsFor(topic);
        }

        @Override
        public Map<MetricName, ? extends Metric> metrics() {
            return producer.metrics();
        }

        @Override
        public Uuid clientInstanceId(Duration timeout) {
            return producer.clientInstanceId(timeout);
        }

        @Override
        public void close() {
            producer.close();
        }

        @Override
        public void close(Duration timeout) {
            producer.close(timeout);
        }
    }
}
