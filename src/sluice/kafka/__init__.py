"""Kafka-client plumbing shared by the worker's runtime, its stores and the task hosts.

* :mod:`sluice.kafka.settings` — librdkafka settings of Java client configs, and the
  settings Kafka Connect's delivery contract gives a task's producer and consumer;
* :mod:`sluice.kafka.security` — Java-style ``security.protocol``/``ssl.*``/``sasl.*``
  settings translated for librdkafka and kafka-python, and the login check;
* :mod:`sluice.kafka.errors` — which librdkafka errors are transient, which end a task;
* :mod:`sluice.kafka.retries` — a client call retried through transient errors;
* :mod:`sluice.kafka.topics` — topic creation (``topic.creation.*`` groups, missing topics);
* :mod:`sluice.kafka.clients` — the factory the task loops get their clients from.

Imports :mod:`sluice.api`, :mod:`sluice.tls` and :mod:`sluice._java` only, so every layer
that talks to Kafka (runtime, storage, the executor-side task host) may use it.
"""
