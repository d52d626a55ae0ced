"""Spark's Python daemon, with the task host imported before it forks.

Spark starts one daemon per executor (``python -m <spark.python.daemon.module>``) and forks
each Python worker from it. Sluice's session names this module: the task host's code —
the loops, the protocol, the Kafka client library, the plugin API — is imported once here,
so every task host forked from the daemon starts with it loaded (sooner) and shares its
pages with the daemon and the other hosts (less memory). Only modules that start no
threads when imported are loaded before the fork (pyarrow, whose allocator does, is
imported by a task that needs it, after the fork, as Spark's own daemon does with pandas).
"""

from __future__ import annotations

from pyspark import daemon

import sluice.taskhost.host  # noqa: F401 - loaded once, before the fork; see above

if __name__ == "__main__":
    daemon.manager()
