"""Errors a plugin may raise or receive, mirroring Kafka Connect's ``connect.errors``.

Hierarchy::

    ConnectError                      (org.apache.kafka.connect.errors.ConnectException)
    ├── RetriableError                (RetriableException: retried where the runtime retries)
    ├── DataError                     (DataException: a record could not be converted)
    │   └── SchemaProjectorError
    ├── ConfigError                   (ConfigException: a bad configuration value)
    ├── NotFoundError                 (NotFoundException)
    ├── AlreadyExistsError            (AlreadyExistsException)
    └── IllegalWorkerStateError       (IllegalWorkerStateException)

Every error survives pickling with its message, so a failure raised inside a Spark
executor reaches the driver intact.
"""

from __future__ import annotations

__all__ = [
    "AlreadyExistsError",
    "ConfigError",
    "ConnectError",
    "DataError",
    "IllegalWorkerStateError",
    "NotFoundError",
    "RetriableError",
    "SchemaProjectorError",
]


class ConnectError(Exception):
    """Root of every Connect error."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(message, *args)
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[type[ConnectError], tuple[str]]:  # keep the message across pickling
        return (type(self), (self.message,))


class RetriableError(ConnectError):
    """A transient failure, retried where the runtime retries — not everywhere:

    * ``SourceTask.poll``: polled again after 0.1 s, without limit;
    * ``SinkTask.put``: the same records again after ``context.timeout`` (at least
      100 ms), up to 10 attempts in all;
    * converters, transformations and predicates: only when the connector sets
      ``errors.retry.timeout`` (default 0: no retry), with backoff until that timeout;
    * anywhere else (``start``, ``commit``, ``pre_commit``, ``Connector.start``, …) it
      fails like any other exception.
    """


class DataError(ConnectError):
    """A record's data could not be converted or validated."""


class SchemaProjectorError(DataError):
    """A value could not be projected onto another schema."""


class ConfigError(ConnectError):
    """A configuration value is missing or invalid.

    ``ConfigError(name, value, message)`` renders as Kafka's
    ``Invalid value <value> for configuration <name>: <message>``.
    """

    def __init__(self, name: str, value: object = None, message: str | None = None) -> None:
        if message is None and value is None:
            text = name
        else:
            text = f"Invalid value {value} for configuration {name}"
            if message:
                text += f": {message}"
        super().__init__(text)
        self.name = name
        self.value = value

    def __reduce__(self) -> tuple[type[ConfigError], tuple[str]]:
        return (ConfigError, (self.message,))


class NotFoundError(ConnectError):
    """The requested connector, task or resource does not exist."""


class AlreadyExistsError(ConnectError):
    """The resource to create already exists."""


class IllegalWorkerStateError(ConnectError):
    """The worker is in a state that does not allow the operation."""
