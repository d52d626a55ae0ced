"""FileConfigBackingStore: the standalone worker's connector configs and target states on disk.

Kafka Connect's standalone worker keeps configs in memory only, so a paused
connector comes back running after a restart. Sluice keeps them in a JSON file,
rewritten atomically after each change, so a pause or a stop survives a restart.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from sluice.storage.base import ClusterConfigState, ConfigBackingStore
from sluice.storage.memory import MemoryConfigBackingStore

__all__ = ["FileConfigBackingStore"]


class FileConfigBackingStore(ConfigBackingStore):
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._memory = MemoryConfigBackingStore()
        self._lock = threading.RLock()

    def start(self) -> None:
        with self._lock:
            self._memory.start()
            if not self.path.exists() or self.path.stat().st_size == 0:
                return
            data = json.loads(self.path.read_text(encoding="utf-8"))
            for name, config in data.get("connectors", {}).items():
                self._memory.put_connector_config(name, config, data.get("target_states", {}).get(name))
                self._memory.put_task_configs(name, data.get("tasks", {}).get(name, []))

    def stop(self) -> None:
        self._memory.stop()

    def _save(self) -> None:
        snapshot = self._memory.snapshot()
        data = {
            "connectors": snapshot.connector_configs,
            "target_states": snapshot.target_states,
            "tasks": snapshot.task_configs,
        }
        # one line, by json's C encoder (an indented dump is pure Python): a worker with
        # hundreds of connectors rewrites this file twice for each one created
        text = json.dumps(data, sort_keys=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def put_connector_config(
        self, name: str, config: Mapping[str, str | None], target_state: str | None = None
    ) -> None:
        with self._lock:
            self._memory.put_connector_config(name, config, target_state)
            self._save()

    def remove_connector_config(self, name: str) -> None:
        with self._lock:
            self._memory.remove_connector_config(name)
            self._save()

    def put_target_state(self, name: str, state: str) -> None:
        with self._lock:
            self._memory.put_target_state(name, state)
            self._save()

    def put_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        with self._lock:
            self._memory.put_task_configs(name, configs)
            self._save()

    def snapshot(self) -> ClusterConfigState:
        return self._memory.snapshot()
