"""Exit codes of ``sluice connector`` and the errors that end a command with one.

The package docstring (``sluice.cli.manage``) says what each exit code means."""

from __future__ import annotations

EXIT_OK = 0
EXIT_SERVER_ERROR = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_FAILED = 4
EXIT_TIMEOUT = 5


class CliError(Exception):
    """An error that ends the command with ``exit_code`` and ``message`` on stderr."""

    exit_code = EXIT_SERVER_ERROR

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(CliError):
    exit_code = EXIT_USAGE


class WorkerError(CliError):
    """The worker answered with an error status (Connect's ``{"error_code","message"}``)."""

    exit_code = EXIT_SERVER_ERROR

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class UnreachableError(CliError):
    exit_code = EXIT_UNREACHABLE
