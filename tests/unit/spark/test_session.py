"""Spark's JVM logs into the worker's log: Sluice's log4j2 configuration, and each line the
JVM writes to its standard error logged again through Python's logging."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sluice.spark import session


def test_the_drivers_jvm_options_name_sluices_log4j2_configuration() -> None:
    config = Path(session._log4j2_config())
    assert config.is_file()
    text = config.read_text()
    assert "appender.console.layout.pattern = %p %c: %X{connector.context}%enc{%m%n%ex}{CRLF}%n" in text
    # Java plugins log at INFO, as on Kafka Connect; Spark under them at WARN, as Spark's own.
    assert "rootLogger.level = info" in text
    for name in session.SPARK_LOGGERS:
        assert re.search(rf"^logger\.(\w+)\.name = {re.escape(name)}\nlogger\.\1\.level = warn$", text, re.M), name
    assert "org.apache.hadoop.util.NativeCodeLoader" in text

    single = session.LOG4J2_SINGLE_CONTEXT_OPTION
    assert session._with_log4j2_config("") == f"-Dlog4j2.configurationFile={config} {single}"
    assert session._with_log4j2_config("-Xss4m") == f"-Dlog4j2.configurationFile={config} {single} -Xss4m"


@pytest.mark.parametrize(
    "own", ["-Dlog4j2.configurationFile=/etc/mine.properties", "-Xss4m -Dlog4j.configurationFile=file:/etc/mine.xml"]
)
def test_a_log4j_configuration_of_the_users_own_is_kept(own: str) -> None:
    """Their file, and still one logging context (levels set through /admin/loggers apply)."""
    assert session._with_log4j2_config(own) == f"{session.LOG4J2_SINGLE_CONTEXT_OPTION} {own}"
    selector = "-Dlog4j2.contextSelector=org.apache.logging.log4j.core.async.AsyncLoggerContextSelector"
    assert session._with_log4j2_config(f"{selector} {own}") == f"{selector} {own}"


def test_a_path_with_spaces_is_quoted_for_spark_submit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session, "_log4j2_config", lambda: "/my dir/log4j2.properties")
    assert session._with_log4j2_config("-Xss4m") == (
        f'"-Dlog4j2.configurationFile=/my dir/log4j2.properties" {session.LOG4J2_SINGLE_CONTEXT_OPTION} -Xss4m'
    )


def _records(caplog: pytest.LogCaptureFixture) -> list[tuple[str, int, str]]:
    return [(r.name, r.levelno, r.getMessage()) for r in caplog.records]


def test_log4j_events_are_logged_under_the_java_loggers_name_at_their_level(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    session._log_jvm_line(
        "WARN org.apache.spark.SparkContext: a warning\\nsecond line\\n"
        "java.lang.IllegalStateException: boom\\n\tat Foo.bar(Foo.java:1)\\n"
    )
    session._log_jvm_line("ERROR org.apache.kafka.clients.producer.KafkaProducer: failed\\r\\n")
    session._log_jvm_line("INFO org.apache.spark.SparkEnv: registering\\n")
    session._log_jvm_line("FATAL x.Y$Z: gone\\n")
    assert _records(caplog) == [
        (
            "org.apache.spark.SparkContext",
            logging.WARNING,
            "a warning\nsecond line\njava.lang.IllegalStateException: boom\n\tat Foo.bar(Foo.java:1)",
        ),
        ("org.apache.kafka.clients.producer.KafkaProducer", logging.ERROR, "failed"),
        ("org.apache.spark.SparkEnv", logging.INFO, "registering"),
        ("x.Y$Z", logging.CRITICAL, "gone"),
    ]


def test_other_output_of_the_jvm_and_its_python_workers_is_logged_too(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    session._log_jvm_line("WARNING: Using incubator modules: jdk.incubator.vector")
    session._log_jvm_line('Setting default log level to "WARN".')
    session._log_jvm_line("Traceback (most recent call last):")
    session._log_jvm_line("   ")
    assert _records(caplog) == [
        ("sluice.spark.jvm", logging.DEBUG, "WARNING: Using incubator modules: jdk.incubator.vector"),
        ("sluice.spark.jvm", logging.DEBUG, 'Setting default log level to "WARN".'),
        ("sluice.spark.jvm", logging.INFO, "Traceback (most recent call last):"),
    ]


def test_the_reader_logs_every_line_until_the_stream_ends(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    output = tmp_path / "stderr"
    output.write_bytes(b"WARN a.B: one\\n\nnot utf-8: \xff\r\n")
    session._forward_jvm_output(output.open("rb"))
    assert _records(caplog) == [
        ("a.B", logging.WARNING, "one"),
        ("sluice.spark.jvm", logging.INFO, "not utf-8: \ufffd"),
    ]


def test_converting_arguments_for_the_jvm_does_not_import_pandas() -> None:
    """A worker's calls into Spark's JVM convert their arguments through py4j's converters;
    none of them imports pandas (PySpark's NumPy ones did, at the first call)."""
    probe = (
        "import sys\n"
        "import sluice.spark.session\n"
        "from py4j.protocol import INPUT_CONVERTER\n"
        "for argument in (5, 1.5, b'x', [1], {'a': 1}, {1}):\n"
        "    [c.can_convert(argument) for c in INPUT_CONVERTER]\n"
        "print('pandas' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "False", result.stderr


def test_the_driver_collects_with_the_serial_collector_unless_its_options_choose_one() -> None:
    assert session._with_serial_collector("") == "-XX:+UseSerialGC"
    assert session._with_serial_collector("-Xss4m") == "-XX:+UseSerialGC -Xss4m"
    for own in ("-XX:+UseG1GC", "-Xss4m -XX:+UseParallelGC", "-XX:+UseZGC -XX:+ZGenerational", "-XX:-UseSerialGC"):
        assert session._with_serial_collector(own) == own
