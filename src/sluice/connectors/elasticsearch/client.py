"""HTTP to an Elasticsearch or OpenSearch cluster: the calls the sink makes (``GET /``,
indices, data streams, mappings, ``_bulk``), with failover between the configured nodes and
retries with exponential backoff for what may pass (a node that cannot be reached, 429, 5xx,
rejected bulk items).

The same requests serve Elasticsearch 7 and 8 and OpenSearch 1 to 3: typeless bulk actions,
``version_type=external`` on index and delete actions."""

from __future__ import annotations

import gzip
import json
import logging
import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2

from sluice.api import ConnectError
from sluice.connectors.elasticsearch.config import Settings
from sluice.connectors.elasticsearch.documents import Action

__all__ = ["BulkOutcome", "ClusterClient", "ItemFailure", "MALFORMED_ERRORS", "Unreachable"]

log = logging.getLogger(__name__)

# Item errors that mean "this document cannot be indexed" (Confluent's list): they follow
# behavior.on.malformed.documents rather than failing the task.
MALFORMED_ERRORS = (
    "strict_dynamic_mapping_exception",
    "mapper_parsing_exception",
    "illegal_argument_exception",
    "action_request_validation_exception",
    "document_parsing_exception",
)
VERSION_CONFLICT = "version_conflict_engine_exception"
_NDJSON = "application/x-ndjson"
# Only what the sink reads of a bulk answer (an item's status and error, in action order):
# a tenth of the full answer to receive and parse.
_BULK_PATH = "/_bulk?filter_path=errors,items.*.status,items.*.error"
_NO_ERRORS = b'"errors":false'


class Unreachable(ConnectError):
    """No configured node answered (every retry spent)."""


@dataclass(frozen=True, slots=True)
class ItemFailure:
    """A bulk item the cluster refused for good."""

    action: Action
    status: int
    error_type: str
    reason: str

    @property
    def malformed(self) -> bool:
        return any(kind in self.error_type for kind in MALFORMED_ERRORS)

    def describe(self) -> str:
        return f"{self.error_type} (HTTP {self.status}): {self.reason}"


@dataclass(slots=True)
class BulkOutcome:
    """What one batch came to: the refused items (retries spent), or a fatal error."""

    failures: list[ItemFailure]
    error: BaseException | None = None


class ClusterClient:
    """One task's connections to the cluster (thread-safe: bulk requests run on several threads)."""

    def __init__(self, settings: Settings, stopping: threading.Event | None = None) -> None:
        self.settings = settings
        self.stopping = stopping or threading.Event()
        auth = (settings.username, settings.password or "") if settings.username else None
        read = settings.read_timeout_ms / 1000 if settings.read_timeout_ms > 0 else None
        connect = settings.connection_timeout_ms / 1000 if settings.connection_timeout_ms > 0 else None
        self.http = httpx2.Client(
            auth=auth,
            timeout=httpx2.Timeout(read, connect=connect, pool=None),
            limits=httpx2.Limits(
                max_connections=settings.max_in_flight + 2,
                max_keepalive_connections=settings.max_in_flight + 2,
                keepalive_expiry=settings.idle_time_ms / 1000 if settings.idle_time_ms > 0 else None,
            ),
            verify=settings.truststore if settings.truststore else True,
        )
        self._next_node = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        self.http.close()

    # -- requests --------------------------------------------------------------------

    def _nodes(self) -> list[str]:
        urls = self.settings.urls
        with self._lock:
            start = self._next_node
            self._next_node = (start + 1) % len(urls)
        return [urls[(start + i) % len(urls)] for i in range(len(urls))]

    def _send_once(
        self, method: str, path: str, body: bytes | None = None, content_type: str = "application/json"
    ) -> httpx2.Response:
        """One attempt on the nodes in turn; raises :class:`Unreachable` when none answers."""
        headers = {"Content-Type": content_type} if body is not None else {}
        if body is not None and self.settings.compression:
            body = gzip.compress(body, 1)
            headers["Content-Encoding"] = "gzip"
        errors = []
        for node in self._nodes():
            try:
                return self.http.request(method, node + path, content=body, headers=headers)
            except httpx2.HTTPError as e:
                errors.append(f"{node}: {type(e).__name__}: {e}")
        raise Unreachable("Could not reach Elasticsearch at " + "; ".join(errors))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        retry: Callable[[httpx2.Response], bool] | None = None,
    ) -> tuple[int, Any]:
        """A JSON request, retried while a node cannot be reached or answers 429/5xx:
        ``(status, parsed body)``."""
        data = json.dumps(body).encode("utf-8") if body is not None else None
        return self._with_retries(lambda: self._send_once(method, path, data), f"{method} {path}")

    def _with_retries(self, send: Callable[[], httpx2.Response], what: str) -> tuple[int, Any]:
        attempt = 0
        while True:
            try:
                response = send()
                if not _retriable_status(response.status_code):
                    return response.status_code, _json(response)
                problem: BaseException = ConnectError(f"{what} answered HTTP {response.status_code}: {_text(response)}")
            except Unreachable as e:
                problem = e
            if attempt >= self.settings.max_retries:
                raise problem
            self.backoff(attempt, f"{what} failed ({problem})")
            attempt += 1

    def backoff(self, attempt: int, why: str) -> None:
        """Wait before retry ``attempt + 1``: a random time up to ``retry.backoff.ms * 2^attempt``
        (at most a minute); returns early, raising, when the task stops."""
        cap = min(self.settings.retry_backoff_ms * (2**attempt), 60_000)
        wait = random.uniform(0, cap) / 1000  # jitter, not security
        log.warning("%s; retry %d of %d in %.0f ms", why, attempt + 1, self.settings.max_retries, wait * 1000)
        if self.stopping.wait(wait):
            raise ConnectError("The task stopped while retrying a request to Elasticsearch.")

    # -- cluster metadata ------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """``GET /``: the cluster's name and version; checks that a node answers and takes the
        credentials. ``{}`` when a node answers without that endpoint (a build without it)."""
        status, body = self.request("GET", "/")
        if status == 401 or status == 403:
            raise ConnectError(f"Elasticsearch refused the credentials (HTTP {status}): {body}")
        if status != 200 or not isinstance(body, dict):
            log.info("GET / answered HTTP %s; the node's version is unknown", status)
            return {}
        return body

    def ensure_index(self, index: str, mapping: dict[str, Any] | None) -> None:
        """Create ``index`` (with ``mapping``) unless it exists; give an existing index without
        field mappings ``mapping``."""
        status, body = self.request("HEAD", f"/{_quote(index)}")
        if status == 404:
            create = {"mappings": mapping} if mapping is not None else None
            status, body = self.request("PUT", f"/{_quote(index)}", create)
            if status in (200, 201):
                return
            if _error_type(body) != "resource_already_exists_exception":
                raise ConnectError(f"Could not create index {index}: HTTP {status}: {body}")
        elif status != 200:
            raise ConnectError(f"Could not check index {index}: HTTP {status}")
        if mapping is not None:
            self._ensure_mapping(index, mapping)

    def ensure_data_stream(self, name: str, mapping: dict[str, Any] | None) -> None:
        status, body = self.request("GET", f"/_data_stream/{_quote(name)}")
        if status in (400, 405):  # no data stream API: the first write creates it from its template
            return
        if status == 404:
            status, body = self.request("PUT", f"/_data_stream/{_quote(name)}")
            if status not in (200, 201) and _error_type(body) != "resource_already_exists_exception":
                raise ConnectError(
                    f"Could not create data stream {name}: HTTP {status}: {body} (the cluster needs an index "
                    f"template with a data_stream whose index_patterns match {name})"
                )
        elif status != 200:
            raise ConnectError(f"Could not check data stream {name}: HTTP {status}: {body}")
        if mapping is not None:
            self._ensure_mapping(name, mapping)

    def _ensure_mapping(self, index: str, mapping: dict[str, Any]) -> None:
        status, body = self.request("GET", f"/{_quote(index)}/_mapping")
        if status != 200 or not isinstance(body, dict):
            raise ConnectError(f"Could not read the mapping of {index}: HTTP {status}: {body}")
        if any((entry.get("mappings") or {}).get("properties") for entry in body.values() if isinstance(entry, dict)):
            return
        status, body = self.request("PUT", f"/{_quote(index)}/_mapping", mapping)
        if status != 200:
            raise ConnectError(f"Could not put the mapping of {index}: HTTP {status}: {body}")

    # -- bulk ------------------------------------------------------------------------

    def bulk(self, actions: Sequence[Action]) -> BulkOutcome:
        """Send ``actions`` as bulk requests until each is acknowledged or refused for good.
        Items refused with 429 (or the whole request with 429/5xx, or no node answering)
        are sent again, up to ``max.retries`` times; then the outcome carries the error."""
        pending = list(actions)
        failures: list[ItemFailure] = []
        attempt = 0
        while True:
            body = "".join(
                a.header + "\n" + a.source + "\n" if a.source is not None else a.header + "\n" for a in pending
            ).encode("utf-8", "backslashreplace")  # a lone surrogate (only in strings) as its JSON escape
            try:
                response = self._send_once("POST", _BULK_PATH, body, _NDJSON)
            except Unreachable as e:
                retry_why: str | None = str(e)
                retry_items = pending
            else:
                status = response.status_code
                if _retriable_status(status):
                    retry_why = f"HTTP {status}: {_text(response)}"
                    retry_items = pending
                elif status != 200:
                    return BulkOutcome(
                        failures, ConnectError(f"Bulk request refused: HTTP {status}: {_text(response)}")
                    )
                elif _NO_ERRORS in response.content[:32]:  # all acknowledged: no need to read the items
                    retry_items = []
                else:
                    retry_items = self._item_results(pending, _json(response), failures)
                    retry_why = f"{len(retry_items)} items rejected (HTTP 429)" if retry_items else None
            if not retry_items:
                return BulkOutcome(failures)
            if attempt >= self.settings.max_retries:
                return BulkOutcome(
                    failures,
                    ConnectError(
                        f"Bulk request failed after {attempt + 1} attempts (max.retries={self.settings.max_retries}): "
                        f"{retry_why}"
                    ),
                )
            try:
                self.backoff(attempt, f"Bulk request of {len(retry_items)} documents failed: {retry_why}")
            except ConnectError as e:
                return BulkOutcome(failures, e)
            pending = retry_items
            attempt += 1

    def _item_results(self, pending: list[Action], body: Any, failures: list[ItemFailure]) -> list[Action]:
        """Collects refused items into ``failures``; returns those to send again."""
        if not isinstance(body, dict) or not isinstance(body.get("items"), list):
            raise ConnectError(f"Unexpected bulk response: {str(body)[:500]}")
        if not body.get("errors"):
            return []
        items = body["items"]
        if len(items) != len(pending):
            raise ConnectError(f"The bulk response has {len(items)} items for {len(pending)} actions.")
        again = []
        for action, item in zip(pending, items, strict=True):
            result = next(iter(item.values()))
            error = result.get("error")
            if error is None:
                continue
            status = int(result.get("status", 0))
            error_type = error.get("type", "") if isinstance(error, dict) else str(error)
            reason = error.get("reason", "") if isinstance(error, dict) else ""
            if status == 429 or error_type == "es_rejected_execution_exception":
                again.append(action)
            elif error_type == VERSION_CONFLICT and action.replay_safe:
                # A replay: the cluster holds the same or a newer version of the document.
                continue
            else:
                failures.append(ItemFailure(action, status, error_type, reason))
        return again


def _retriable_status(status: int) -> bool:
    return status == 429 or status >= 500


def _json(response: httpx2.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return _text(response)


def _text(response: httpx2.Response) -> str:
    return response.text[:1000]


def _error_type(body: Any) -> str:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("type", ""))
    return ""


def _quote(name: str) -> str:
    from urllib.parse import quote

    return quote(name, safe="")
