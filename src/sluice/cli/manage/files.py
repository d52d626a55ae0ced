"""Reading connector configurations and offsets from files: Java properties or JSON,
``--set KEY=VALUE`` overrides, and the predefined connectors of the project's ``etc/``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sluice.cli.manage.errors import UsageError

HOME_ENV = "SLUICE_HOME"

#: Predefined connectors, loadable by name alone (``sluice connector load file-source``),
#: as ``confluent local services connect connector load``: name → file in the project's
#: ``etc/`` folder (``$SLUICE_HOME/etc`` when ``SLUICE_HOME`` is set).
PREDEFINED: dict[str, str] = {
    "file-source": "connect-file-source.properties",
    "file-sink": "connect-file-sink.properties",
    "jdbc-source": "connect-jdbc-source.properties",
    "jdbc-sink": "connect-jdbc-sink.properties",
    "hdfs-sink": "connect-hdfs-sink.properties",
    "s3-sink": "connect-s3-sink.properties",
    "elasticsearch-sink": "connect-elasticsearch-sink.properties",
    "replicator": "connect-replicator.properties",
}

# The states a file may ask a connector to be created in (``initial_state``).
WAITABLE_STATES = ("RUNNING", "PAUSED", "STOPPED")


@dataclass
class ConnectorFile:
    """A connector configuration read from a file: Java properties, a flat JSON map, or a
    JSON create request ``{"name", "config", "initial_state"?}``."""

    config: dict[str, str | None]
    name: str | None = None
    initial_state: str | None = None
    #: the name the file gave, when the command loads it under another name
    renamed_from: str | None = None


def _config_value(key: str, value: Any, source: str) -> str | None:
    # What Kafka Connect's Map<String,String> bodies accept: scalars, as strings.
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise UsageError(
        f"{source}: the value of '{key}' must be a string, a number or a boolean, not {type(value).__name__}"
    )


def _decode(data: bytes) -> str:
    # Java reads .properties as ISO-8859-1; a UTF-8 file (what editors write today) is
    # read as UTF-8 when it is valid UTF-8.
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parse_config_bytes(data: bytes, source: str = "<config>") -> ConnectorFile:
    """Parse a connector configuration: JSON when the content starts with ``{``, else Java
    properties. Raises :class:`UsageError` with a message naming ``source``."""
    text = _decode(data)
    if text.lstrip().startswith(("{", "[")):
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{source} is not valid JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise UsageError(f'{source}: expected a JSON object (a config map or {{"name": …, "config": {{…}}}})')
        name: str | None = None
        initial_state: str | None = None
        if "config" in parsed and isinstance(parsed.get("config"), dict):
            raw = parsed["config"]
            if parsed.get("name") is not None:
                if not isinstance(parsed["name"], str):
                    raise UsageError(f"{source}: 'name' must be a string")
                name = parsed["name"].strip()
            if parsed.get("initial_state") is not None:
                state = str(parsed["initial_state"]).upper()
                if state not in WAITABLE_STATES:
                    raise UsageError(
                        f"{source}: initial_state must be RUNNING, PAUSED or STOPPED, not {parsed['initial_state']}"
                    )
                initial_state = state
            # "tasks" and "type": a saved ConnectorInfo (``load --json``) loads back as is
            unknown = set(parsed) - {"name", "config", "initial_state", "tasks", "type"}
            if unknown:
                raise UsageError(f"{source}: unknown top-level field(s) {', '.join(sorted(unknown))}")
        else:
            raw = parsed
        config = {str(k): _config_value(str(k), v, source) for k, v in raw.items()}
        if name is None and isinstance(config.get("name"), str):
            name = config["name"]
    else:
        import javaproperties

        try:
            config = dict(javaproperties.loads(text))
        except ValueError as exc:  # InvalidUEscapeError
            raise UsageError(f"{source} is not a valid properties file: {exc}") from None
        name = config.get("name")
        initial_state = None
    if not config:
        raise UsageError(f"{source} holds no configuration")
    return ConnectorFile(config=config, name=name, initial_state=initial_state)


def parse_offsets_bytes(data: bytes, source: str = "<offsets>") -> dict[str, Any]:
    """Parse an offsets file for ``offsets alter``: ``{"offsets": [...]}`` or a bare list."""
    try:
        parsed = json.loads(_decode(data))
    except ValueError as exc:
        raise UsageError(f"{source} is not valid JSON: {exc}") from None
    if isinstance(parsed, list):
        parsed = {"offsets": parsed}
    if not isinstance(parsed, dict) or not isinstance(parsed.get("offsets"), list):
        raise UsageError(f'{source}: expected {{"offsets": [{{"partition": {{…}}, "offset": {{…}}}}, …]}}')
    return parsed


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def etc_dir() -> Path:
    """The folder of the predefined connector files."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home) / "etc"
    # src/sluice/cli/manage/files.py → the project root
    return Path(__file__).resolve().parents[4] / "etc"


def predefined_file(name: str) -> Path:
    if name not in PREDEFINED:
        known = ", ".join(sorted(PREDEFINED))
        raise UsageError(
            f"'{name}' is not a predefined connector (predefined: {known}); give a config file with -d FILE"
        )
    path = etc_dir() / PREDEFINED[name]
    if not path.is_file():
        raise UsageError(f"the file of predefined connector '{name}' is missing: {path} (set ${HOME_ENV}?)")
    return path


def parse_assignments(items: Iterable[str], what: str = "--set") -> dict[str, str]:
    """``["k=v", …]`` → ``{"k": "v"}``."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{what} expects KEY=VALUE, got '{item}'")
        out[key.strip()] = value
    return out


def load_connector_config(
    name: str | None, file: str | None, overrides: Mapping[str, str] | None = None
) -> ConnectorFile:
    """The config from ``file`` (or the predefined connector ``name``), with ``overrides``
    applied and ``name`` set to the connector's name."""
    if file is not None:
        parsed = parse_config_bytes(read_bytes(file), "standard input" if file == "-" else file)
    elif name is not None:
        path = predefined_file(name)
        parsed = parse_config_bytes(path.read_bytes(), str(path))
    else:
        raise UsageError("give a connector config file with -d FILE")
    parsed.config.update(overrides or {})
    if name is not None:
        if file is not None and parsed.name and parsed.name != name:
            parsed.renamed_from = parsed.name
        parsed.config["name"] = name
        parsed.name = name
    return parsed
