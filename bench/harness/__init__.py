"""Helpers of ``bench/compare.py``: the side-by-side benchmark of Apache Kafka Connect and Sluice.

* :mod:`.procs` — CPU time, RSS and PSS of a process tree, from ``/proc``;
* :mod:`.workers` — a Kafka Connect or a Sluice worker process (standalone or distributed);
* :mod:`.cluster` — a cluster of distributed workers of one system (``bench/startup.py``,
  ``bench/rebalance.py``);
* :mod:`.data` — input lines, topic filling, reading topics back, sink-file tailing and
  correctness checks;
* :mod:`.runs` — one measured run of a workload on one system, and Kafka's own bounds;
* :mod:`.machine` — what a benchmark ran on (machine and versions);
* :mod:`.report` — ``docs/benchmarks.md`` and ``docs/benchmarks.png`` from the results.
"""
