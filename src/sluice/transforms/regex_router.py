"""RegexRouter (``org.apache.kafka.connect.transforms.RegexRouter``): renames the topic of
records whose topic matches a regular expression.

When ``regex`` matches the whole topic, the first match of ``regex`` in the topic is
replaced by ``replacement`` (Java's ``Matcher.replaceFirst``): ``$1``/``${name}`` insert a
captured group and a backslash makes the next character literal. Otherwise the record is
left alone.

Regular expressions are written in Java's syntax and translated to Python's (see
:mod:`sluice._java.regex` for what is supported): named groups ``(?<name>...)``, ``\\Q...\\E``
quoting, the POSIX classes ``\\p{Alpha}``…; ``\\d``, ``\\w``, ``\\s`` and ``\\b`` are
ASCII-only as in Java. Java constructs Python's ``re`` lacks (most Unicode categories, class
unions ``[a-d[m-p]]`` and intersections ``[a-z&&[^e]]``) are rejected as invalid.
"""

from __future__ import annotations

import re
from typing import Any

from sluice._java.regex import compile_java_regex, parse_replacement
from sluice.api.config import ConfigDef, ConfigType, Importance
from sluice.api.errors import ConfigError, DataError
from sluice.api.records import ConnectRecord, SinkBatch
from sluice.api.transforms import Transformation

__all__ = ["JavaReplacement", "RegexRouter", "RegexValidator"]

REGEX_CONFIG = "regex"
REPLACEMENT_CONFIG = "replacement"
_ROUTE_CACHE_SIZE = 1024

# -- Java regular expressions -------------------------------------------------------------


class RegexValidator:
    """Kafka's ``RegexValidator``: the value must compile as a regular expression."""

    def __call__(self, name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(name, "null", "Invalid regex: null")
        try:
            compile_java_regex(value)
        except (re.error, ValueError, OverflowError) as e:
            raise ConfigError(name, value, f"Invalid regex: {e}") from e

    def __str__(self) -> str:
        return "valid regex"


# -- Java replacement strings -------------------------------------------------------------


class JavaReplacement:
    """A replacement string of ``Matcher.replaceFirst``/``replaceAll``, parsed once.

    ``$n`` takes the longest run of digits that is still a group number, ``${name}`` a
    named group; an unmatched group inserts nothing; ``\\x`` is the character ``x``. An
    invalid replacement is reported (with Java's message) when it is first used, as Java
    only finds out then.
    """

    __slots__ = ("_parts", "_error")

    def __init__(self, replacement: str, pattern: re.Pattern[str]) -> None:
        self._parts: tuple[str | int, ...] = ()
        self._error: str | None = None
        try:
            self._parts = parse_replacement(replacement, pattern)
        except ValueError as e:
            self._error = str(e)

    def expand(self, match: re.Match[str]) -> str:
        if self._error is not None:
            raise DataError(self._error)
        return "".join(p if isinstance(p, str) else (match.group(p) or "") for p in self._parts)


# -- the transformation -------------------------------------------------------------------

CONFIG_DEF = (
    ConfigDef()
    .define(
        REGEX_CONFIG,
        ConfigType.STRING,
        validator=RegexValidator(),
        importance=Importance.HIGH,
        documentation="Java regular expression the whole topic name must match for the record to be routed.",
    )
    .define(
        REPLACEMENT_CONFIG,
        ConfigType.STRING,
        importance=Importance.HIGH,
        documentation="The new topic name: replaces the first match of the regular expression; $1, $2… insert "
        "the captured groups.",
    )
)


class RegexRouter(Transformation):
    """Changes the topic of each record whose topic the regular expression matches."""

    OVERVIEW_DOC = (
        "Changes the topic of records whose topic matches a Java regular expression: the first match is "
        "replaced with the replacement string, as java.util.regex.Matcher#replaceFirst() does."
    )

    def __init__(self) -> None:
        self._regex: re.Pattern[str] | None = None
        self._replacement: JavaReplacement | None = None
        # topic -> new topic, or None when the regex does not match: a task sees few topics
        self._routes: dict[str, str | None] = {}

    def configure(self, configs: dict[str, Any]) -> None:
        values = CONFIG_DEF.parse(configs)
        self._regex = compile_java_regex(values[REGEX_CONFIG])
        replacement = values[REPLACEMENT_CONFIG]
        if replacement is None:
            raise ConfigError(REPLACEMENT_CONFIG, "null", "Replacement must not be null")
        self._replacement = JavaReplacement(replacement, self._regex)
        self._routes = {}

    def _route(self, topic: str) -> str | None:
        regex = self._regex
        if regex.fullmatch(topic) is None:  # type: ignore[union-attr]
            new_topic = None
        else:
            # Matcher.replaceFirst replaces the first match found, not always the whole topic
            first: re.Match[str] = regex.search(topic)  # type: ignore[union-attr,assignment]
            expanded = self._replacement.expand(first)  # type: ignore[union-attr]
            new_topic = topic[: first.start()] + expanded + topic[first.end() :]
        if len(self._routes) >= _ROUTE_CACHE_SIZE:
            self._routes.clear()
        self._routes[topic] = new_topic
        return new_topic

    def apply(self, record: ConnectRecord) -> ConnectRecord:
        topic = record.topic
        try:
            new_topic = self._routes[topic]
        except KeyError:
            new_topic = self._route(topic)
        if new_topic is None:
            return record
        return record.new_record(topic=new_topic, headers=record.headers.duplicate())

    def apply_batch(self, batch: SinkBatch) -> SinkBatch:
        """Each distinct topic routed once; the routed records' headers copied, as :meth:`apply`
        does (an invalid replacement raises here as it would there: the chain then runs per
        record and reports it)."""
        routes = self._routes
        topics = batch.topics
        new_topics: dict[str, str | None] = {}
        for topic in dict.fromkeys(topics):
            new_topics[topic] = routes[topic] if topic in routes else self._route(topic)
        if all(new is None for new in new_topics.values()):
            return batch
        if len(new_topics) == 1:
            routed = [next(iter(new_topics.values()))] * len(topics)
        else:
            routed = [topic if (new := new_topics[topic]) is None else new for topic in topics]
        headers = batch.headers
        if headers.count(None) != len(headers):
            headers = [
                h if h is None or new_topics[topic] is None else h.duplicate()
                for topic, h in zip(topics, headers, strict=True)
            ]
        return batch.with_columns(topics=routed, headers=headers)

    def config(self) -> ConfigDef:
        return CONFIG_DEF
