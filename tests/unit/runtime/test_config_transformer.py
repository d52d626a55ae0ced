"""Config providers as the worker builds them, ``${provider:[path:]key}`` resolution, and
the reverse transform of task configs (spec 3.7, endpoint 10 of 1.3)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sluice.api import ConfigData, ConfigError, ConfigProvider, ConnectError
from sluice.runtime.config_transformer import (
    ConfigProviders,
    has_placeholder,
    keys_with_placeholders,
    reverse_transform,
)

KAFKA_FILE = "org.apache.kafka.common.config.provider.FileConfigProvider"
KAFKA_DIRECTORY = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
KAFKA_ENV = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
THIS_MODULE = __name__


class RecordingProvider(ConfigProvider):
    """A user's own provider: values ``<path>/<key>`` for keys starting with ``k``; records calls."""

    instances: list[RecordingProvider] = []

    def __init__(self) -> None:
        self.configs: dict[str, str] | None = None
        self.calls: list[tuple[str, set[str] | None]] = []
        self.closed = False
        RecordingProvider.instances.append(self)

    def configure(self, configs: dict[str, str]) -> None:
        self.configs = configs

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        self.calls.append((path, keys))
        return ConfigData({key: f"{path}/{key}" for key in keys or () if key.startswith("k")}, ttl=self.ttl(path))

    @staticmethod
    def ttl(path: str) -> int | None:
        return 5000 if path == "expiring" else None

    def close(self) -> None:
        self.closed = True


class FailingGetProvider(ConfigProvider):
    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        raise RuntimeError("backend unreachable")


class FailingConfigureProvider(ConfigProvider):
    def configure(self, configs: dict[str, str]) -> None:
        raise ValueError("token param missing")

    def get(self, path: str, keys: set[str] | None = None) -> ConfigData:
        return ConfigData({})


class FailingCloseProvider(RecordingProvider):
    def close(self) -> None:
        super().close()
        raise OSError("close failed")


class NotAProvider:
    pass


class AbstractProvider(ConfigProvider):
    pass


@pytest.fixture(autouse=True)
def _forget_instances() -> None:
    RecordingProvider.instances.clear()


@pytest.fixture
def props_file(tmp_path: Path) -> Path:
    path = tmp_path / "app.properties"
    path.write_text("topic=orders\npassword=s3cret\nregexy=a\\\\1$0\\\\g<0>\n", encoding="utf-8")
    return path


def _file_providers() -> ConfigProviders:
    return ConfigProviders.from_worker_config({"config.providers": "file", "config.providers.file.class": KAFKA_FILE})


# -- building providers from worker properties -------------------------------------------


@pytest.mark.parametrize(
    "class_name",
    [
        KAFKA_FILE,
        "FileConfigProvider",
        "File",
        "sluice.providers.FileConfigProvider",
        "sluice.providers.file.FileConfigProvider",
        f"  {KAFKA_FILE}  ",
    ],
)
def test_builtin_file_provider_by_any_of_its_names(class_name: str, props_file: Path) -> None:
    providers = ConfigProviders.from_worker_config(
        {"config.providers": "file", "config.providers.file.class": class_name}
    )
    assert providers.names == ["file"]
    assert type(providers.provider("file")).__name__ == "FileConfigProvider"
    assert providers.transform({"topic": f"${{file:{props_file}:topic}}"}) == {"topic": "orders"}


def test_all_builtins_together(props_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "api-key").write_text("k-123", encoding="utf-8")
    monkeypatch.setenv("SLUICE_TEST_REGION", "eu-west-1")
    raw = {
        "config.providers": "file, dir,env",
        "config.providers.file.class": KAFKA_FILE,
        "config.providers.dir.class": KAFKA_DIRECTORY,
        "config.providers.env.class": KAFKA_ENV,
        "config.providers.env.param.allowlist.pattern": "SLUICE_TEST_.*",
    }
    with ConfigProviders.from_worker_config(raw) as providers:
        assert providers.names == ["file", "dir", "env"]
        assert providers.transform(
            {
                "topic": f"${{file:{props_file}:topic}}",
                "key": f"${{dir:{tmp_path / 'secrets'}:api-key}}",
                "region": "${env:SLUICE_TEST_REGION}",
            }
        ) == {"topic": "orders", "key": "k-123", "region": "eu-west-1"}


def test_params_reach_configure_with_the_prefix_stripped() -> None:
    providers = ConfigProviders.from_worker_config(
        {
            "config.providers": "mine",
            "config.providers.mine.class": f"{THIS_MODULE}.RecordingProvider",
            "config.providers.mine.param.url": "https://vault.local",
            "config.providers.mine.param.auth.token": "t",
            "config.providers.other.param.x": "not mine",
            "bootstrap.servers": "localhost:9092",
        }
    )
    assert RecordingProvider.instances[0].configs == {"url": "https://vault.local", "auth.token": "t"}
    assert providers.transform({"x": "${mine:p:k1}"}) == {"x": "p/k1"}


def test_user_provider_through_resolve_class() -> None:
    asked: list[str] = []

    def resolve(name: str) -> type:
        asked.append(name)
        return RecordingProvider

    providers = ConfigProviders.from_worker_config(
        {
            "config.providers": "mine,file",
            "config.providers.mine.class": "com.example.VaultProvider",
            "config.providers.file.class": KAFKA_FILE,
        },
        resolve_class=resolve,
    )
    assert asked == ["com.example.VaultProvider"]  # built-ins never reach the resolver
    assert providers.names == ["mine", "file"]


def test_no_providers_configured() -> None:
    providers = ConfigProviders.from_worker_config({"bootstrap.servers": "localhost:9092"})
    assert providers.names == []
    assert providers.transform({"a": "${file:/x:y}"}) == {"a": "${file:/x:y}"}
    assert ConfigProviders.from_worker_config({"config.providers": ""}).names == []


def test_listed_provider_without_class_is_skipped(caplog) -> None:
    with caplog.at_level(logging.WARNING):
        providers = ConfigProviders.from_worker_config({"config.providers": "vault"})
    assert providers.names == []
    assert "config.providers.vault.class is not set" in caplog.text
    assert providers.transform({"a": "${vault:secret/db:password}"}) == {"a": "${vault:secret/db:password}"}


@pytest.mark.parametrize(
    ("class_name", "reason"),
    [
        ("com.example.NoSuchProvider", "No module named 'com'"),
        (f"{THIS_MODULE}.NoSuchClass", "has no attribute 'NoSuchClass'"),
        ("JustAName", "neither a built-in config provider nor a Python path"),
        (f"{THIS_MODULE}.NotAProvider", "does not implement sluice.api.config_provider.ConfigProvider"),
        (f"{THIS_MODULE}.AbstractProvider", "the class is abstract"),
        (f"{THIS_MODULE}.THIS_MODULE", "is not a class"),
    ],
)
def test_bad_class_is_a_config_error_naming_the_provider(class_name: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ConfigProviders.from_worker_config({"config.providers": "vault", "config.providers.vault.class": class_name})
    message = str(caught.value)
    assert message.startswith(f"Invalid value {class_name} for configuration config.providers.vault.class: ")
    assert "'vault'" in message and reason in message


def test_resolver_failure_is_a_config_error_naming_the_provider() -> None:
    def resolve(name: str) -> type:
        raise ConnectError(f"Failed to find any class that implements ConfigProvider and which name matches {name}")

    with pytest.raises(
        ConfigError, match="config.providers.vault.class: Could not load the class of config provider 'vault'"
    ):
        ConfigProviders.from_worker_config(
            {"config.providers": "vault", "config.providers.vault.class": "Vault"}, resolve_class=resolve
        )


def test_failing_configure_is_a_config_error_naming_the_provider(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="^Could not configure config provider 'v' .*: token param missing$"):
        ConfigProviders.from_worker_config(
            {"config.providers": "v", "config.providers.v.class": f"{THIS_MODULE}.FailingConfigureProvider"}
        )
    with pytest.raises(ConfigError, match="config provider 'file' .*Path relative is not absolute"):
        ConfigProviders.from_worker_config(
            {
                "config.providers": "file",
                "config.providers.file.class": KAFKA_FILE,
                "config.providers.file.param.allowed.paths": "relative",
            }
        )


def test_providers_built_before_a_failure_are_closed() -> None:
    with pytest.raises(ConfigError):
        ConfigProviders.from_worker_config(
            {
                "config.providers": "a,b",
                "config.providers.a.class": f"{THIS_MODULE}.RecordingProvider",
                "config.providers.b.class": "com.example.Missing",
            }
        )
    assert [p.closed for p in RecordingProvider.instances] == [True]


# -- transform ---------------------------------------------------------------------------


def test_transform_resolves_and_keeps_everything_else(props_file: Path) -> None:
    config = {
        "name": "orders-source",
        "topic": f"${{file:{props_file}:topic}}",
        "connection.password": f"${{file:{props_file}:password}}",
        "file": "/data/in.txt",
    }
    original = dict(config)
    assert _file_providers().transform(config) == {
        "name": "orders-source",
        "topic": "orders",
        "connection.password": "s3cret",
        "file": "/data/in.txt",
    }
    assert config == original  # the input is not modified


def test_several_placeholders_in_one_value(props_file: Path) -> None:
    value = f"jdbc://${{file:{props_file}:topic}}:${{file:{props_file}:password}}@host/${{file:{props_file}:topic}}"
    assert _file_providers().transform({"url": value}) == {"url": "jdbc://orders:s3cret@host/orders"}


def test_unknown_provider_or_key_is_left_as_written(props_file: Path) -> None:
    config = {
        "a": "${vault:secret/db:password}",
        "b": f"${{file:{props_file}:no.such.key}}",
        "c": f"${{vault:x}}-${{file:{props_file}:topic}}-${{file:{props_file}:nope}}",
        "d": "${not a placeholder",
        "e": "$file:x:y}",
    }
    assert _file_providers().transform(config) == {**config, "c": f"${{vault:x}}-orders-${{file:{props_file}:nope}}"}


def test_missing_file_raises(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Could not read properties from file"):
        _file_providers().transform({"a": f"${{file:{tmp_path / 'missing.properties'}:k}}"})


def test_values_are_inserted_literally_and_not_rescanned(props_file: Path, tmp_path: Path) -> None:
    nested = tmp_path / "nested.properties"
    nested.write_text(f"inner=${{file:{props_file}:topic}}\n", encoding="utf-8")
    result = _file_providers().transform(
        {
            "regexy": f"${{file:{props_file}:regexy}}",
            "nested": f"${{file:{nested}:inner}}",
        }
    )
    assert result == {"regexy": "a\\1$0\\g<0>", "nested": f"${{file:{props_file}:topic}}"}


def test_path_is_optional_and_each_path_is_read_once() -> None:
    providers = ConfigProviders.from_worker_config(
        {"config.providers": "mine", "config.providers.mine.class": f"{THIS_MODULE}.RecordingProvider"}
    )
    result = providers.transform(
        {
            "a": "${mine:k1}",
            "b": "${mine:p1:k1} ${mine:p1:k2}",
            "c": "${mine:p2:k3}${mine:p1:k1}",
            "d": "${mine:p1:x}",
        }
    )
    assert result == {"a": "/k1", "b": "p1/k1 p1/k2", "c": "p2/k3p1/k1", "d": "${mine:p1:x}"}
    calls = sorted(RecordingProvider.instances[0].calls, key=lambda call: call[0])
    assert calls == [("", {"k1"}), ("p1", {"k1", "k2", "x"}), ("p2", {"k3"})]


def test_ttls_are_reported_by_path() -> None:
    providers = ConfigProviders({"mine": RecordingProvider()})
    result = providers.transform_with_ttls({"a": "${mine:expiring:k1}", "b": "${mine:static:k2}"})
    assert result.data == {"a": "expiring/k1", "b": "static/k2"}
    assert result.ttls == {"expiring": 5000}


def test_provider_failure_is_a_config_error_naming_the_provider() -> None:
    providers = ConfigProviders({"remote": FailingGetProvider()})
    with pytest.raises(ConfigError, match="^Config provider 'remote' failed to read path 'p': backend unreachable$"):
        providers.transform({"a": "${remote:p:k}"})


def test_resolved_values_are_never_logged(props_file: Path, caplog) -> None:
    with caplog.at_level(logging.DEBUG):
        providers = _file_providers()
        result = providers.transform_with_ttls({"pw": f"${{file:{props_file}:password}}", "x": "${nope:k}"})
        logging.getLogger("test").info("result: %r", result)
    assert result.data["pw"] == "s3cret"
    assert "s3cret" not in caplog.text


def test_close_closes_every_provider_even_when_one_fails() -> None:
    failing, fine = FailingCloseProvider(), RecordingProvider()
    ConfigProviders({"a": failing, "b": fine}).close()
    assert failing.closed and fine.closed


# -- reverse transform -------------------------------------------------------------------


def test_reverse_transform_puts_placeholders_back(props_file: Path) -> None:
    raw = {
        "name": "src",
        "topic": f"${{file:{props_file}:topic}}",
        "password": f"prefix-${{file:{props_file}:password}}",
        "unused": "${vault:secret:y}",
        "file": "/data/in.txt",
    }
    resolved = _file_providers().transform(raw)
    tasks = [
        {"topic": resolved["topic"], "password": resolved["password"], "file": "/data/in.txt", "task.id": "0"},
        {"topic": resolved["topic"], "task.id": "1"},
    ]
    assert reverse_transform(raw, tasks) == [
        {"topic": raw["topic"], "password": raw["password"], "file": "/data/in.txt", "task.id": "0"},
        {"topic": raw["topic"], "task.id": "1"},
    ]
    assert ConfigProviders.reverse_transform(raw, tasks) == reverse_transform(raw, tasks)
    assert tasks[0]["password"] == "prefix-s3cret"  # inputs untouched


def test_placeholder_detection() -> None:
    assert has_placeholder("${file:/a:b}") and has_placeholder("x ${env:HOME} y") and has_placeholder("${a:b:c}")
    assert not has_placeholder("${nokey}") and not has_placeholder("plain") and not has_placeholder(None)
    assert keys_with_placeholders({"a": "${env:X}", "b": "x", "c": "${p:path:k}"}) == {"a", "c"}
