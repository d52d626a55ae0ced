"""The worker stops its local-mode Spark without a warning from Spark's executor.

``SparkContext.stop`` asks the local executor to stop without waiting and then removes
the driver's heartbeat receiver; a heartbeat sent in between logged "Issue communicating
with driver in heartbeater" with a stack trace into a cleanly stopping worker's log.
``stop_spark_session`` stops the executor first and waits for it. The script runs in a
process of its own: a JVM with a heartbeat every second (the heartbeat's timeout is its
interval: shorter ones time out on a busy machine), which the test process's Spark (if
any) must not share.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

SCRIPT = """
from sluice.spark import session

spark = session.build_spark_session(
    {"spark.master": "local[2]", "spark.executor.heartbeatInterval": "1s"}, []
)
assert spark.sparkContext.parallelize(range(4), 2).count() == 4
jvm = session.jvm_view(spark)


def threads():
    return {str(t.getName()) for t in jvm.java.lang.Thread.getAllStackTraces().keySet().toArray()}


print("before:", "executor-heartbeater" in threads(), flush=True)
print("stopped:", session._stop_local_executor(spark), flush=True)
print("after:", "executor-heartbeater" in threads(), flush=True)
session.stop_spark_session(spark)
print("session stopped", flush=True)
"""


def test_the_local_executor_stops_its_heartbeats_before_spark_removes_their_receiver() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=240,
    )
    output = result.stdout
    assert result.returncode == 0, output
    # The executor heartbeated while it ran, and its heartbeat thread has ended once the
    # stop returns: no heartbeat can follow the receiver's removal.
    assert "before: True" in output, output
    assert "stopped: True" in output, output
    assert "after: False" in output, output
    assert "session stopped" in output, output
    # What a heartbeat sent after the receiver's removal fails with.
    assert "Could not find HeartbeatReceiver" not in output, output
