package sluice.kafka;

import java.util.Map;

import org.apache.kafka.clients.producer.ProducerInterceptor;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * Gives each record the timestamp its source task chose. Spark's Kafka sink has no timestamp
 * column, so Sluice's executors append a source record's timestamp (milliseconds) to its topic
 * name after a NUL character, which no topic name contains; this interceptor of Spark's
 * producer cuts it off again and sets it as the record's timestamp.
 */
public class SourceTimestampInterceptor implements ProducerInterceptor<byte[], byte[]> {
    @Override
    public ProducerRecord<byte[], byte[]> onSend(ProducerRecord<byte[], byte[]> record) {
        String topic = record.topic();
        int cut = topic.indexOf('\0');
        if (cut < 0) {
            return record;
        }
        long timestamp = Long.parseLong(topic.substring(cut + 1));
        return new ProducerRecord<>(topic.substring(0, cut), record.partition(), timestamp, record.key(), record.value(),
                record.headers());
    }

    @Override
    public void onAcknowledgement(RecordMetadata metadata, Exception exception) {
    }

    @Override
    public void close() {
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }
}
