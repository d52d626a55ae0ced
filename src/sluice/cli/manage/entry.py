"""The entry point of ``sluice connector`` (and of the ``sluice-connector`` script): parse
the arguments, connect to the worker, run the command, turn errors into exit codes."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import httpx2

from sluice.cli.manage.client import DEFAULT_URL, URL_ENV, USER_ENV, ConnectClient
from sluice.cli.manage.commands import Context
from sluice.cli.manage.errors import CliError
from sluice.cli.manage.parser import build_parser
from sluice.cli.manage.tls import tls_verify_from


def _fail(prog: str, error: CliError) -> int:
    print(f"{prog}: error: {error.message}", file=sys.stderr)
    return error.exit_code


def run(argv: Sequence[str], prog: str = "sluice connector", transport: httpx2.BaseTransport | None = None) -> int:
    """Parse ``argv`` and run the command; ``transport`` replaces the network (tests)."""
    parser = build_parser(prog)
    args = parser.parse_args(list(argv))
    url = args.url or os.environ.get(URL_ENV) or DEFAULT_URL
    user = getattr(args, "user", None) or os.environ.get(USER_ENV) or None
    try:
        verify = tls_verify_from(args)
        with ConnectClient(url, transport=transport, user=user, verify=verify) as client:
            return int(args.func(Context(args, client, prog)))
    except CliError as exc:
        return _fail(prog, exc)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Entry point of ``sluice connector`` and of the ``sluice-connector`` script."""
    if argv is None:
        argv = sys.argv[1:]
        script = os.path.basename(sys.argv[0])
        prog = prog or (script if script and not script.endswith(".py") else "sluice-connector")
    return run(argv, prog or "sluice connector")
