"""The built-in config providers against real files, directories and environment variables."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sluice.api import ConfigData, ConfigError, ConnectError
from sluice.providers import DirectoryConfigProvider, EnvVarConfigProvider, FileConfigProvider
from sluice.providers import directory as directory_module


def _file_provider(**params: str) -> FileConfigProvider:
    provider = FileConfigProvider()
    provider.configure(params)
    return provider


def _directory_provider(**params: str) -> DirectoryConfigProvider:
    provider = DirectoryConfigProvider()
    provider.configure(params)
    return provider


@pytest.fixture
def props_file(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.properties"
    path.write_text(
        "# a comment\ndb.user=alice\ndb.password = s3cret\nunicode=caf\\u00e9 ü\ncontinued=one \\\n    two\nempty=\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def secrets_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "secrets"
    directory.mkdir()
    (directory / "db-password").write_text("s3cret\n", encoding="utf-8")  # trailing newline kept, as in Kafka
    (directory / "api-key").write_text("k-123", encoding="utf-8")
    (directory / "nested").mkdir()
    (directory / "nested" / "inner").write_text("hidden", encoding="utf-8")
    return directory


# -- FileConfigProvider ------------------------------------------------------------------


def test_file_provider_reads_requested_keys(props_file: Path) -> None:
    data = _file_provider().get(str(props_file), {"db.user", "db.password"})
    assert data == ConfigData({"db.user": "alice", "db.password": "s3cret"})
    assert data.ttl is None


def test_file_provider_reads_all_keys_without_a_key_set(props_file: Path) -> None:
    assert _file_provider().get(str(props_file)).data == {
        "db.user": "alice",
        "db.password": "s3cret",
        "unicode": "café ü",
        "continued": "one two",
        "empty": "",
    }


def test_file_provider_leaves_out_missing_keys(props_file: Path) -> None:
    assert _file_provider().get(str(props_file), {"db.user", "no.such.key"}).data == {"db.user": "alice"}


def test_file_provider_empty_path_gives_nothing() -> None:
    assert _file_provider().get("", {"db.user"}).data == {}


def test_file_provider_missing_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.properties"
    with pytest.raises(ConfigError, match=f"^Could not read properties from file {missing}$"):
        _file_provider().get(str(missing), {"k"})


def test_file_provider_directory_path_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Could not read properties from file"):
        _file_provider().get(str(tmp_path), {"k"})


def test_file_provider_invalid_utf8_is_a_config_error_without_the_bytes(tmp_path: Path, caplog) -> None:
    path = tmp_path / "latin1.properties"
    path.write_bytes("password=s\xe9cret\n".encode("latin-1"))
    with caplog.at_level(logging.DEBUG), pytest.raises(ConfigError, match="Could not read properties from file"):
        _file_provider().get(str(path), {"password"})
    assert "cret" not in caplog.text


def test_file_provider_must_be_configured(props_file: Path) -> None:
    with pytest.raises(ConnectError, match="not been configured"):
        FileConfigProvider().get(str(props_file), {"db.user"})


def test_file_provider_allowed_paths(tmp_path: Path, props_file: Path, caplog) -> None:
    other = tmp_path / "other"
    other.mkdir()
    outside = other / "x.properties"
    outside.write_text("k=v\n", encoding="utf-8")
    allowed_dir = tmp_path / "allowed"
    allowed_dir.mkdir()
    inside = allowed_dir / "in.properties"
    inside.write_text("k=inside\n", encoding="utf-8")

    provider = _file_provider(**{"allowed.paths": f"{allowed_dir}, {props_file}"})
    assert provider.get(str(inside), {"k"}).data == {"k": "inside"}
    assert provider.get(str(props_file), {"db.user"}).data == {"db.user": "alice"}
    with caplog.at_level(logging.WARNING):
        assert provider.get(str(outside), {"k"}).data == {}
        # ".." is normalised away before the check, so it cannot climb out
        assert provider.get(f"{allowed_dir}/../other/x.properties", {"k"}).data == {}
        # a sibling whose name merely starts with the allowed one is outside
        sibling = tmp_path / "allowed-not"
        sibling.mkdir()
        (sibling / "s.properties").write_text("k=v\n", encoding="utf-8")
        assert provider.get(str(sibling / "s.properties"), {"k"}).data == {}
    assert "is not allowed to be accessed" in caplog.text


@pytest.mark.parametrize("provider_class", [FileConfigProvider, DirectoryConfigProvider])
def test_allowed_paths_must_be_absolute_and_exist(provider_class: type, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Path relative/dir is not absolute"):
        provider_class().configure({"allowed.paths": "relative/dir"})
    with pytest.raises(ConfigError, match=f"Path {tmp_path / 'missing'} does not exist"):
        provider_class().configure({"allowed.paths": str(tmp_path / "missing")})
    provider_class().configure({"allowed.paths": ""})  # empty: everything allowed


# -- DirectoryConfigProvider -------------------------------------------------------------


def test_directory_provider_reads_files_as_keys(secrets_dir: Path) -> None:
    provider = _directory_provider()
    assert provider.get(str(secrets_dir), {"db-password"}).data == {"db-password": "s3cret\n"}
    # without keys: every regular file; the subdirectory is ignored
    assert provider.get(str(secrets_dir)).data == {"db-password": "s3cret\n", "api-key": "k-123"}


def test_directory_provider_leaves_out_missing_keys_and_subdirectories(secrets_dir: Path) -> None:
    assert _directory_provider().get(str(secrets_dir), {"api-key", "missing", "nested"}).data == {"api-key": "k-123"}


def test_directory_provider_keys_cannot_reach_outside_the_directory(secrets_dir: Path) -> None:
    (secrets_dir.parent / "outside").write_text("no", encoding="utf-8")
    assert _directory_provider().get(str(secrets_dir), {"../outside", "nested/inner"}).data == {}


def test_directory_provider_follows_symlinked_files_like_secret_mounts(tmp_path: Path) -> None:
    # The Kubernetes layout: key -> ..data/key, ..data -> a timestamped directory.
    mount = tmp_path / "mount"
    version = mount / "..2024_01_01"
    version.mkdir(parents=True)
    (version / "token").write_text("t0k3n", encoding="utf-8")
    (mount / "..data").symlink_to(version.name)
    (mount / "token").symlink_to("..data/token")
    assert _directory_provider().get(str(mount)).data == {"token": "t0k3n"}


def test_directory_provider_missing_or_non_directory_path_gives_nothing(tmp_path: Path, caplog) -> None:
    file_path = tmp_path / "plain"
    file_path.write_text("x", encoding="utf-8")
    provider = _directory_provider()
    with caplog.at_level(logging.WARNING):
        assert provider.get(str(tmp_path / "missing"), {"k"}).data == {}
        assert provider.get(str(file_path), {"k"}).data == {}
    assert "is not a directory" in caplog.text
    assert provider.get("", {"k"}).data == {}


def test_directory_provider_decodes_invalid_utf8_with_replacement(tmp_path: Path) -> None:
    (tmp_path / "k").write_bytes(b"ok\xff")
    assert _directory_provider().get(str(tmp_path), {"k"}).data == {"k": "ok\ufffd"}


def test_directory_provider_unreadable_file_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "k"
    secret.write_text("v", encoding="utf-8")

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # chmod 0 does not stop root, so the read itself is made to fail
    monkeypatch.setattr(directory_module, "open", refuse, raising=False)
    with pytest.raises(ConfigError, match=f"^Could not read file {secret} for property k$"):
        _directory_provider().get(str(tmp_path), {"k"})


def test_directory_provider_allowed_paths(tmp_path: Path, secrets_dir: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "k").write_text("v", encoding="utf-8")
    provider = _directory_provider(**{"allowed.paths": str(secrets_dir)})
    assert provider.get(str(secrets_dir), {"api-key"}).data == {"api-key": "k-123"}
    assert provider.get(str(elsewhere), {"k"}).data == {}
    assert provider.get(f"{secrets_dir}/../elsewhere", {"k"}).data == {}


def test_directory_provider_must_be_configured(secrets_dir: Path) -> None:
    with pytest.raises(ConnectError, match="not been configured"):
        DirectoryConfigProvider().get(str(secrets_dir), {"api-key"})


# -- EnvVarConfigProvider ----------------------------------------------------------------


def test_env_var_provider_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_TEST_DB_PASSWORD", "s3cret")
    provider = EnvVarConfigProvider()
    provider.configure({})
    assert provider.get("", {"SLUICE_TEST_DB_PASSWORD", "SLUICE_TEST_MISSING"}).data == {
        "SLUICE_TEST_DB_PASSWORD": "s3cret"
    }
    assert provider.get("").data["SLUICE_TEST_DB_PASSWORD"] == "s3cret"


def test_env_var_provider_rejects_a_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_TEST_X", "x")
    provider = EnvVarConfigProvider()
    provider.configure({})
    with pytest.raises(ConfigError, match="^Path is not supported for EnvVarConfigProvider, invalid value '/etc'$"):
        provider.get("/etc", {"SLUICE_TEST_X"})


def test_env_var_provider_allowlist_pattern_matches_whole_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_TEST_ALLOWED_A", "a")
    monkeypatch.setenv("SLUICE_TEST_ALLOWED_B", "b")
    monkeypatch.setenv("SLUICE_TEST_DENIED", "d")
    monkeypatch.setenv("X_SLUICE_TEST_ALLOWED_C", "c")
    provider = EnvVarConfigProvider()
    provider.configure({"allowlist.pattern": "SLUICE_TEST_ALLOWED_.*"})
    wanted = {"SLUICE_TEST_ALLOWED_A", "SLUICE_TEST_ALLOWED_B", "SLUICE_TEST_DENIED", "X_SLUICE_TEST_ALLOWED_C"}
    assert provider.get("", wanted).data == {"SLUICE_TEST_ALLOWED_A": "a", "SLUICE_TEST_ALLOWED_B": "b"}
    assert set(provider.get("").data) == {"SLUICE_TEST_ALLOWED_A", "SLUICE_TEST_ALLOWED_B"}


def test_env_var_provider_with_given_environment() -> None:
    provider = EnvVarConfigProvider({"A": "1", "B": "2"})
    provider.configure({"allowlist.pattern": "A"})
    assert provider.get("").data == {"A": "1"}


def test_env_var_provider_invalid_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Invalid value \\( for configuration allowlist.pattern"):
        EnvVarConfigProvider({}).configure({"allowlist.pattern": "("})


def test_env_var_provider_must_be_configured() -> None:
    with pytest.raises(ConnectError, match="not been configured"):
        EnvVarConfigProvider({"A": "1"}).get("", {"A"})


def test_config_data_repr_leaves_values_out() -> None:
    assert "s3cret" not in repr(ConfigData({"password": "s3cret"}))
