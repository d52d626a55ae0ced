package sluice.jvmhost;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM task host: what one long-lived Spark task runs to host Kafka Connect's own (Java)
 * tasks, many at once, as the Python task host hosts Python ones, speaking the same protocol
 * to the same supervisors (Sluice's {@code sluice.taskhost.protocol}).
 *
 * <p>It connects to the worker's control server and says hello; on that host connection the
 * worker sends a {@code HostTask} for each Connect task it gives the host, and the host runs
 * each on a connection of its own ({@link HostedTask}). Every heartbeat interval it tells the
 * worker, on the host connection, that it and its tasks are alive. It ends once the worker
 * closed the host connection and its tasks have ended, or when its Spark task is cancelled
 * (interrupted): then its tasks are stopped at once.
 */
public final class TaskHost {
    private static final Logger log = LoggerFactory.getLogger(TaskHost.class);

    private TaskHost() {
    }

    /** Runs a host; {@code bootstrapJson} is the launcher's bootstrap (address, incarnation, secret, runtime settings). */
    public static Object run(String bootstrapJson) throws Exception {
        JsonNode bootstrap = Channel.JSON.readTree(bootstrapJson);
        String host = bootstrap.path("address").get(0).asText();
        int port = bootstrap.path("address").get(1).asInt();
        long heartbeatMs = bootstrap.path("heartbeat_interval_ms").asLong(2000);
        TaskRuntime runtime = TaskRuntime.of((ObjectNode) bootstrap.path("runtime"));
        Channel channel = Channel.connect(host, port, bootstrap.path("incarnation").asText(),
                bootstrap.path("secret").asText());
        List<HostedTask> tasks = new ArrayList<>();
        CountDownLatch ended = new CountDownLatch(1);
        ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "sluice-jvm-host-heartbeat");
            thread.setDaemon(true);
            return thread;
        });
        heartbeats.scheduleAtFixedRate(() -> {
            ObjectNode body = Channel.JSON.createObjectNode();
            ObjectNode metrics = body.putObject("metrics");
            synchronized (tasks) {
                for (HostedTask task : tasks) {
                    task.heartbeatMetrics(metrics);
                }
            }
            try {
                channel.send("HostHeartbeat", body);
            } catch (Channel.Closed e) {
                // the reader sees it too, and ends the host
            }
        }, heartbeatMs, heartbeatMs, TimeUnit.MILLISECONDS);
        Thread reader = new Thread(() -> {
            try {
                while (true) {
                    Channel.Message order;
                    try {
                        order = channel.recv();
                    } catch (Channel.Closed e) {
                        break;
                    } catch (IOException e) {
                        log.error("Unreadable message from the worker on the host connection", e);
                        break;
                    }
                    if (!"HostTask".equals(order.type())) {
                        log.warn("Unexpected message on a JVM task host's connection: {}", order.type());
                        continue;
                    }
                    HostedTask task = new HostedTask(host, port, order.body(), runtime);
                    synchronized (tasks) {
                        tasks.removeIf(t -> !t.isAlive());
                        tasks.add(task);
                    }
                    task.start();
                }
                for (HostedTask task : snapshot(tasks)) {
                    task.join();
                }
            } finally {
                ended.countDown();
            }
        }, "sluice-jvm-host");
        reader.setDaemon(true);
        reader.start();
        try {
            ended.await();
        } catch (InterruptedException e) {
            log.info("The JVM task host's Spark task was cancelled: stopping its tasks");
            channel.close();
            for (HostedTask task : snapshot(tasks)) {
                task.cancel();
            }
            Thread.currentThread().interrupt();
        } finally {
            heartbeats.shutdownNow();
            channel.close();
        }
        return Boolean.TRUE;
    }

    private static List<HostedTask> snapshot(List<HostedTask> tasks) {
        synchronized (tasks) {
            return new ArrayList<>(tasks);
        }
    }
}
