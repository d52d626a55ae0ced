"""``sluice._java.dates``: the SimpleDateFormat port (expected values checked against Java
17's ``java.text.SimpleDateFormat``), its pattern reader, shared by the per-record and
columnar formatters, and ``java.util.Date`` instants of Python dates and times."""

from __future__ import annotations

import datetime as dt

import pytest

from sluice._java.dates import (
    EPOCH,
    JAVA_PATTERN_LETTERS,
    MONTHS,
    WEEKDAYS,
    SimpleDateFormat,
    date_field_formatter,
    java_date_string,
    pattern_tokens,
    to_utc_datetime,
)


def millis(d: dt.datetime) -> int:
    delta = d - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def at(ms: int) -> dt.datetime:
    return EPOCH + dt.timedelta(milliseconds=ms)


# -- SimpleDateFormat -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "ms", "text"),
    [
        ("yyyy-MM-dd", 0, "1970-01-01"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 1500000000123, "2017-07-14T02:40:00.123Z"),
        ("yyyy MM dd HH mm ss SSS z", 86401234, "1970 01 02 00 00 01 234 UTC"),
        ("yy/M/d H:m:s", 1500000000123, "17/7/14 2:40:0"),
        ("yyyyMMddHHmmss", 951782400000, "20000229000000"),
        ("EEE, dd MMM yyyy HH:mm:ss Z", 1500000000123, "Fri, 14 Jul 2017 02:40:00 +0000"),
        ("EEEE MMMM d yyyy hh:mm a", 1500000000123, "Friday July 14 2017 02:40 AM"),
        ("y-D k K S SSSS", 1234, "1970-1 24 0 234 0234"),
        ("'quote''s' yyyy X XX XXX zzzz u", 0, "quote's 1970 Z Z Z Coordinated Universal Time 4"),
        ("MMMyyyy", 253402300799999, "Dec9999"),
    ],
)
def test_format(pattern: str, ms: int, text: str) -> None:
    assert SimpleDateFormat(pattern).format(at(ms)) == text


def test_format_dates_and_times() -> None:
    fmt = SimpleDateFormat("yyyy-MM-dd HH:mm:ss.SSS")
    assert fmt.format(dt.date(2020, 2, 29)) == "2020-02-29 00:00:00.000"
    assert fmt.format(dt.time(13, 14, 15, 16000)) == "1970-01-01 13:14:15.016"
    assert fmt.format(dt.datetime(2020, 1, 1, 12)) == "2020-01-01 12:00:00.000"
    offset = dt.timezone(dt.timedelta(hours=2))
    assert fmt.format(dt.datetime(2020, 1, 1, 12, tzinfo=offset)) == "2020-01-01 10:00:00.000"


@pytest.mark.parametrize(
    ("pattern", "text", "ms"),
    [
        ("yyyy-MM-dd", "2017-01-05", 1483574400000),
        ("yyyy-MM-dd", "2017-13-05", 1515110400000),  # lenient: month 13
        ("yyyy-MM-dd", "2017-02-30xyz", 1488412800000),  # lenient day, trailing text ignored
        ("yyyyMMddHHmmss", "20170105123456", 1483619696000),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2017-01-05T12:34:56.789+02:00", 1483612496789),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2017-01-05T12:34:56.789Z", 1483619696789),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2017-01-05T12:34:56.789-05", 1483637696789),
        ("yyyy-MM-dd HH:mm:ss Z", "2017-01-05 12:34:56 -0530", 1483639496000),
        ("yyyy-MM-dd HH:mm:ss Z", "2017-01-05 12:34:56 GMT+5:30", 1483599896000),
        ("yyyy-MM-dd HH:mm:ss z", "2017-01-05 12:34:56 UTC", 1483619696000),
        ("yyyy MM dd HH mm ss SSS z", "1970 01 02 00 00 01 234 UTC", 86401234),
        ("dd MMM yyyy", "05 jan 2017", 1483574400000),
        ("dd MMMM yyyy", "05 January 2017", 1483574400000),
        ("hh:mm a", "12:30 PM", 45000000),
        ("hh:mm a", "12:30 AM", 1800000),
        ("HH:mm", "25:61", 93660000),
        ("yyyy-MM-dd", " 2017-01-05", 1483574400000),
        ("yyyy-MM-dd", "2017- 01-05", 1483574400000),
        ("SSS", "5", 5),
        ("yyyy-MM-dd HH:mm:ss.SSS", "2017-01-05 10:00:00.12345", 1483610412345),
        ("yyyyMMdd", "2017015", 1483574400000),
        ("D yyyy", "60 2016", 1456704000000),
        ("EEE, dd MMM yyyy HH:mm:ss Z", "Thu, 05 Jan 2017 12:34:56 +0100", 1483616096000),
        ("yyyy-MM-dd", "2017-1-5 trailing", 1483574400000),
    ],
)
def test_parse(pattern: str, text: str, ms: int) -> None:
    assert millis(SimpleDateFormat(pattern).parse(text)) == ms


@pytest.mark.parametrize(
    ("pattern", "text"),
    [("yyyy-MM-dd", "abc"), ("yyyy-MM-dd'T'HH:mm:ssXXX", "2017-01-05T12:34:56+0200"), ("yyyy-MM-dd", "2017-01")],
)
def test_parse_failures(pattern: str, text: str) -> None:
    with pytest.raises(ValueError, match="Unparseable date"):
        SimpleDateFormat(pattern).parse(text)


def test_two_digit_years_fall_in_a_century_window() -> None:
    fmt = SimpleDateFormat("yy/M/d")
    this_year = dt.datetime.now(dt.UTC).year
    parsed = fmt.parse(f"{(this_year + 10) % 100:02d}/1/1")
    assert parsed.year == this_year + 10
    parsed = fmt.parse(f"{(this_year - 50) % 100:02d}/1/1")
    assert parsed.year == this_year - 50
    assert fmt.parse("2017/1/5").year == 2017  # more than two digits: literal


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("yyyy-MM-dd'T", "Unterminated quote"),
        ("yyyy-bb", "Illegal pattern character 'b'"),
        ("YYYY-ww", "pattern letter 'Y' is not supported"),
        ("G yyyy", "pattern letter 'G' is not supported"),
        ("XXXX", "invalid ISO 8601 format: length=4"),
    ],
)
def test_bad_patterns(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimpleDateFormat(pattern)


def test_an_unsupported_letter_is_refused_before_a_later_unterminated_quote() -> None:
    # Java reports the first problem it reads; so does the port.
    with pytest.raises(ValueError, match="pattern letter 'G' is not supported"):
        SimpleDateFormat("G 'unterminated")
    with pytest.raises(ValueError, match="Illegal pattern character 'b'"):
        SimpleDateFormat("b 'unterminated")


def test_stand_alone_month_formats_and_parses_as_month() -> None:
    assert SimpleDateFormat("LLL yyyy").format(at(0)) == "Jan 1970"
    assert millis(SimpleDateFormat("LL/yyyy").parse("02/1970")) == 31 * 86_400_000


# -- the pattern reader -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "tokens"),
    [
        ("", []),
        ("yyyyMMdd", [("y", 4), ("M", 2), ("d", 2)]),
        ("yyyy-MM-dd'T'HH", [("y", 4), "-", ("M", 2), "-", ("d", 2), "T", ("H", 2)]),
        ("'quote''s' y", ["quote's ", ("y", 1)]),
        ("''", ["'"]),
        ("''''", ["''"]),
        ("'x'''", ["x'"]),
        ("'a''b'", ["a'b"]),
        ("'abc'", ["abc"]),
        ("'yyyy' - 12:00", ["yyyy - 12:00"]),
        ("é yy ü", ["é ", ("y", 2), " ü"]),
        ("GyYMLwWDdFEuaHkKhmsSzZX", [(c, 1) for c in "GyYMLwWDdFEuaHkKhmsSzZX"]),
    ],
)
def test_pattern_tokens(pattern: str, tokens: list[object]) -> None:
    assert pattern_tokens(pattern) == tokens


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("'", "Unterminated quote"),
        ("yyyy'T", "Unterminated quote"),
        ("'''", "Unterminated quote"),
        ("yyyy-bb", "Illegal pattern character 'b'"),
        ("'ok' c", "Illegal pattern character 'c'"),
        ("b'", "Illegal pattern character 'b'"),  # read before the quote
    ],
)
def test_pattern_tokens_refuse_what_java_refuses(pattern: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        pattern_tokens(pattern)


def test_pattern_tokens_check_each_field_in_order() -> None:
    seen: list[tuple[str, int]] = []
    assert pattern_tokens("yyyy-MM", lambda letter, count: seen.append((letter, count))) == [("y", 4), "-", ("M", 2)]
    assert seen == [("y", 4), ("M", 2)]

    def refuse_w(letter: str, count: int) -> None:
        if letter == "w":
            raise LookupError(letter)

    with pytest.raises(LookupError):
        pattern_tokens("yyyy ww 'unterminated", refuse_w)  # the check runs before the quote is found open


def test_java_pattern_letters() -> None:
    assert sorted(JAVA_PATTERN_LETTERS) == sorted(set("GyYMLwWDdFEuaHkKhmsSzZX"))
    assert MONTHS[0] == "January" and len(MONTHS) == 12
    assert WEEKDAYS[0] == "Monday" and len(WEEKDAYS) == 7


@pytest.mark.parametrize(
    ("letter", "count", "ms", "text"),
    [
        ("G", 1, 0, "AD"),
        ("Y", 4, 0, "1970"),
        ("Y", 4, 1609459200000, "2021"),  # 2021-01-01 (a Friday): week of 2020-12-27, week year 2021
        ("w", 1, 1609459200000, "1"),
        ("W", 1, 1609459200000, "1"),
        ("F", 1, 14 * 86_400_000, "3"),
        ("k", 2, 0, "24"),
        ("K", 1, 13 * 3_600_000, "1"),
        ("h", 1, 0, "12"),
        ("u", 1, 0, "4"),  # Thursday
        ("E", 4, 0, "Thursday"),
        ("a", 1, 13 * 3_600_000, "PM"),
        ("z", 4, 0, "Coordinated Universal Time"),
        ("Z", 1, 0, "+0000"),
        ("X", 3, 0, "Z"),
    ],
)
def test_field_formatters_cover_every_java_letter(letter: str, count: int, ms: int, text: str) -> None:
    assert date_field_formatter(letter, count)(at(ms)) == text


# -- java.util.Date instants ----------------------------------------------------------------


def test_to_utc_datetime() -> None:
    utc = dt.UTC
    assert to_utc_datetime(dt.datetime(2020, 1, 1, 12)) == dt.datetime(2020, 1, 1, 12, tzinfo=utc)
    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert to_utc_datetime(dt.datetime(2020, 1, 1, 12, tzinfo=plus2)) == dt.datetime(2020, 1, 1, 10, tzinfo=utc)
    assert to_utc_datetime(dt.date(2020, 2, 29)) == dt.datetime(2020, 2, 29, tzinfo=utc)
    assert to_utc_datetime(dt.time(1, 2, 3, 4000)) == dt.datetime(1970, 1, 1, 1, 2, 3, 4000, tzinfo=utc)
    assert to_utc_datetime(dt.time(1, 0, tzinfo=plus2)) == dt.datetime(1969, 12, 31, 23, 0, tzinfo=utc)
    with pytest.raises(TypeError, match="not a date or time: int"):
        to_utc_datetime(5)  # type: ignore[arg-type]


def test_java_date_string() -> None:
    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert java_date_string(dt.datetime(1970, 1, 1)) == "Thu Jan 01 00:00:00 UTC 1970"
    assert java_date_string(dt.datetime(2024, 2, 29, 13, 5, 9, 999999)) == "Thu Feb 29 13:05:09 UTC 2024"
    assert java_date_string(dt.datetime(2024, 1, 1, 1, tzinfo=plus2)) == "Sun Dec 31 23:00:00 UTC 2023"
    assert java_date_string(dt.date(2017, 7, 14)) == "Fri Jul 14 00:00:00 UTC 2017"
    assert java_date_string(dt.time(23, 59, 59)) == "Thu Jan 01 23:59:59 UTC 1970"
    assert java_date_string(dt.time(1, 0, tzinfo=plus2)) == "Thu Jan 01 01:00:00 UTC 1970"  # a time's zone is ignored
