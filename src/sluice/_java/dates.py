"""``java.text.SimpleDateFormat`` as Kafka's transforms use it (UTC, ``en_US`` names), and
the ``java.util.Date`` instant of a Python date, time or datetime."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable

from sluice._java.names import class_name

__all__ = [
    "EPOCH",
    "JAVA_PATTERN_LETTERS",
    "MONTHS",
    "WEEKDAYS",
    "SimpleDateFormat",
    "date_field_formatter",
    "java_date_string",
    "pattern_tokens",
    "to_utc_datetime",
]

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
"""The Unix epoch as an aware UTC datetime."""
_EPOCH_DATE = _dt.date(1970, 1, 1)


def to_utc_datetime(value: _dt.date | _dt.time) -> _dt.datetime:
    """An aware UTC datetime for a Connect date/time value, as ``java.util.Date`` would hold
    it: a naive ``datetime`` is taken as UTC, a ``date`` is midnight UTC that day and a
    ``time`` is that time on 1970-01-01 UTC."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            return value.replace(tzinfo=_dt.UTC)
        return value.astimezone(_dt.UTC)
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.UTC)
    if isinstance(value, _dt.time):
        offset = value.utcoffset() if value.tzinfo is not None else None
        naive = _dt.datetime.combine(_EPOCH_DATE, value.replace(tzinfo=None))
        if offset:
            naive -= offset
        return naive.replace(tzinfo=_dt.UTC)
    raise TypeError(f"not a date or time: {class_name(value)}")


def java_date_string(value: _dt.date | _dt.time) -> str:
    """``java.util.Date.toString()`` in UTC for a Connect date/time value:
    ``Thu Jan 01 00:00:00 UTC 1970``. A naive datetime is taken as UTC, an aware one is
    converted; a date is its midnight; a time is that time of day on 1970-01-01, its zone
    (if any) ignored."""
    if isinstance(value, _dt.datetime):
        d = value.astimezone(_dt.UTC) if value.tzinfo is not None and value.utcoffset() is not None else value
    elif isinstance(value, _dt.date):
        d = _dt.datetime(value.year, value.month, value.day)
    else:
        d = _dt.datetime.combine(_EPOCH_DATE, value.replace(tzinfo=None))
    return (
        f"{WEEKDAYS[d.weekday()][:3]} {MONTHS[d.month - 1][:3]} {d.day:02d} "
        f"{d.hour:02d}:{d.minute:02d}:{d.second:02d} UTC {d.year}"
    )


# -- java.text.SimpleDateFormat, UTC only ----------------------------------------------------------

MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
"""Month names in ``en_US``, January first."""
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""Day names in ``en_US``, Monday first (as :meth:`datetime.date.weekday` counts)."""

JAVA_PATTERN_LETTERS = "GyYMLwWDdFEuaHkKhmsSzZX"
"""The pattern letters ``java.text.SimpleDateFormat`` knows; any other ASCII letter
outside quotes is an ``Illegal pattern character``."""


def pattern_tokens(pattern: str, check: Callable[[str, int], None] | None = None) -> list[str | tuple[str, int]]:
    """A ``java.text.SimpleDateFormat`` pattern read as Java reads it: literal texts and
    ``(letter, count)`` fields, in order. Text in single quotes is literal and ``''`` is a
    quote (inside quotes too); other characters that are not ASCII letters are literal;
    a letter repeated ``count`` times is one field. Raises :class:`ValueError` with Java's
    message for a letter Java does not know (``Illegal pattern character 'b'``) and for an
    unterminated quote.

    ``check(letter, count)`` is called on each field as it is read and may raise to refuse
    it (before anything later in the pattern is looked at, as Java would)."""
    tokens: list[str | tuple[str, int]] = []
    literal: list[str] = []
    in_quote = False
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            if i + 1 < n and pattern[i + 1] == "'":
                literal.append("'")
                i += 2
                continue
            in_quote = not in_quote
            i += 1
            continue
        if in_quote or not ("a" <= c <= "z" or "A" <= c <= "Z"):
            literal.append(c)
            i += 1
            continue
        if c not in JAVA_PATTERN_LETTERS:
            raise ValueError(f"Illegal pattern character '{c}'")
        count = 1
        while i + count < n and pattern[i + count] == c:
            count += 1
        if check is not None:
            check(c, count)
        if literal:
            tokens.append("".join(literal))
            literal = []
        tokens.append((c, count))
        i += count
    if in_quote:
        raise ValueError("Unterminated quote")
    if literal:
        tokens.append("".join(literal))
    return tokens


def _sunday_based(day: _dt.date) -> int:
    """Day of the week counted from Sunday = 0 (weeks start on Sunday in ``en_US``)."""
    return (day.weekday() + 1) % 7


def _week_of_year(day: _dt.date) -> tuple[int, int]:
    """``(week year, week of year)`` of ``GregorianCalendar`` in ``en_US``: weeks start on
    Sunday and week 1 is the one containing January 1st."""
    week_start = day - _dt.timedelta(days=_sunday_based(day))
    if (_dt.date(day.year, 12, 31) - week_start).days < 6:  # the week holds next January 1st
        return day.year + 1, 1
    jan1 = _dt.date(day.year, 1, 1)
    first_week_start = jan1 - _dt.timedelta(days=_sunday_based(jan1))
    return day.year, (week_start - first_week_start).days // 7 + 1


def _pad(value: int, count: int) -> str:
    return str(value).zfill(count) if value >= 0 else "-" + str(-value).zfill(count)


def date_field_formatter(letter: str, count: int) -> Callable[[_dt.datetime], str]:
    """The formatter of one ``java.text.SimpleDateFormat`` field (UTC, ``en_US`` names): any
    Java pattern letter, repeated ``count`` times."""
    if letter == "G":
        return lambda t: "AD"
    if letter == "y":
        if count == 2:
            return lambda t: _pad(t.year % 100, 2)
        return lambda t: _pad(t.year, count)
    if letter == "Y":
        if count == 2:
            return lambda t: _pad(_week_of_year(t.date())[0] % 100, 2)
        return lambda t: _pad(_week_of_year(t.date())[0], count)
    if letter in "ML":
        if count >= 4:
            return lambda t: MONTHS[t.month - 1]
        if count == 3:
            return lambda t: MONTHS[t.month - 1][:3]
        return lambda t: _pad(t.month, count)
    if letter == "d":
        return lambda t: _pad(t.day, count)
    if letter == "k":
        return lambda t: _pad(t.hour or 24, count)
    if letter == "H":
        return lambda t: _pad(t.hour, count)
    if letter == "K":
        return lambda t: _pad(t.hour % 12, count)
    if letter == "h":
        return lambda t: _pad(t.hour % 12 or 12, count)
    if letter == "m":
        return lambda t: _pad(t.minute, count)
    if letter == "s":
        return lambda t: _pad(t.second, count)
    if letter == "S":
        return lambda t: _pad(t.microsecond // 1000, count)
    if letter == "E":
        if count >= 4:
            return lambda t: WEEKDAYS[t.weekday()]
        return lambda t: WEEKDAYS[t.weekday()][:3]
    if letter == "u":
        return lambda t: _pad(t.isoweekday(), count)
    if letter == "D":
        return lambda t: _pad(t.timetuple().tm_yday, count)
    if letter == "F":
        return lambda t: _pad((t.day - 1) // 7 + 1, count)
    if letter == "w":
        return lambda t: _pad(_week_of_year(t.date())[1], count)
    if letter == "W":
        return lambda t: _pad((t.day - 1 + _sunday_based(t.date().replace(day=1))) // 7 + 1, count)
    if letter == "a":
        return lambda t: "AM" if t.hour < 12 else "PM"
    if letter == "z":
        text = "Coordinated Universal Time" if count >= 4 else "UTC"
        return lambda t: text
    if letter == "Z":
        return lambda t: "+0000"
    return lambda t: "Z"  # X: ISO 8601 zone, "Z" for UTC whatever the count


# Letters SimpleDateFormat below formats and parses; the rest of Java's letters are refused.
_SUPPORTED_LETTERS = "yMLdDEuaHkKhmsSzZX"
_NUMERIC_LETTERS = "yDduHkKhmsS"
_UTC_NAMES = ("Coordinated Universal Time", "Greenwich Mean Time", "UTC", "GMT", "UT")


def _check_supported(letter: str, count: int) -> None:
    if letter not in _SUPPORTED_LETTERS:
        raise ValueError(f"pattern letter '{letter}' is not supported (supported: {_SUPPORTED_LETTERS})")
    if letter == "X" and count > 3:
        raise ValueError(f"invalid ISO 8601 format: length={count}")


class _Field:
    __slots__ = ("letter", "count")

    def __init__(self, letter: str, count: int) -> None:
        self.letter, self.count = letter, count

    def is_numeric(self) -> bool:
        return self.letter in _NUMERIC_LETTERS or (self.letter in "ML" and self.count <= 2)


class SimpleDateFormat:
    """Format and parse timestamps with a ``java.text.SimpleDateFormat`` pattern, always
    in UTC and with English names, the way Kafka's transforms use it.

    Supported letters: ``y`` (``yy`` = two-digit year), ``M``/``L`` (``M``/``MM`` numbers,
    ``MMM`` short and ``MMMM`` full English names), ``d``, ``D`` (day of year), ``E`` (day
    name), ``u`` (day number, Monday = 1), ``a`` (AM/PM), ``H``, ``k``, ``K``, ``h``, ``m``,
    ``s``, ``S`` (milliseconds, as a number), ``z`` (``UTC``), ``Z`` (``+0000``) and ``X``,
    ``XX``, ``XXX`` (``Z``); text in single quotes is literal and ``''`` is a quote. Other
    Java letters (``G``, ``Y``, ``w``, ``W``, ``F``) and letters Java does not know raise
    :class:`ValueError` when the pattern is compiled.

    Parsing is lenient as Java's default: numbers may have any number of digits unless the
    next field is also a number (then each takes exactly its letter count), out-of-range
    values roll over (month 13 is January of the next year), whitespace before a field is
    skipped, text after the pattern is ignored, a two-digit ``yy`` year falls within 80
    years before and 20 years after now, and zone offsets (``+hhmm``, ``+hh:mm``,
    ``GMT+h:mm``, ``Z`` for ``X``, ``UTC``/``GMT`` names) are applied. Parse failures raise
    :class:`ValueError`.
    """

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._tokens: list[str | _Field] = self._compile(pattern)
        self._formatters = [t if isinstance(t, str) else date_field_formatter(t.letter, t.count) for t in self._tokens]
        now = _dt.datetime.now(_dt.UTC)
        try:
            self._century_start = now.replace(year=now.year - 80)
        except ValueError:  # 29 February
            self._century_start = now.replace(year=now.year - 80, day=28)

    def to_pattern(self) -> str:
        return self.pattern

    # compile -------------------------------------------------------------------------------

    @staticmethod
    def _compile(pattern: str) -> list[str | _Field]:
        return [
            t if isinstance(t, str) else _Field("M" if t[0] == "L" else t[0], t[1])
            for t in pattern_tokens(pattern, _check_supported)
        ]

    # format --------------------------------------------------------------------------------

    def format(self, value: _dt.date | _dt.time) -> str:
        """Format a date, time or datetime (naive = UTC) in UTC."""
        t = to_utc_datetime(value)
        return "".join(f if isinstance(f, str) else f(t) for f in self._formatters)

    # parse ---------------------------------------------------------------------------------

    def parse(self, text: str) -> _dt.datetime:
        """Parse ``text`` into an aware UTC datetime; raises :class:`ValueError`."""
        fields: dict[str, int] = {}
        pm: bool | None = None
        offset_minutes = 0
        pos = 0
        tokens = self._tokens
        for index, token in enumerate(tokens):
            if isinstance(token, str):
                if not text.startswith(token, pos):
                    raise self._unparseable(text)
                pos += len(token)
                continue
            field_start = pos  # where an abutting field's width counts from (before blanks)
            while pos < len(text) and text[pos] in " \t":
                pos += 1
            if pos >= len(text):
                raise self._unparseable(text)
            c = token.letter
            if token.is_numeric():
                following = tokens[index + 1] if index + 1 < len(tokens) else None
                if isinstance(following, _Field) and following.is_numeric():
                    # Abutting numbers (yyyyMMdd): Java reads this one from the text cut
                    # off letter-count characters after where the field started, and fails
                    # when the text is shorter than that.
                    limit = field_start + token.count
                    if limit > len(text):
                        raise self._unparseable(text)
                else:
                    limit = len(text)
                start = pos
                # Java's DecimalFormat: an optional minus sign, then decimal digits (any
                # Unicode decimal digit).
                if pos < limit and text[pos] == "-":
                    pos += 1
                while pos < limit and text[pos].isdecimal():
                    pos += 1
                digits = text[start:pos]
                if not digits or digits == "-":
                    raise self._unparseable(text)
                number = int(digits)
                if c == "y":
                    if token.count <= 2 and len(digits) == 2 and digits.isdecimal():
                        fields["yy"] = number
                    else:
                        fields["y"] = number
                elif c == "k":
                    fields["H"] = 0 if number == 24 else number
                elif c == "K":
                    fields["h"] = number
                elif c == "h":
                    fields["h"] = 0 if number == 12 else number
                elif c == "M":
                    fields["M"] = number
                else:
                    fields[c] = number
            elif c == "M":
                found = self._match_name(text, pos, MONTHS)
                if found is None:
                    raise self._unparseable(text)
                fields["M"] = found[0] + 1
                pos = found[1]
            elif c == "E":
                found = self._match_name(text, pos, WEEKDAYS)
                if found is None:
                    raise self._unparseable(text)
                pos = found[1]
            elif c == "a":
                found = self._match_name(text, pos, ("AM", "PM"))
                if found is None:
                    raise self._unparseable(text)
                pm = found[0] == 1
                pos = found[1]
            elif c == "X":
                offset_minutes, pos = self._parse_iso_zone(text, pos, token.count)
            else:  # z, Z
                offset_minutes, pos = self._parse_general_zone(text, pos)
        return self._resolve(fields, pm, offset_minutes, text)

    def _unparseable(self, text: str) -> ValueError:
        return ValueError(f'Unparseable date: "{text}"')

    @staticmethod
    def _match_name(text: str, pos: int, names: tuple[str, ...]) -> tuple[int, int] | None:
        """Longest case-insensitive match of a full or three-letter name at ``pos``."""
        best: tuple[int, int] | None = None
        lowered = text.lower()
        for i, name in enumerate(names):
            for candidate in (name, name[:3]):
                if lowered.startswith(candidate.lower(), pos):
                    end = pos + len(candidate)
                    if best is None or end > best[1]:
                        best = (i, end)
        return best

    def _numeric_zone(self, text: str, pos: int, sign: int, count: int, colon: bool) -> tuple[int, int]:
        try:
            if not text[pos].isdigit():
                raise self._unparseable(text)
            hours = int(text[pos])
            pos += 1
            if pos < len(text) and text[pos].isdigit():
                hours = hours * 10 + int(text[pos])
                pos += 1
            elif count > 0 or not colon:
                raise self._unparseable(text)
            if hours > 23:
                raise self._unparseable(text)
            minutes = 0
            if count != 1:
                if colon:
                    if text[pos] != ":":
                        raise self._unparseable(text)
                    pos += 1
                if not (text[pos].isdigit() and text[pos + 1].isdigit()):
                    raise self._unparseable(text)
                minutes = int(text[pos : pos + 2])
                pos += 2
                if minutes > 59:
                    raise self._unparseable(text)
        except IndexError:
            raise self._unparseable(text) from None
        return sign * (hours * 60 + minutes), pos

    def _parse_iso_zone(self, text: str, pos: int, count: int) -> tuple[int, int]:
        c = text[pos]
        if c == "Z":
            return 0, pos + 1
        if c not in "+-":
            raise self._unparseable(text)
        return self._numeric_zone(text, pos + 1, 1 if c == "+" else -1, count, count == 3)

    def _parse_general_zone(self, text: str, pos: int) -> tuple[int, int]:
        c = text[pos]
        if c in "+-":
            return self._numeric_zone(text, pos + 1, 1 if c == "+" else -1, 0, False)
        if text[pos : pos + 3].upper() == "GMT":
            after = pos + 3
            if after < len(text) and text[after] in "+-":
                sign = 1 if text[after] == "+" else -1
                return self._numeric_zone(text, after + 1, sign, 0, True)
        for name in _UTC_NAMES:
            if text.startswith(name, pos):
                return 0, pos + len(name)
        raise self._unparseable(text)

    def _resolve(self, fields: dict[str, int], pm: bool | None, offset_minutes: int, text: str) -> _dt.datetime:
        ambiguous = False
        if "y" in fields:
            year = fields["y"]
        elif "yy" in fields:
            start_year = self._century_start.year
            two_digit = start_year % 100
            ambiguous = fields["yy"] == two_digit
            year = fields["yy"] + (start_year // 100) * 100 + (100 if fields["yy"] < two_digit else 0)
        else:
            year = 1970
        hour = fields.get("H", 0)
        if "h" in fields and "H" not in fields:
            hour = fields["h"] + (12 if pm else 0)
        try:
            if "D" in fields and "M" not in fields and "d" not in fields:
                day = _dt.datetime(year, 1, 1) + _dt.timedelta(days=fields["D"] - 1)
            else:
                month = fields.get("M", 1) - 1
                year += month // 12
                day = _dt.datetime(year, month % 12 + 1, 1) + _dt.timedelta(days=fields.get("d", 1) - 1)
            result = day + _dt.timedelta(
                hours=hour,
                minutes=fields.get("m", 0) - offset_minutes,
                seconds=fields.get("s", 0),
                milliseconds=fields.get("S", 0),
            )
            aware = result.replace(tzinfo=_dt.UTC)
            if ambiguous and aware < self._century_start:
                aware = aware.replace(year=aware.year + 100)
        except (ValueError, OverflowError) as e:
            raise ValueError(f'Unparseable date: "{text}" ({e})') from None
        return aware

    def __repr__(self) -> str:
        return f"SimpleDateFormat({self.pattern!r})"
