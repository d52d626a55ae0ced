"""How an https worker is checked and which client certificate is presented: the
``--ca-cert``/``--insecure``/``--client-cert``/``--client-key`` options, their environment
variables, the SSL context built from them, and hints for a failed TLS connection.

``sluice console`` (``sluice.cli.main``) uses the same options."""

from __future__ import annotations

import argparse
import os
import ssl
from collections.abc import Mapping
from typing import Any

from sluice.cli.manage.errors import UsageError

CA_CERT_ENV = "SLUICE_CA_CERT"  # PEM file of the authorities an https worker's certificate is checked against
CLIENT_CERT_ENV = "SLUICE_CLIENT_CERT"
CLIENT_KEY_ENV = "SLUICE_CLIENT_KEY"
CLIENT_KEY_PASSWORD_ENV = "SLUICE_CLIENT_KEY_PASSWORD"  # of an encrypted --client-key


def tls_verify(
    ca_cert: str | None = None,
    insecure: bool = False,
    client_cert: str | None = None,
    client_key: str | None = None,
    key_password: str | None = None,
) -> ssl.SSLContext | bool:
    """How an https worker is checked: True (the system's authorities) when nothing is given,
    else an SSL context trusting ``ca_cert`` (a PEM file of CA certificates, or the worker's
    own certificate), checking nothing when ``insecure``, presenting ``client_cert`` (a PEM
    certificate chain, with its key in it or in ``client_key``). Raises :class:`UsageError`
    when a file cannot be used."""
    if not (ca_cert or insecure or client_cert or client_key):
        return True
    if client_key and not client_cert:
        raise UsageError("--client-key needs --client-cert (the certificate of the key)")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca_cert:
        try:
            context.load_verify_locations(cafile=ca_cert)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"--ca-cert {ca_cert}: not a readable PEM file of certificates ({exc})") from None
        # As a Java truststore does: any certificate given is trusted, a server's own included.
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    else:
        context.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if client_cert:
        try:
            context.load_cert_chain(client_cert, client_key or None, password=key_password)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(
                f"--client-cert {client_cert}: cannot use it with its key ({exc}); an encrypted key needs "
                f"${CLIENT_KEY_PASSWORD_ENV}"
            ) from None
    return context


def tls_hint(reason: str) -> str | None:
    """What to do about a failure of an https connection, from its error text."""
    if "CERTIFICATE_VERIFY_FAILED" in reason:
        return (
            f"the worker's certificate is not trusted: give its authority with --ca-cert FILE or "
            f"${CA_CERT_ENV} (--insecure skips the check); "
        )
    if "CERTIFICATE_REQUIRED" in reason.upper().replace(" ", "_"):
        return "the worker asks for a client certificate: give --client-cert FILE --client-key FILE; "
    if "disconnected without sending a response" in reason:
        # Over TLS 1.3 a worker refusing a client without certificate just closes the connection.
        return "if the worker asks for client certificates, give --client-cert FILE --client-key FILE; "
    return None


def add_tls_options(parser: argparse.ArgumentParser, default: Any = None) -> None:
    """``--ca-cert``, ``--insecure``, ``--client-cert``, ``--client-key`` (also used by
    ``sluice console``); read back with :func:`tls_verify_from`."""
    parser.add_argument(
        "--ca-cert",
        metavar="FILE",
        default=default,
        help=f"PEM file of the authorities an https worker's certificate is checked against (default: ${CA_CERT_ENV}, "
        "else the system's)",
    )
    parser.add_argument(
        "--insecure",
        action="store_true",
        default=argparse.SUPPRESS if default is argparse.SUPPRESS else False,
        help="do not check an https worker's certificate",
    )
    parser.add_argument(
        "--client-cert",
        metavar="FILE",
        default=default,
        help=f"PEM certificate (chain) to present to a worker that asks for one (default: ${CLIENT_CERT_ENV})",
    )
    parser.add_argument(
        "--client-key",
        metavar="FILE",
        default=default,
        help=f"PEM private key of --client-cert, when not in that file (default: ${CLIENT_KEY_ENV}; "
        f"an encrypted key's password: ${CLIENT_KEY_PASSWORD_ENV})",
    )


def tls_verify_from(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> ssl.SSLContext | bool:
    """:func:`tls_verify` of the options :func:`add_tls_options` added, or their variables."""
    env = os.environ if environ is None else environ
    return tls_verify(
        ca_cert=getattr(args, "ca_cert", None) or env.get(CA_CERT_ENV) or None,
        insecure=bool(getattr(args, "insecure", False)),
        client_cert=getattr(args, "client_cert", None) or env.get(CLIENT_CERT_ENV) or None,
        client_key=getattr(args, "client_key", None) or env.get(CLIENT_KEY_ENV) or None,
        key_password=env.get(CLIENT_KEY_PASSWORD_ENV),
    )
