"""Metrics reporters (``metric.reporters``): Python plugins handed the worker's metrics."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable

from sluice.api.errors import ConfigError
from sluice.api.metrics import Metric, MetricsReporter

__all__ = ["load_reporters"]

log = logging.getLogger(__name__)


def load_reporters(
    names: str | None, configs: dict[str, str], metrics: Callable[[], list[Metric]]
) -> list[MetricsReporter]:
    """The ``metric.reporters`` (Python paths), configured and initialised. Kafka's own
    reporters (``org.apache.kafka…``, JMX) have no Python form: they are skipped, logged.
    Raises :class:`~sluice.api.errors.ConfigError` naming a reporter that cannot be made."""
    reporters: list[MetricsReporter] = []
    for name in [n.strip() for n in (names or "").split(",") if n.strip()]:
        if name.startswith("org.apache.kafka."):
            log.info("metric.reporters: %s is Kafka's (JMX); Sluice serves its metrics at GET /metrics", name)
            continue
        module, _, attribute = name.rpartition(".")
        try:
            cls = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(f"metric.reporters: cannot load {name}: {exc}") from None
        if not (isinstance(cls, type) and issubclass(cls, MetricsReporter)):
            raise ConfigError(f"metric.reporters: {name} is not a sluice.api.metrics.MetricsReporter")
        reporter = cls()
        reporter.configure(dict(configs))
        reporter.init(metrics)
        reporters.append(reporter)
    return reporters
