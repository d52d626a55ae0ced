"""The console's pages and actions, a Starlette application.

Each page is rendered on the server from REST answers (so the read-only pages work without
JavaScript); HTMX, vendored under ``static/``, refreshes statuses and validates the form as
it is filled in. Every action is a form post that the console turns into one REST call, and
a destructive one (delete, stop, offsets reset or altered) is confirmed on a page of its own
first. What the worker refuses is shown with the worker's own message.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx2
import jinja2
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sluice import __version__
from sluice.console.api import REQUEST_TIMEOUT_S, ApiError, ConnectApi, path_of
from sluice.console.forms import build_form, config_from_text, field_id
from sluice.console.metrics import task_rates

__all__ = ["console_app", "standalone_console_app"]

_HERE = Path(__file__).parent
LEVELS = ["OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"]
STATES = ["FAILED", "RESTARTING", "UNASSIGNED", "PAUSED", "STOPPED", "RUNNING"]
#: How long the page of a connector the console has just created waits for the worker to
#: list it (Kafka Connect answers 404 until its herder has read the new config back, which
#: took over 5 s on a busy two-core machine). Only a 404 waits; the page shows at once
#: when the config is there.
JUST_CREATED_PATIENCE_S = 20.0
# What an action's redirect tells the person (codes only: no text from the URL is shown).
DONE = {
    "created": "Connector created.",
    "updated": "Configuration saved.",
    "paused": "Pause requested.",
    "resumed": "Resume requested.",
    "stopped": "Stop requested.",
    "restarted": "Restart requested.",
    "task-restarted": "Task restart requested.",
    "deleted": "Connector deleted.",
    "offsets-reset": "Offsets reset.",
    "offsets-altered": "Offsets altered.",
    "logger-set": "Logger level set.",
}
CONFIRM = {
    "delete": ("Delete connector {name}?", "Its tasks stop and its configuration is removed.", "Delete"),
    "stop": ("Stop connector {name}?", "Its tasks are shut down until it is resumed.", "Stop"),
    "reset-offsets": ("Reset the offsets of {name}?", "It starts again from the beginning when resumed.", "Reset"),
    "alter-offsets": ("Alter the offsets of {name}?", "It resumes from the offsets below.", "Alter"),
}

_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(_HERE / "templates")),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
)
_templates.filters["q"] = lambda value: quote(str(value), safe="")
_templates.globals["field_id"] = field_id
_templates.globals["version"] = __version__

Target = Callable[[Request], tuple[list[str], dict[str, str]]]
"""The worker URLs a request's REST calls go to, and the headers they carry."""


def _render(request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    base = request.scope.get("root_path", "").rstrip("/") + "/"
    html = _templates.get_template(template).render(base=base, **context)
    return HTMLResponse(html, status_code=status_code)


def _error_status(error: ApiError) -> int:
    return error.status if 400 <= error.status < 600 else 502


@dataclass(frozen=True)
class _FormView:
    """How the config form is drawn: for creating or editing, with the worker's errors beside
    their fields or not, a message above it, and what the person had open or typed."""

    mode: str  # "create" or "edit"
    show_errors: bool
    error: str | None = None
    status_code: int = 200
    text: str | None = None  # the JSON/properties textarea; None: the values as JSON
    fragment: bool = False  # only the form, for a live redraw
    open_groups: frozenset[str] = frozenset()


class Console:
    """The pages, over the REST API ``api_for(request)`` gives."""

    def __init__(
        self, target: Target, *, title: str, verify: ssl.SSLContext | bool = True, keep_alive: bool = True
    ) -> None:
        self.target = target
        self.title = title
        self._verify = verify  # how https workers are checked
        self._limits = httpx2.Limits() if keep_alive else httpx2.Limits(max_keepalive_connections=0)
        self._http: httpx2.AsyncClient | None = None  # one connection pool for every request

    def api_for(self, request: Request) -> ConnectApi:
        if self._http is None:
            self._http = httpx2.AsyncClient(timeout=REQUEST_TIMEOUT_S, verify=self._verify, limits=self._limits)
        urls, headers = self.target(request)
        return ConnectApi(urls, headers=headers, client=self._http)

    def page(self, request: Request, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        done = DONE.get(request.query_params.get("done", ""))
        context.setdefault("notice", done)
        context.setdefault("error", None)
        return _render(request, template, status_code, title=self.title, **context)

    def redirect(self, request: Request, path: str, **params: str) -> RedirectResponse:
        base = request.scope.get("root_path", "").rstrip("/")
        query = ("?" + urlencode(params)) if params else ""
        return RedirectResponse(f"{base}/{path}{query}", status_code=303)

    # -- overview -------------------------------------------------------------------

    async def overview(self, request: Request) -> Response:
        api = self.api_for(request)
        try:
            expanded = await api.connectors_expanded()
        except ApiError as e:
            return self.page(request, "overview.html", _error_status(e), rows=[], workers=[], error=e.message)
        rows, workers = _overview_rows(expanded)
        template = "_overview_table.html" if request.query_params.get("part") == "table" else "overview.html"
        return self.page(request, template, rows=rows, workers=workers)

    # -- one connector ----------------------------------------------------------------

    async def connector(self, request: Request) -> Response:
        name = request.query_params.get("name", "")
        return await self._connector_page(request, name)

    async def _connector_page(
        self, request: Request, name: str, *, error: str | None = None, status_code: int = 200, offsets_text: str = ""
    ) -> Response:
        api = self.api_for(request)
        status: Any = None
        try:
            status = await api.status(name)
        except ApiError as e:
            # A distributed worker has no status for a connector it has only just created:
            # the page is shown when the connector exists, and its status fills in later.
            # Just after the console created it, Kafka Connect may not list its config yet
            # either (its herder reads the config topic back first): wait for that a little.
            patience = JUST_CREATED_PATIENCE_S if request.query_params.get("done") == "created" else 0.0
            if e.status != 404 or not await _exists(api, name, patience):
                return self.page(request, "missing.html", _error_status(e), name=name, error=e.message)
        if request.query_params.get("part") == "status":
            return self.page(request, "_connector_status.html", name=name, status=status)
        if request.query_params.get("part") == "rates":
            return JSONResponse(await _rates(api, name, status))
        config: dict[str, str] = {}
        topics: list[str] | None = None
        offsets: Any = None
        problems: list[str] = []
        try:
            config = await api.config(name)
        except ApiError as e:
            problems.append(f"Configuration: {e.message}")
        try:
            topics = await api.topics(name)
        except ApiError as e:  # topic tracking may be off (topic.tracking.enable=false)
            problems.append(f"Active topics: {e.message}")
        try:
            offsets = await api.offsets(name)
        except ApiError as e:
            problems.append(f"Offsets: {e.message}")
        rates = await _rates(api, name, status)
        if not offsets_text and isinstance(offsets, dict):
            offsets_text = json.dumps(offsets, indent=2, ensure_ascii=False)
        return self.page(
            request,
            "connector.html",
            status_code,
            name=name,
            status=status,
            config=config,
            topics=topics,
            offsets=offsets,
            offsets_text=offsets_text,
            problems=problems,
            error=error,
            rates=rates,
        )

    async def connector_action(self, request: Request) -> Response:
        form = await request.form()
        name = _field(form, "name")
        action = _field(form, "console:action")
        if action in CONFIRM and _field(form, "confirmed") != "yes":
            heading, detail, button = CONFIRM[action]
            return self.page(
                request,
                "confirm.html",
                heading=heading.format(name=name),
                detail=detail,
                button=button,
                fields=[(k, str(v)) for k, v in form.multi_items() if k != "confirmed"],
                name=name,
                offsets_text=_field(form, "offsets"),
            )
        api = self.api_for(request)
        connector = ("connectors", name)
        calls: dict[str, tuple[str, Callable[[], Awaitable[Any]]]] = {
            "pause": ("paused", lambda: api.request("PUT", path_of(*connector, "pause"))),
            "resume": ("resumed", lambda: api.request("PUT", path_of(*connector, "resume"))),
            "stop": ("stopped", lambda: api.request("PUT", path_of(*connector, "stop"))),
            "restart": (
                "restarted",
                lambda: api.request(
                    "POST",
                    path_of(*connector, "restart"),
                    params={
                        "includeTasks": _checked(form, "include_tasks"),
                        "onlyFailed": _checked(form, "only_failed"),
                    },
                ),
            ),
            "restart-task": (
                "task-restarted",
                lambda: api.request("POST", path_of(*connector, "tasks", _field(form, "task"), "restart")),
            ),
            "delete": ("deleted", lambda: api.request("DELETE", path_of(*connector))),
            "reset-offsets": ("offsets-reset", lambda: api.request("DELETE", path_of(*connector, "offsets"))),
            "alter-offsets": (
                "offsets-altered",
                lambda: api.request("PATCH", path_of(*connector, "offsets"), body=_offsets_body(form)),
            ),
        }
        if action not in calls:
            return await self._connector_page(request, name, error=f"Unknown action {action!r}", status_code=400)
        done, call = calls[action]
        try:
            await call()
        except ValueError as e:  # the offsets text is not JSON
            return await self._connector_page(
                request, name, error=str(e), status_code=400, offsets_text=_field(form, "offsets")
            )
        except ApiError as e:
            return await self._connector_page(
                request, name, error=e.message, status_code=_error_status(e), offsets_text=_field(form, "offsets")
            )
        if action == "delete":
            return self.redirect(request, "", done=done)
        return self.redirect(request, "connector", name=name, done=done)

    # -- create and edit --------------------------------------------------------------

    async def new(self, request: Request) -> Response:
        plugin = request.query_params.get("plugin", "")
        api = self.api_for(request)
        if not plugin:
            try:
                plugins = await api.plugins()
            except ApiError as e:
                return self.page(request, "plugins.html", _error_status(e), plugins=[], error=e.message)
            connectors = sorted(
                (p for p in plugins if p.get("type") in ("source", "sink")),
                key=lambda p: (str(p.get("type")), str(p.get("class"))),
            )
            return self.page(request, "plugins.html", plugins=connectors)
        blank = _FormView("create", show_errors=False)
        return await self._form_page(request, plugin, {"connector.class": plugin}, blank)

    async def edit(self, request: Request) -> Response:
        name = request.query_params.get("name", "")
        api = self.api_for(request)
        try:
            config = await api.config(name)
        except ApiError as e:
            return self.page(request, "missing.html", _error_status(e), name=name, error=e.message)
        config.setdefault("name", name)
        plugin = config.get("connector.class", "")
        return await self._form_page(request, plugin, config, _FormView("edit", show_errors=True))

    async def _form_page(self, request: Request, plugin: str, values: dict[str, str], view: _FormView) -> Response:
        values = {**values, "connector.class": plugin}
        try:
            answer = await self.api_for(request).validate(plugin, values)
        except ApiError as e:
            return self.page(request, "plugins.html", _error_status(e), plugins=[], error=e.message)
        return self._show_form(request, plugin, answer, values, view)

    def _show_form(
        self, request: Request, plugin: str, answer: Any, values: dict[str, str], view: _FormView
    ) -> Response:
        """The form from a validate ``answer`` for ``values``."""
        form = build_form(
            plugin, answer, values, mode=view.mode, show_errors=view.show_errors, open_groups=view.open_groups
        )
        text = view.text if view.text is not None else json.dumps(values, indent=2, ensure_ascii=False)
        template = "_form.html" if view.fragment else "form.html"
        return self.page(request, template, view.status_code, form=form, text=text, error=view.error)

    async def submit_form(self, request: Request) -> Response:
        form = await request.form()
        plugin = _field(form, "console:plugin")
        mode = "edit" if _field(form, "console:mode") == "edit" else "create"
        action = _field(form, "console:action") or "save"
        values = {k: str(v) for k, v in form.multi_items() if not k.startswith("console:") and str(v) != ""}
        if mode == "edit":
            values["name"] = _field(form, "console:name")
        live = request.headers.get("HX-Request") == "true" and action == "check"
        text: str | None = None
        if action == "load":
            text = _field(form, "console:text")
            try:
                loaded = config_from_text(text)
            except ValueError as e:
                failed = _FormView(mode, show_errors=False, error=str(e), status_code=400, text=text)
                return await self._form_page(request, plugin, values, failed)
            plugin = loaded.get("connector.class") or plugin
            values = loaded
            if mode == "edit":
                values["name"] = _field(form, "console:name")
        if action != "save":
            opened = frozenset(g for g in _field(form, "console:open").split("\n") if g)
            checked = _FormView(mode, show_errors=True, text=text, fragment=live, open_groups=opened)
            return await self._form_page(request, plugin, values, checked)
        api = self.api_for(request)
        values["connector.class"] = plugin
        try:
            answer = await api.validate(plugin, values)
        except ApiError as e:
            return self.page(request, "plugins.html", _error_status(e), plugins=[], error=e.message)
        if int(answer.get("error_count") or 0):
            count = int(answer["error_count"])
            message = f"Fix the {count} error(s) marked below first."
            refused = _FormView(mode, show_errors=True, error=message, status_code=400)
            return self._show_form(request, plugin, answer, values, refused)
        name = values.get("name", "")
        config = {k: v for k, v in values.items() if k != "name"} if mode == "create" else values
        try:
            if mode == "create":
                await api.create(name, config)
            else:
                await api.put_config(name, config)
        except ApiError as e:
            failed = _FormView(mode, show_errors=True, error=e.message, status_code=_error_status(e))
            return self._show_form(request, plugin, answer, values, failed)
        return self.redirect(request, "connector", name=name, done="created" if mode == "create" else "updated")

    # -- loggers ----------------------------------------------------------------------

    async def loggers(self, request: Request) -> Response:
        return await self._loggers_page(request)

    async def _loggers_page(self, request: Request, error: str | None = None, status_code: int = 200) -> Response:
        api = self.api_for(request)
        loggers: dict[str, Any] = {}
        try:
            loggers = await api.loggers()
        except ApiError as e:
            error = error or e.message
            status_code = status_code if status_code != 200 else _error_status(e)
        rows = sorted(
            (
                (name, (info or {}).get("level", ""), (info or {}).get("last_modified"))
                for name, info in loggers.items()
            ),
            key=lambda row: (row[0] != "root", row[0]),
        )
        return self.page(request, "loggers.html", status_code, loggers=rows, levels=LEVELS, error=error)

    async def set_logger(self, request: Request) -> Response:
        form = await request.form()
        logger = _field(form, "logger").strip()
        level = _field(form, "level")
        scope = "cluster" if _field(form, "scope") == "cluster" else "worker"
        if not logger:
            return await self._loggers_page(request, "Name a logger (root for the root logger).", 400)
        try:
            await self.api_for(request).set_logger(logger, level, scope)
        except ApiError as e:
            return await self._loggers_page(request, e.message, _error_status(e))
        return self.redirect(request, "loggers", done="logger-set")

    # -- routes -----------------------------------------------------------------------

    def guarded(self, handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        """A form post only from the console's own pages: a browser keeps sending the
        person's basic-auth credentials, so a post that another site's page made it send
        (cross-site request forgery) must not act. Browsers say where a post comes from
        (``Origin``, ``Sec-Fetch-Site``); clients that are not browsers send neither."""

        async def checked(request: Request) -> Response:
            if _cross_site(request):
                return self.page(
                    request,
                    "missing.html",
                    403,
                    name="",
                    error="Refused: the form was not sent from this console's own pages.",
                )
            return await handler(request)

        return checked

    def routes(self) -> list[Any]:
        return [
            Route("/", self.overview, methods=["GET", "HEAD"]),
            Route("/connector", self.connector, methods=["GET", "HEAD"]),
            Route("/connector", self.guarded(self.connector_action), methods=["POST"]),
            Route("/new", self.new, methods=["GET", "HEAD"]),
            Route("/edit", self.edit, methods=["GET", "HEAD"]),
            Route("/form", self.guarded(self.submit_form), methods=["POST"]),
            Route("/loggers", self.loggers, methods=["GET", "HEAD"]),
            Route("/loggers", self.guarded(self.set_logger), methods=["POST"]),
            Mount("/static", StaticFiles(directory=str(_HERE / "static")), name="static"),
        ]


async def _rates(api: ConnectApi, name: str, status: Any) -> dict[str, Any]:
    """Each task's records per second in and out (and a sink's lag), from the metrics of the
    workers that run them; ``exposed`` is false when none of them serves metrics, None while
    no worker runs a task of the connector."""
    workers = sorted({str(t.get("worker_id")) for t in (status or {}).get("tasks") or [] if t.get("worker_id")})
    tasks: list[dict[str, Any]] = []
    exposed: bool | None = None if not workers else False  # None: no task is placed yet
    for worker in workers:
        text = await api.worker_metrics(worker)
        if text is None:
            continue
        exposed = True
        for rates in task_rates(text, name):
            tasks.append({**asdict(rates), "worker": worker})
    tasks.sort(key=lambda t: t["task"])
    return {"exposed": exposed, "tasks": tasks}


def _cross_site(request: Request) -> bool:
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in ("same-origin", "none"):
        return True
    origin = request.headers.get("origin")
    if origin is None:
        return False  # not a browser (or one too old to say): nothing forged it
    if origin == "null":
        return True  # a sandboxed or hidden origin cannot be the console's own page
    return origin.split("://", 1)[-1].rstrip("/") != request.headers.get("host", "")


async def _exists(api: ConnectApi, name: str, patience_s: float = 0.0) -> bool:
    """Whether the worker has a config for ``name``; a 404 is asked again for ``patience_s``."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            await api.config(name)
            return True
        except ApiError as e:
            if e.status != 404 or time.monotonic() >= deadline:
                return False
        await asyncio.sleep(0.2)


def _field(form: FormData, key: str) -> str:
    value = form.get(key)
    return value if isinstance(value, str) else ""


def _checked(form: FormData, key: str) -> str:
    return "true" if _field(form, key) in ("on", "true", "yes") else "false"


def _offsets_body(form: FormData) -> Any:
    text = _field(form, "offsets")
    try:
        body = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"The offsets are not valid JSON: {e}") from None
    return body


def _overview_rows(expanded: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    rows = []
    workers: set[str] = set()
    for name, entry in expanded.items():
        status = (entry or {}).get("status") or {}
        info = (entry or {}).get("info") or {}
        connector = status.get("connector") or {}
        tasks = status.get("tasks") or []
        counts: dict[str, int] = {}
        for task in tasks:
            counts[str(task.get("state"))] = counts.get(str(task.get("state")), 0) + 1
            if task.get("worker_id"):
                workers.add(str(task["worker_id"]))
        if connector.get("worker_id"):
            workers.add(str(connector["worker_id"]))
        state = str(connector.get("state") or "UNKNOWN")
        failed = state == "FAILED" or counts.get("FAILED", 0) > 0
        rows.append(
            {
                "name": name,
                "type": status.get("type") or info.get("type") or "",
                "class": ((info.get("config") or {}).get("connector.class")) or "",
                "state": state,
                "worker": connector.get("worker_id") or "",
                "tasks": [(s, counts[s]) for s in STATES if counts.get(s)],
                "task_count": len(tasks),
                "failed": failed,
            }
        )
    rows.sort(key=lambda r: (not r["failed"], r["name"]))
    return rows, sorted(workers)


def _own_worker(request: Request) -> tuple[list[str], dict[str, str]]:
    """The REST API of the worker serving this request, on the listener it came in by (so
    ``admin.listeners`` applies), with the caller's credentials."""
    server = request.scope.get("server") or ("127.0.0.1", 8083)
    host, port = server[0], server[1]
    if ":" in host:
        host = f"[{host}]"
    return [f"{request.url.scheme}://{host}:{port}"], _passed_on(request)


def _passed_on(request: Request) -> dict[str, str]:
    authorization = request.headers.get("authorization")
    return {"Authorization": authorization} if authorization else {}


def console_app(verify: ssl.SSLContext | None = None) -> Starlette:
    """The console a worker serves (at ``/ui/``), over its own REST API. ``verify`` checks
    the worker's own https listeners when a page comes in by one (the worker's own
    certificate, at the local address the page was asked at)."""
    # A connection per call to its own worker: none is left open, idle, to hold up the
    # worker's graceful shutdown (an https one waits for the peer's close).
    console = Console(_own_worker, title="Sluice", verify=verify or True, keep_alive=False)
    return Starlette(routes=console.routes())


def standalone_console_app(
    urls: Sequence[str], *, title: str = "Kafka Connect", verify: ssl.SSLContext | bool = True
) -> Starlette:
    """``sluice console``: the console in front of the Kafka Connect cluster at ``urls`` (any
    worker of it; the next is tried when one does not answer), served at ``/ui/``. ``verify``
    is how https workers are checked (an SSL context, True for the system's authorities,
    False for no check)."""
    clean = [u.strip().rstrip("/") for u in urls if u.strip()]
    if not clean:
        raise ValueError("sluice console needs the URL of a Kafka Connect worker")
    clean = [u if "://" in u else "http://" + u for u in clean]

    def target(request: Request) -> tuple[list[str], dict[str, str]]:
        return clean, _passed_on(request)

    console = Starlette(routes=Console(target, title=title, verify=verify).routes())

    async def to_console(request: Request) -> Response:
        return RedirectResponse(request.scope.get("root_path", "").rstrip("/") + "/ui/", status_code=307)

    return Starlette(routes=[Route("/", to_console), Route("/ui", to_console), Mount("/ui", console)])
