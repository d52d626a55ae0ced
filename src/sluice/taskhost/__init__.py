"""The task host: what runs in the executor's Python worker, inside the long-lived Spark
task that hosts a Connect task. Imports no PySpark.

* :mod:`.host` — the entry point: connect to the worker, receive the task, run its loop;
* :mod:`.protocol` and :mod:`.wire` — the control protocol's messages and their JSON frames
  (the worker's side speaks the same, :mod:`sluice.spark.control`);
* :mod:`.control` — the worker's messages read on a thread of their own, and heartbeats;
* :mod:`.loop` — what a task instance's life on the task thread looks like;
* :mod:`.source` and :mod:`.sink` — the source and sink loops (Kafka's ``WorkerSourceTask``
  and ``WorkerSinkTask``, their executor side);
* :mod:`.pipeline` and :mod:`.tolerance` — converters and transforms over a batch, and the
  error policy with its dead letters;
* :mod:`.plugins` — the task's plugins made from their class paths; :mod:`.metering` — what
  the task counts for the worker's metrics; :mod:`.split_part` — a part of a split read.
"""
