"""``io.confluent.connect.avro.AvroConverter``: Avro with Schema Registry framing.

Every non-null key or value is written as Confluent's wire format: the magic byte ``0``,
the schema id as a 4-byte big-endian integer, then the Avro binary encoding of the value
(a top-level ``bytes`` schema writes the bytes bare, as Confluent's serializer does). The
Avro schema is derived from the Connect schema exactly as Confluent's ``AvroData`` does
(see :mod:`sluice.formats.avro`) and registered under the subject the subject name
strategy gives (``<topic>-key``/``<topic>-value`` by default). Reading looks the writer
schema up by id, and its version in the subject, and builds the Connect schema from it.

Configs (Confluent's names and defaults):

* ``schema.registry.url`` (required; comma-separated, tried in order),
  ``basic.auth.credentials.source`` (``URL`` | ``USER_INFO``) with ``basic.auth.user.info``
  (``user:password``; also the deprecated ``schema.registry.basic.auth.user.info``),
  ``bearer.auth.credentials.source=STATIC_TOKEN`` with ``bearer.auth.token``,
  ``request.header.<name>``, ``http.connect.timeout.ms``/``http.read.timeout.ms``.
* ``auto.register.schemas`` (true), ``use.latest.version`` (false),
  ``latest.compatibility.strict`` (true), ``latest.cache.ttl.sec`` (-1),
  ``normalize.schemas`` (false).
* ``key.subject.name.strategy``/``value.subject.name.strategy``:
  ``io.confluent.kafka.serializers.subject.TopicNameStrategy`` (default),
  ``...RecordNameStrategy``, ``...TopicRecordNameStrategy`` (short names accepted);
  ``...AssociatedNameStrategy`` (Confluent's newest default) behaves as TopicNameStrategy.
* ``AvroData``: ``schemas.cache.config`` (1000), ``connect.meta.data`` (true),
  ``enhanced.avro.schema.support`` (false), ``generalized.sum.type.support`` (false),
  ``scrub.invalid.names`` (false), ``ignore.default.for.nullables`` (false),
  ``allow.optional.map.keys`` (false), ``flatten.singleton.unions`` (true).

A registry client can be injected (``AvroConverter(client)``, as Confluent's test
constructor): any object with the methods of :class:`RegistryClient`.
"""

from __future__ import annotations

import base64
import threading
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from sluice.api.config import ConfigDef, ConfigType, Importance, ValidString
from sluice.api.converter import Converter, SchemaAndValue
from sluice.api.data import Schema
from sluice.api.errors import ConfigError, DataError, RetriableError
from sluice.formats.avro import (
    AvroCodec,
    AvroData,
    AvroType,
    avro_json,
    backward_compatibility_errors,
    parse_avro,
    project,
)

__all__ = [
    "AvroConverter",
    "HttpRegistryClient",
    "RegistryClient",
    "RegistryError",
    "subject_name",
]

MAGIC_BYTE = 0

SCHEMA_REGISTRY_URL_CONFIG = "schema.registry.url"
AUTO_REGISTER_SCHEMAS = "auto.register.schemas"
USE_LATEST_VERSION = "use.latest.version"
LATEST_COMPATIBILITY_STRICT = "latest.compatibility.strict"
LATEST_CACHE_TTL = "latest.cache.ttl.sec"
NORMALIZE_SCHEMAS = "normalize.schemas"
KEY_SUBJECT_NAME_STRATEGY = "key.subject.name.strategy"
VALUE_SUBJECT_NAME_STRATEGY = "value.subject.name.strategy"
BASIC_AUTH_CREDENTIALS_SOURCE = "basic.auth.credentials.source"
USER_INFO_CONFIG = "basic.auth.user.info"
SCHEMA_REGISTRY_USER_INFO_CONFIG = "schema.registry.basic.auth.user.info"
BEARER_AUTH_CREDENTIALS_SOURCE = "bearer.auth.credentials.source"
BEARER_AUTH_TOKEN_CONFIG = "bearer.auth.token"
HTTP_CONNECT_TIMEOUT_MS = "http.connect.timeout.ms"
HTTP_READ_TIMEOUT_MS = "http.read.timeout.ms"
REQUEST_HEADER_PREFIX = "request.header."
SCHEMAS_CACHE_CONFIG = "schemas.cache.config"
CONNECT_META_DATA_CONFIG = "connect.meta.data"
ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG = "enhanced.avro.schema.support"
GENERALIZED_SUM_TYPE_SUPPORT_CONFIG = "generalized.sum.type.support"
SCRUB_INVALID_NAMES_CONFIG = "scrub.invalid.names"
IGNORE_DEFAULT_FOR_NULLABLES_CONFIG = "ignore.default.for.nullables"
ALLOW_OPTIONAL_MAP_KEYS_CONFIG = "allow.optional.map.keys"
FLATTEN_SINGLETON_UNIONS_CONFIG = "flatten.singleton.unions"
DISCARD_TYPE_DOC_DEFAULT_CONFIG = "discard.type.doc.default"
TYPE_CONFIG = "converter.type"

_STRATEGY_PACKAGE = "io.confluent.kafka.serializers.subject."
TOPIC_NAME_STRATEGY = _STRATEGY_PACKAGE + "TopicNameStrategy"
RECORD_NAME_STRATEGY = _STRATEGY_PACKAGE + "RecordNameStrategy"
TOPIC_RECORD_NAME_STRATEGY = _STRATEGY_PACKAGE + "TopicRecordNameStrategy"
ASSOCIATED_NAME_STRATEGY = _STRATEGY_PACKAGE + "AssociatedNameStrategy"
_STRATEGIES = {
    TOPIC_NAME_STRATEGY: "topic",
    RECORD_NAME_STRATEGY: "record",
    TOPIC_RECORD_NAME_STRATEGY: "topic_record",
    ASSOCIATED_NAME_STRATEGY: "topic",
}
_STRATEGIES.update({k.rsplit(".", 1)[1]: v for k, v in list(_STRATEGIES.items())})

_CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


# ============================================================================ registry client


class RegistryError(Exception):
    """An error answer from the Schema Registry (``status``, Confluent ``error_code``)."""

    def __init__(self, status: int, error_code: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status}, error code {error_code})")
        self.status = status
        self.error_code = error_code
        self.message = message


class RegistryUnavailable(Exception):
    """The registry could not be reached (connection refused, timeout)."""


class RegistryClient(Protocol):
    """What the converter needs from a Schema Registry (Confluent's REST API)."""

    def register(self, subject: str, schema: str, normalize: bool = False) -> int:
        """Register (or find) ``schema`` under ``subject``; its id."""

    def lookup(self, subject: str, schema: str, normalize: bool = False) -> tuple[int, int]:
        """``(id, version)`` of ``schema`` in ``subject``; raises :class:`RegistryError` if absent."""

    def schema_by_id(self, schema_id: int) -> str:
        """The schema text with this id."""

    def latest(self, subject: str) -> tuple[int, int, str]:
        """``(id, version, schema)`` of the subject's latest version."""


class HttpRegistryClient:
    """A small synchronous client for the registry's REST API (httpx2), without caching
    (the converter caches)."""

    def __init__(
        self,
        urls: Sequence[str],
        *,
        auth: tuple[str, str] | None = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        connect_timeout: float = 60.0,
        read_timeout: float = 60.0,
        transport: Any = None,
    ) -> None:
        import httpx2

        if not urls:
            raise ConfigError(SCHEMA_REGISTRY_URL_CONFIG, "[]", "No schema registry URL given")
        self._urls: list[str] = []
        url_auth: tuple[str, str] | None = None
        for url in urls:
            parts = urllib.parse.urlsplit(url.strip())
            if parts.username is not None:
                url_auth = (urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or ""))
                netloc = parts.hostname or ""
                if parts.port:
                    netloc += f":{parts.port}"
                parts = parts._replace(netloc=netloc)
            self._urls.append(urllib.parse.urlunsplit(parts).rstrip("/"))
        request_headers = {"Accept": f"{_CONTENT_TYPE}, application/json", **(headers or {})}
        if token:
            request_headers["Authorization"] = f"Bearer {token}"
        else:
            credentials = auth or url_auth
            if credentials is not None:
                encoded = base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode("ascii")
                request_headers["Authorization"] = f"Basic {encoded}"
        self._http = httpx2.Client(
            headers=request_headers,
            timeout=httpx2.Timeout(read_timeout, connect=connect_timeout),
            transport=transport,
        )
        self._errors = (httpx2.TransportError,)

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, body: Any = None, params: Mapping[str, str] | None = None) -> Any:
        last: Exception | None = None
        for base in self._urls:
            try:
                response = self._http.request(
                    method,
                    base + path,
                    json=body,
                    params=params,
                    headers={"Content-Type": _CONTENT_TYPE} if body is not None else None,
                )
            except self._errors as exc:
                last = exc
                continue
            if response.status_code >= 400:
                try:
                    payload = response.json()
                except ValueError:
                    payload = {}
                if not isinstance(payload, dict):
                    payload = {}
                raise RegistryError(
                    response.status_code,
                    int(payload.get("error_code", response.status_code)),
                    str(payload.get("message") or response.text or response.reason_phrase),
                )
            return response.json()
        raise RegistryUnavailable(f"Schema Registry unreachable at {', '.join(self._urls)}: {last}")

    @staticmethod
    def _subject(subject: str) -> str:
        return urllib.parse.quote(subject, safe="")

    def register(self, subject: str, schema: str, normalize: bool = False) -> int:
        answer = self._request(
            "POST",
            f"/subjects/{self._subject(subject)}/versions",
            {"schema": schema},
            {"normalize": "true"} if normalize else None,
        )
        return int(answer["id"])

    def lookup(self, subject: str, schema: str, normalize: bool = False) -> tuple[int, int]:
        answer = self._request(
            "POST",
            f"/subjects/{self._subject(subject)}",
            {"schema": schema},
            {"normalize": "true"} if normalize else None,
        )
        return int(answer["id"]), int(answer["version"])

    def schema_by_id(self, schema_id: int) -> str:
        answer = self._request("GET", f"/schemas/ids/{int(schema_id)}")
        if answer.get("schemaType", "AVRO") != "AVRO":
            raise DataError(f"Schema {schema_id} is a {answer.get('schemaType')} schema, not Avro")
        return str(answer["schema"])

    def latest(self, subject: str) -> tuple[int, int, str]:
        answer = self._request("GET", f"/subjects/{self._subject(subject)}/versions/latest")
        return int(answer["id"]), int(answer["version"]), str(answer["schema"])


# ============================================================================ subjects


def subject_name(strategy: str, topic: str, is_key: bool, schema: AvroType) -> str:
    """The subject a subject name strategy gives (Confluent's class names or short names)."""
    kind = _STRATEGIES.get(strategy)
    if kind is None:
        raise ConfigError(
            KEY_SUBJECT_NAME_STRATEGY if is_key else VALUE_SUBJECT_NAME_STRATEGY,
            strategy,
            "Unknown subject name strategy",
        )
    if kind == "topic":
        return f"{topic}-key" if is_key else f"{topic}-value"
    if schema.type != "record":
        config = KEY_SUBJECT_NAME_STRATEGY if is_key else VALUE_SUBJECT_NAME_STRATEGY
        what = "key" if is_key else "value"
        raise DataError(f"In configuration {config} = {strategy}, the message {what} must only be a record schema")
    name = schema.fullname
    return name if kind == "record" else f"{topic}-{name}"


# ============================================================================ configuration


def _strategy_validator(name: str, value: Any) -> None:
    if value not in _STRATEGIES:
        raise ConfigError(name, value, f"Must be one of {', '.join(k for k in _STRATEGIES if '.' in k)}")


def _config_def() -> ConfigDef:
    d = ConfigDef()
    d.define(
        TYPE_CONFIG,
        ConfigType.STRING,
        "value",
        validator=ValidString.in_("key", "value", "header"),
        importance=Importance.LOW,
        documentation="How this converter will be used.",
    )
    d.define(
        SCHEMA_REGISTRY_URL_CONFIG,
        ConfigType.LIST,
        importance=Importance.HIGH,
        documentation="Comma-separated list of URLs for schema registry instances that can be used to "
        "register or look up schemas.",
    )
    d.define(
        AUTO_REGISTER_SCHEMAS,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.MEDIUM,
        documentation="Specify if the Serializer should attempt to register the Schema with Schema Registry",
    )
    d.define(
        USE_LATEST_VERSION,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Specify if the Serializer should use the latest subject version for serialization",
    )
    d.define(
        LATEST_COMPATIBILITY_STRICT,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Whether to check for backward compatibility between the latest subject version and "
        " the Schema of the object to be serialized",
    )
    d.define(
        LATEST_CACHE_TTL,
        ConfigType.LONG,
        -1,
        importance=Importance.LOW,
        documentation="TTL in seconds for caching the latest schema (-1: no expiry)",
    )
    d.define(
        NORMALIZE_SCHEMAS,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Whether to normalize schemas, which generally ignores ordering when it is not significant",
    )
    for key in (KEY_SUBJECT_NAME_STRATEGY, VALUE_SUBJECT_NAME_STRATEGY):
        d.define(
            key,
            ConfigType.STRING,
            TOPIC_NAME_STRATEGY,
            validator=_strategy_validator,
            importance=Importance.MEDIUM,
            documentation="Determines how to construct the subject name under which the schema is registered "
            "with the schema registry. By default, <topic>-key / <topic>-value is used as subject.",
        )
    d.define(
        BASIC_AUTH_CREDENTIALS_SOURCE,
        ConfigType.STRING,
        "URL",
        validator=ValidString.in_("URL", "USER_INFO", "SASL_INHERIT"),
        importance=Importance.MEDIUM,
        documentation="Specify how to pick the credentials for Basic Auth header. The supported values are "
        "URL, USER_INFO and SASL_INHERIT",
    )
    d.define(
        USER_INFO_CONFIG,
        ConfigType.PASSWORD,
        "",
        importance=Importance.MEDIUM,
        documentation="Specify the user info for Basic Auth in the form of {username}:{password}",
    )
    d.define(
        SCHEMA_REGISTRY_USER_INFO_CONFIG,
        ConfigType.PASSWORD,
        "",
        importance=Importance.MEDIUM,
        documentation="Deprecated alias of basic.auth.user.info",
    )
    d.define(
        BEARER_AUTH_CREDENTIALS_SOURCE,
        ConfigType.STRING,
        "STATIC_TOKEN",
        importance=Importance.MEDIUM,
        documentation="Specify how to pick the credentials for Bearer Auth header.",
    )
    d.define(
        BEARER_AUTH_TOKEN_CONFIG,
        ConfigType.PASSWORD,
        "",
        importance=Importance.MEDIUM,
        documentation="Specify the Bearer token to be used for authentication",
    )
    d.define(
        HTTP_CONNECT_TIMEOUT_MS,
        ConfigType.INT,
        60000,
        importance=Importance.LOW,
        documentation="Timeout for establishing a connection to the schema registry, in milliseconds",
    )
    d.define(
        HTTP_READ_TIMEOUT_MS,
        ConfigType.INT,
        60000,
        importance=Importance.LOW,
        documentation="Timeout for reading a schema registry answer, in milliseconds",
    )
    d.define(
        SCHEMAS_CACHE_CONFIG,
        ConfigType.INT,
        1000,
        importance=Importance.LOW,
        documentation="Size of the converted schemas cache",
    )
    d.define(
        CONNECT_META_DATA_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Toggle for enabling/disabling connect converter to add its meta data to the output "
        "schema or not",
    )
    d.define(
        ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Toggle for enabling/disabling enhanced avro schema support: Enum symbol preservation "
        "and Package Name awareness",
    )
    d.define(
        GENERALIZED_SUM_TYPE_SUPPORT_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Toggle for enabling/disabling generalized sum type support: interoperability of "
        "enum/union with other schema formats",
    )
    d.define(
        SCRUB_INVALID_NAMES_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether to scrub invalid names by replacing invalid characters with valid ones",
    )
    d.define(
        IGNORE_DEFAULT_FOR_NULLABLES_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.MEDIUM,
        documentation="Whether to ignore the default for nullable fields when the value is null",
    )
    d.define(
        ALLOW_OPTIONAL_MAP_KEYS_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Allow optional string map key when converting from Connect Schema to Avro Schema.",
    )
    d.define(
        FLATTEN_SINGLETON_UNIONS_CONFIG,
        ConfigType.BOOLEAN,
        True,
        importance=Importance.LOW,
        documentation="Whether to flatten singleton unions",
    )
    d.define(
        DISCARD_TYPE_DOC_DEFAULT_CONFIG,
        ConfigType.BOOLEAN,
        False,
        importance=Importance.LOW,
        documentation="Deprecated; not supported (must be false).",
    )
    return d


_CONFIG_DEF = _config_def()


# ============================================================================ the converter


class _Writer:
    """What serialising one Connect schema to one subject needs, once resolved."""

    __slots__ = ("schema_id", "codec", "source", "for_schema", "prefix")

    def __init__(self, schema_id: int, codec: AvroCodec, source: AvroType, for_schema: AvroType) -> None:
        self.schema_id = schema_id
        self.codec = codec
        self.source = source  # the schema written (the latest version with use.latest.version)
        self.for_schema = for_schema  # the schema generated from the Connect schema
        self.prefix = bytes([MAGIC_BYTE]) + schema_id.to_bytes(4, "big", signed=True)


class AvroConverter(Converter):
    """Connect data ⇄ Confluent-framed Avro (``io.confluent.connect.avro.AvroConverter``)."""

    def __init__(self, client: RegistryClient | None = None) -> None:
        self._client: Any = client
        self._owns_client = client is None
        self._is_key = False
        self._lock = threading.RLock()
        self._configured = False

    # -- configuration --------------------------------------------------------------

    def config(self) -> ConfigDef:
        return _config_def()

    def configure(self, configs: dict[str, Any], is_key: bool = False) -> None:
        conf = dict(configs)
        conf[TYPE_CONFIG] = "key" if is_key else "value"
        if self._client is not None and SCHEMA_REGISTRY_URL_CONFIG not in conf:
            conf[SCHEMA_REGISTRY_URL_CONFIG] = "injected://client"
        parsed = _CONFIG_DEF.parse(conf)
        if parsed[DISCARD_TYPE_DOC_DEFAULT_CONFIG]:
            raise ConfigError(
                DISCARD_TYPE_DOC_DEFAULT_CONFIG, "true", "The deprecated discard.type.doc.default mode is not supported"
            )
        self._is_key = is_key
        self._auto_register = parsed[AUTO_REGISTER_SCHEMAS]
        self._use_latest = parsed[USE_LATEST_VERSION]
        self._latest_strict = parsed[LATEST_COMPATIBILITY_STRICT]
        self._latest_ttl = parsed[LATEST_CACHE_TTL]
        self._normalize = parsed[NORMALIZE_SCHEMAS]
        self._strategy = parsed[KEY_SUBJECT_NAME_STRATEGY if is_key else VALUE_SUBJECT_NAME_STRATEGY]
        self._avro_data = AvroData(
            cache_size=max(1, parsed[SCHEMAS_CACHE_CONFIG]),
            connect_meta_data=parsed[CONNECT_META_DATA_CONFIG],
            enhanced_avro_schema_support=parsed[ENHANCED_AVRO_SCHEMA_SUPPORT_CONFIG],
            generalized_sum_type_support=parsed[GENERALIZED_SUM_TYPE_SUPPORT_CONFIG],
            ignore_default_for_nullables=parsed[IGNORE_DEFAULT_FOR_NULLABLES_CONFIG],
            scrub_invalid_names=parsed[SCRUB_INVALID_NAMES_CONFIG],
            allow_optional_map_keys=parsed[ALLOW_OPTIONAL_MAP_KEYS_CONFIG],
            flatten_singleton_unions=parsed[FLATTEN_SINGLETON_UNIONS_CONFIG],
        )
        self._cache_size = max(1, parsed[SCHEMAS_CACHE_CONFIG])
        if self._client is None:
            self._client = self._make_client(parsed, conf)
        # caches (schema ids both ways)
        self._writers: dict[tuple[str, int], _Writer] = {}  # (subject, id(avro schema)) -> writer
        self._json: dict[int, tuple[AvroType, str]] = {}  # id(avro schema) -> its JSON text
        self._by_id: dict[int, tuple[AvroType, AvroCodec]] = {}  # schema id -> writer schema, codec
        self._versions: dict[tuple[str, int], int] = {}  # (subject, schema id) -> version
        self._latest: dict[str, tuple[float, int, int, AvroType]] = {}  # subject -> (time, id, version, schema)
        self._codecs: dict[int, tuple[AvroType, AvroCodec]] = {}
        self._configured = True

    @staticmethod
    def _make_client(parsed: Mapping[str, Any], conf: Mapping[str, Any]) -> HttpRegistryClient:
        source = parsed[BASIC_AUTH_CREDENTIALS_SOURCE]
        auth: tuple[str, str] | None = None
        if source == "USER_INFO":
            info = parsed[USER_INFO_CONFIG].value or parsed[SCHEMA_REGISTRY_USER_INFO_CONFIG].value
            if ":" not in info:
                raise ConfigError(USER_INFO_CONFIG, "[hidden]", "Expected {username}:{password}")
            user, _, password = info.partition(":")
            auth = (user, password)
        elif source == "SASL_INHERIT":
            raise ConfigError(BASIC_AUTH_CREDENTIALS_SOURCE, source, "SASL_INHERIT is not supported")
        token = parsed[BEARER_AUTH_TOKEN_CONFIG].value or None
        if token and parsed[BEARER_AUTH_CREDENTIALS_SOURCE] != "STATIC_TOKEN":
            raise ConfigError(
                BEARER_AUTH_CREDENTIALS_SOURCE, parsed[BEARER_AUTH_CREDENTIALS_SOURCE], "Only STATIC_TOKEN is supported"
            )
        headers = {
            k[len(REQUEST_HEADER_PREFIX) :]: str(v) for k, v in conf.items() if k.startswith(REQUEST_HEADER_PREFIX)
        }
        return HttpRegistryClient(
            parsed[SCHEMA_REGISTRY_URL_CONFIG],
            auth=auth,
            token=token,
            headers=headers,
            connect_timeout=parsed[HTTP_CONNECT_TIMEOUT_MS] / 1000.0,
            read_timeout=parsed[HTTP_READ_TIMEOUT_MS] / 1000.0,
        )

    def close(self) -> None:
        client, self._client = self._client, None
        if self._owns_client and client is not None and hasattr(client, "close"):
            client.close()

    def _check_configured(self) -> None:
        if not self._configured:
            raise DataError("AvroConverter must be configured before use")

    # -- Connect -> bytes -----------------------------------------------------------

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any, headers: Any = None) -> bytes | None:
        self._check_configured()
        try:
            avro = self._avro_data.from_connect_schema(schema)
            datum = self._avro_data.from_connect_data(schema, avro, value)
            if datum is None:
                return None
            writer = self._writer(topic, avro)
            if writer.source is not avro:
                datum = project(datum, avro, writer.source)
            return writer.prefix + writer.codec.encode(datum)
        except RegistryUnavailable as exc:
            raise RetriableError(f"Failed to serialize Avro data from topic {topic}: {exc}") from exc
        except (RegistryError, DataError) as exc:
            raise DataError(f"Failed to serialize Avro data from topic {topic}: {_message(exc)}") from exc

    def from_connect_batch(
        self, topic: str, schemas: list[Schema | None], values: list[Any]
    ) -> list[bytes | None] | None:
        return [self.from_connect_data(topic, s, v) for s, v in zip(schemas, values, strict=True)]

    def _schema_json(self, avro: AvroType) -> str:
        cached = self._json.get(id(avro))
        if cached is not None and cached[0] is avro:
            return cached[1]
        text = avro_json(avro)
        self._bounded(self._json)[id(avro)] = (avro, text)
        return text

    def _writer(self, topic: str, avro: AvroType) -> _Writer:
        subject = subject_name(self._strategy, topic, self._is_key, avro)
        latest_mode = self._use_latest and not self._auto_register
        key = (subject, id(avro))
        writer = self._writers.get(key)
        if writer is not None and writer.for_schema is avro and (not latest_mode or self._latest_fresh(subject)):
            return writer
        text = self._schema_json(avro)
        what = "key" if self._is_key else "value"
        with self._lock:
            if self._auto_register:
                try:
                    schema_id = self._client.register(subject, text, self._normalize)
                except RegistryError as exc:
                    raise RegistryError(
                        exc.status,
                        exc.error_code,
                        f"Error registering Avro {what} schema under subject '{subject}': {exc.message}",
                    ) from exc
                writer = _Writer(schema_id, self._codec_for(avro), avro, avro)
                if schema_id not in self._by_id:  # as Confluent's client: the id now names this schema
                    self._bounded(self._by_id)[schema_id] = (avro, writer.codec)
            elif latest_mode:
                schema_id, _version, latest = self._latest_version(subject)
                if self._latest_strict:
                    errors = backward_compatibility_errors(latest, avro)
                    if errors:
                        raise DataError(
                            "Incompatible schema of type 'AVRO'. Set latest.compatibility.strict=false to disable "
                            f"this check. Error messages: {'; '.join(errors)}"
                        )
                writer = _Writer(schema_id, self._codec_for(latest), latest, avro)
            else:
                try:
                    schema_id, _version = self._client.lookup(subject, text, self._normalize)
                except RegistryError as exc:
                    raise RegistryError(
                        exc.status,
                        exc.error_code,
                        f"Error retrieving Avro {what} schema for subject '{subject}': {exc.message}. With "
                        f"{AUTO_REGISTER_SCHEMAS}=false the schema must already be registered under '{subject}'",
                    ) from exc
                writer = _Writer(schema_id, self._codec_for(avro), avro, avro)
            self._bounded(self._writers)[key] = writer
        return writer

    def _latest_fresh(self, subject: str) -> bool:
        entry = self._latest.get(subject)
        return entry is not None and (self._latest_ttl < 0 or time.monotonic() - entry[0] < self._latest_ttl)

    def _latest_version(self, subject: str) -> tuple[int, int, AvroType]:
        if self._latest_fresh(subject):
            _, schema_id, version, schema = self._latest[subject]
            return schema_id, version, schema
        what = "key" if self._is_key else "value"
        try:
            schema_id, version, text = self._client.latest(subject)
        except RegistryError as exc:
            raise RegistryError(
                exc.status,
                exc.error_code,
                f"Error retrieving latest version of Avro {what} schema for subject '{subject}': {exc.message}",
            ) from exc
        schema = self._schema_for_id(schema_id, text)[0]
        self._bounded(self._latest)[subject] = (time.monotonic(), schema_id, version, schema)
        return schema_id, version, schema

    def _codec_for(self, avro: AvroType) -> AvroCodec:
        cached = self._codecs.get(id(avro))
        if cached is not None and cached[0] is avro:
            return cached[1]
        codec = AvroCodec(avro)
        self._bounded(self._codecs)[id(avro)] = (avro, codec)
        return codec

    def _bounded(self, cache: dict[Any, Any]) -> dict[Any, Any]:
        """``cache``, first emptied of its oldest entry if it is full."""
        if len(cache) >= self._cache_size:
            del cache[next(iter(cache))]
        return cache

    # -- bytes -> Connect -----------------------------------------------------------

    def to_connect_data(self, topic: str, value: bytes | None, headers: Any = None) -> SchemaAndValue:
        self._check_configured()
        if value is None:
            return SchemaAndValue(None, None)
        try:
            schema, result = self._to_connect(topic, value)
            return SchemaAndValue(schema, result)
        except RegistryUnavailable as exc:
            raise RetriableError(f"Failed to deserialize data for topic {topic} to Avro: {exc}") from exc
        except (RegistryError, DataError) as exc:
            raise DataError(f"Failed to deserialize data for topic {topic} to Avro: {_message(exc)}") from exc

    def to_connect_batch(self, topic: str, values: list[bytes | None]) -> tuple[list[Schema | None], list[Any]] | None:
        schemas: list[Schema | None] = []
        out: list[Any] = []
        for v in values:
            sv = self.to_connect_data(topic, v)
            schemas.append(sv.schema)
            out.append(sv.value)
        return schemas, out

    def _to_connect(self, topic: str, value: bytes) -> tuple[Schema | None, Any]:
        data = memoryview(value)
        if len(data) < 5:
            raise DataError("Error deserializing schema ID: the message is shorter than the 5-byte header")
        if data[0] != MAGIC_BYTE:
            raise DataError("Unknown magic byte!")
        schema_id = int.from_bytes(data[1:5], "big", signed=True)
        writer, codec = self._schema_for_id(schema_id)
        raw = codec.decode(data[5:])
        subject = subject_name(self._strategy, topic, self._is_key, writer)
        version = self._version(subject, schema_id, writer)
        reader = writer
        if self._use_latest:
            reader = self._latest_version(subject)[2]
            if reader is not writer:
                raw = project(raw, writer, reader)
        connect_schema = self._avro_data.to_connect_schema(reader, version)
        return connect_schema, self._avro_data.to_connect_data(connect_schema, reader, raw)

    def _schema_for_id(self, schema_id: int, text: str | None = None) -> tuple[AvroType, AvroCodec]:
        cached = self._by_id.get(schema_id)
        if cached is not None:
            return cached
        what = "key" if self._is_key else "value"
        if text is None:
            try:
                text = self._client.schema_by_id(schema_id)
            except RegistryError as exc:
                raise RegistryError(
                    exc.status, exc.error_code, f"Error retrieving Avro {what} schema for id {schema_id}: {exc.message}"
                ) from exc
        schema = parse_avro(text)
        entry = (schema, self._codec_for(schema))
        self._bounded(self._by_id)[schema_id] = entry
        self._bounded(self._json)[id(schema)] = (schema, text)
        return entry

    def _version(self, subject: str, schema_id: int, writer: AvroType) -> int:
        key = (subject, schema_id)
        version = self._versions.get(key)
        if version is not None:
            return version
        what = "key" if self._is_key else "value"
        try:
            found_id, version = self._client.lookup(subject, self._schema_json(writer))
        except RegistryError as exc:
            raise RegistryError(
                exc.status,
                exc.error_code,
                f"Error retrieving Avro {what} schema version for id {schema_id} in subject '{subject}': {exc.message}",
            ) from exc
        self._bounded(self._versions)[key] = version
        return version


def _message(exc: Exception) -> str:
    return exc.message if isinstance(exc, DataError) else str(exc)
