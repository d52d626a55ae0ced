"""``sluice connector …``: manage the connectors of a Kafka Connect worker from a terminal.

The command talks to a worker only through the Kafka Connect REST API (any compatible
worker: Sluice or Apache Kafka Connect) and imports nothing of Sluice's runtime. People
get aligned tables; ``--json`` prints the server's JSON for scripts.

The worker's URL comes from ``--url``, else ``$SLUICE_URL``, else ``http://localhost:8083``.
An ``https`` worker's certificate is checked against the system's authorities, or the one
``--ca-cert`` (``$SLUICE_CA_CERT``) names; ``--insecure`` skips the check, and
``--client-cert``/``--client-key`` give a client certificate to a worker that asks for one.

Exit codes:

* 0 — done;
* 1 — the worker answered with an error (its ``message`` is printed), or ``validate``
  found errors in the configuration;
* 2 — usage error: bad arguments, or a file that cannot be read or parsed;
* 3 — the worker cannot be reached at the URL;
* 4 — ``--wait``: the connector or one of its tasks FAILED (the trace is printed);
* 5 — ``--wait``: the expected state was not reached within ``--timeout``.

The package, in the order a command runs through it: :mod:`~sluice.cli.manage.entry`
(``main``, ``run``), :mod:`~sluice.cli.manage.parser` (arguments),
:mod:`~sluice.cli.manage.commands` (one function per command),
:mod:`~sluice.cli.manage.client` (HTTP) with :mod:`~sluice.cli.manage.tls`,
:mod:`~sluice.cli.manage.files` (config and offsets files),
:mod:`~sluice.cli.manage.rendering` (tables), :mod:`~sluice.cli.manage.waiting`
(``--wait``) and :mod:`~sluice.cli.manage.errors` (exit codes). This module only
re-exports the names other code imports from ``sluice.cli.manage``.
"""

from __future__ import annotations

from sluice.cli.manage.client import DEFAULT_URL, ConnectClient, normalize_url
from sluice.cli.manage.entry import main, run
from sluice.cli.manage.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SERVER_ERROR,
    EXIT_TIMEOUT,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CliError,
    UnreachableError,
    UsageError,
    WorkerError,
)
from sluice.cli.manage.files import (
    PREDEFINED,
    ConnectorFile,
    load_connector_config,
    parse_assignments,
    parse_config_bytes,
    parse_offsets_bytes,
    predefined_file,
)
from sluice.cli.manage.parser import build_parser
from sluice.cli.manage.rendering import (
    connectors_table,
    format_properties,
    render_table,
    state_style,
    task_summary,
)
from sluice.cli.manage.tls import add_tls_options, tls_verify, tls_verify_from
from sluice.cli.manage.waiting import STALE_FAILURE_GRACE, Spinner, check_state, wait_for_state

__all__ = [
    "DEFAULT_URL",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_SERVER_ERROR",
    "EXIT_TIMEOUT",
    "EXIT_UNREACHABLE",
    "EXIT_USAGE",
    "PREDEFINED",
    "STALE_FAILURE_GRACE",
    "CliError",
    "ConnectClient",
    "ConnectorFile",
    "Spinner",
    "UnreachableError",
    "UsageError",
    "WorkerError",
    "add_tls_options",
    "build_parser",
    "check_state",
    "connectors_table",
    "format_properties",
    "load_connector_config",
    "main",
    "normalize_url",
    "parse_assignments",
    "parse_config_bytes",
    "parse_offsets_bytes",
    "predefined_file",
    "render_table",
    "run",
    "state_style",
    "task_summary",
    "tls_verify",
    "tls_verify_from",
    "wait_for_state",
]
