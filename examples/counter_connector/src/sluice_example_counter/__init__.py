"""Example Sluice connectors: a source that counts and a sink that appends lines to a file."""

__version__ = "0.1.0"

# A plugin.path directory is searched for plugin classes in the package's own namespace.
from sluice_example_counter.sink import LineFileSinkConnector, LineFileSinkTask
from sluice_example_counter.source import CounterSourceConnector, CounterSourceTask

__all__ = ["CounterSourceConnector", "CounterSourceTask", "LineFileSinkConnector", "LineFileSinkTask"]
