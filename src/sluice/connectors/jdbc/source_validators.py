"""Checks and recommenders of single keys of the JDBC source connector, as Confluent's
connector has them (its ``EnumRecommender``, the regular-expression list and column
mapping checks, the topic prefix rule), and :func:`parse_zone`, which reads the Java
``ZoneId`` strings ``db.timezone`` takes.

They know nothing of the key names: :mod:`.source_config` attaches them to its keys.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Mapping
from typing import Any

from sluice.api.config import Recommender
from sluice.api.errors import ConfigError

__all__ = [
    "EnumRecommender",
    "Hidden",
    "check_regex_list",
    "check_regex_to_column",
    "check_regex_to_columns",
    "check_time_zone",
    "check_topic_prefix",
    "parse_zone",
]

_TOPIC_PREFIX_INVALID = re.compile(r"[^a-zA-Z0-9._-]")


class EnumRecommender(Recommender):
    """A value among a few names, upper or lower case (Confluent's ``EnumRecommender``)."""

    def __init__(self, *values: str) -> None:
        self.values = list(values)
        self._valid = {v.lower() for v in values} | {v.upper() for v in values}

    def __call__(self, name: str, value: Any) -> None:
        if value is not None and str(value) not in self._valid:
            raise ConfigError(name, value, "Invalid enumerator")

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]:
        return list(self.values)

    def __str__(self) -> str:
        return "[" + ", ".join(self.values) + "]"


class Hidden(Recommender):
    """Marks its key as never visible (``query.masked``)."""

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool:
        return False


def check_regex_list(name: str, value: Any) -> None:
    for regex in value or []:
        try:
            re.compile(regex.strip())
        except re.error as e:
            raise ConfigError(
                name, value, f"Must be a valid comma-separated list of regular expression patterns: {e}"
            ) from None


def check_regex_to_columns(name: str, value: Any) -> None:
    for mapping in value or []:
        parts = mapping.strip().split(":")
        if len(parts) != 2:
            raise ConfigError(name, mapping.strip(), "Invalid format. Expected 'regex:[col1|col2|...]'")
        regex, columns = parts[0].strip(), parts[1].strip()
        try:
            re.compile(regex)
        except re.error as e:
            raise ConfigError(name, regex, f"Invalid regular expression: {e}") from None
        if not (columns.startswith("[") and columns.endswith("]")):
            raise ConfigError(name, columns, "Columns list must be enclosed in square brackets")
        inner = columns[1:-1]
        if not inner.strip():
            raise ConfigError(name, columns, "Columns list cannot be empty")
        if any(not c.strip() for c in inner.split("|")):
            raise ConfigError(name, columns, "Every column name should be non-empty string")


def check_regex_to_column(name: str, value: Any) -> None:
    for mapping in value or []:
        parts = mapping.strip().split(":")
        if len(parts) != 2:
            raise ConfigError(name, mapping.strip(), "Invalid format. Expected 'regex:columnName'")
        regex, column = parts[0].strip(), parts[1].strip()
        try:
            re.compile(regex)
        except re.error as e:
            raise ConfigError(name, regex, f"Invalid regular expression: {e}") from None
        if not column:
            raise ConfigError(name, column, "Column name cannot be empty")


def check_topic_prefix(name: str, value: Any) -> None:
    if value is None:
        raise ConfigError(name, value, "Topic prefix must not be null.")
    trimmed = str(value).strip()
    if len(trimmed) > 249:
        raise ConfigError(name, value, "Topic prefix length must not exceed max topic name length, 249 chars")
    if _TOPIC_PREFIX_INVALID.search(trimmed):
        raise ConfigError(
            name, value, "Topic prefix must not contain any character other than ASCII alphanumerics, '.', '_' and '-'."
        )


_SHORT_ZONE_IDS = {  # java.time.ZoneId.SHORT_IDS
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
}
_OFFSET = re.compile(r"^(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?$")


def parse_zone(text: str) -> dt.tzinfo:
    """A time zone from a Java ``ZoneId`` string: a region (``Europe/Paris``), ``UTC``/``Z``,
    an offset (``+02:00``, ``UTC+2``) or one of Java's short ids (``PST``)."""
    value = text.strip()
    if value in ("Z", "UTC", "GMT", "UT"):
        return dt.UTC
    m = _OFFSET.match(value)
    if m:
        sign, hours, minutes, seconds = m.groups()
        delta = dt.timedelta(hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0))
        if delta > dt.timedelta(hours=18):
            raise ValueError(f"offset out of range: {value}")
        return dt.timezone(-delta if sign == "-" else delta)
    try:
        return zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        short = _SHORT_ZONE_IDS.get(value)
        if short is None:
            raise ValueError(f"unknown time zone {value}") from None
        return parse_zone(short)


def check_time_zone(name: str, value: Any) -> None:
    if value is None:
        return
    try:
        parse_zone(str(value))
    except (ValueError, OSError):
        raise ConfigError(
            name,
            value,
            "Invalid time zone. See the list of valid time zones at "
            "https://docs.oracle.com/javase/8/docs/api/java/time/ZoneId.html#shortIds",
        ) from None
