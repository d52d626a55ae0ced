"""What a benchmark ran on: the machine, and the versions of what it measured."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

from sluice.jvm.jars import SPARK_VERSION
from sluice.jvm.java import java_executable
from sluice_devtools import jars

__all__ = ["describe_machine"]


def describe_machine() -> dict[str, Any]:
    """The CPU, cores, memory, OS, Python, Java (the one Sluice's workers run), Kafka and
    Spark versions."""
    cpu, memory_gb = platform.processor() or platform.machine(), 0.0
    with contextlib.suppress(OSError):
        for row in Path("/proc/cpuinfo").read_text().splitlines():
            if row.startswith("model name"):
                cpu = row.split(":", 1)[1].strip()
                break
        for row in Path("/proc/meminfo").read_text().splitlines():
            if row.startswith("MemTotal:"):
                memory_gb = int(row.split()[1]) / 2**20
    java = subprocess.run([str(java_executable()), "-version"], capture_output=True, text=True)
    lines = (java.stderr or java.stdout).splitlines()
    runtime = next((ln for ln in lines if "Runtime Environment" in ln), lines[0] if lines else "java")
    build = re.search(r"\(build ([^)]+)\)", runtime)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": platform.python_version(),
        "java": f"{runtime.split(' Runtime')[0]} {build.group(1) if build else ''}".strip(),
        "kafka": jars.KAFKA_VERSION,
        "spark": SPARK_VERSION,
    }
