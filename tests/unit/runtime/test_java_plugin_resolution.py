"""Which plugin a name and a version requirement pick when Java plugins (Kafka Connect's
own, on plugin.path) sit next to Sluice's built-ins and Python plugins."""

from __future__ import annotations

import pytest

from sluice import __version__ as sluice_version
from sluice.runtime.plugins import PluginDesc, Plugins, UnknownPluginError

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
DEBEZIUM = "io.debezium.connector.postgresql.PostgresConnector"


class _Connector:
    """Stands for a Java connector class (the registry never instantiates it here)."""


class FakeJavaPlugins:
    """Java plugins as the driver's Connect runtime would list them."""

    def __init__(self, *plugins: tuple[str, str, str]) -> None:
        self.plugins = plugins
        self.listed = 0

    def java_descs(self) -> list[PluginDesc]:
        self.listed += 1
        return [PluginDesc(name, name, kind, version, _Connector) for name, kind, version in self.plugins]


@pytest.fixture
def java() -> FakeJavaPlugins:
    return FakeJavaPlugins(
        (FILE_SOURCE, "source", "4.2.0"),
        (FILE_SOURCE, "source", "4.3.1"),
        (DEBEZIUM, "source", "3.6.1.Final"),
    )


def test_the_built_in_wins_without_a_version(java: FakeJavaPlugins) -> None:
    plugins = Plugins([], java=java)
    desc = plugins.resolve_connector(FILE_SOURCE)
    assert desc.version == sluice_version
    assert desc.cls is not _Connector
    assert java.listed == 0  # a Python plugin answers without asking the JVM


@pytest.mark.parametrize("name", [FILE_SOURCE, "FileStreamSourceConnector", "FileStreamSource"])
def test_a_version_picks_the_java_plugin_by_any_of_its_names(java: FakeJavaPlugins, name: str) -> None:
    plugins = Plugins([], java=java)
    assert plugins.resolve_connector(name, "4.2.0").version == "4.2.0"
    assert plugins.resolve_connector(name, "[4.0,5.0)").version == "4.3.1"  # the latest that meets it
    assert plugins.resolve_connector(name, sluice_version).cls is not _Connector


def test_a_java_only_plugin_resolves_to_its_latest_version() -> None:
    plugins = Plugins(
        [], java=FakeJavaPlugins((DEBEZIUM, "source", "3.6.1.Final"), (DEBEZIUM, "source", "3.5.0.Final"))
    )
    assert plugins.resolve_connector("PostgresConnector").version == "3.6.1.Final"
    assert plugins.resolve_connector_of({"connector.class": DEBEZIUM}).version == "3.6.1.Final"


def test_no_installed_version_meets_the_requirement(java: FakeJavaPlugins) -> None:
    plugins = Plugins([], java=java)
    with pytest.raises(UnknownPluginError, match=r"available versions: \[.*4\.2\.0, 4\.3\.1\]"):
        plugins.resolve_connector(FILE_SOURCE, "9.9.9")
    assert plugins.versions(FILE_SOURCE, ("source", "sink")) == [sluice_version, "4.2.0", "4.3.1"]


def test_the_listing_has_each_version_once(java: FakeJavaPlugins) -> None:
    listed = [(d.class_name, d.version) for d in Plugins([], java=java).connectors() if d.class_name == FILE_SOURCE]
    assert sorted(listed) == sorted([(FILE_SOURCE, sluice_version), (FILE_SOURCE, "4.2.0"), (FILE_SOURCE, "4.3.1")])
