"""The driver's side of the data plane on Spark, and the only package that imports PySpark.

* :mod:`sluice.spark.session` — the worker's SparkSession (its JVM, logging, Kafka jars);
* :mod:`sluice.spark.launcher` — runs Connect tasks in task hosts, long-lived Spark tasks
  whose Python function (:mod:`sluice.taskhost.host`) runs many Connect tasks;
* :mod:`sluice.spark.daemon` — Spark's Python daemon with the task host loaded before it
  forks the hosts;
* :mod:`sluice.spark.control` — the control server the task hosts connect back to, and each
  launch's connection;
* :mod:`sluice.spark.inbox` — what a launched task's supervisor hears, in one typed queue;
* :mod:`sluice.spark.split_read` — a source task's bulk read as one Spark job of many
  partitions (the parts run on the executors: :mod:`sluice.taskhost.split_part`).

What runs on the executors — the task loops, the record pipeline, the protocol — lives in
:mod:`sluice.taskhost`, which imports no PySpark. PySpark itself is imported only where the
session is made and the jobs are submitted, so the runtime imports this package without it.
"""
