"""Apache Kafka's single message transforms and predicates, under Kafka's class names
(``org.apache.kafka.connect.transforms.InsertField$Value``, …); they import only
:mod:`sluice.api`."""
