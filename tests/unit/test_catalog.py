"""The TOML catalog: parsing, every error case, and that no password ever reaches a message.

No Spark here: attaching is checked against a recording stand-in for Federation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sluice.catalog import SourceConfig, attach_catalog, load_catalog
from sluice.errors import ConfigError

pytestmark = pytest.mark.unit

SECRET = "s3cr3t-Pa55"


class RecordingFederation:
    """Records attach() calls the way Federation.attach receives them."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def attach(
        self,
        name: str,
        url: str,
        password: str | None = None,
        partitions: int | None = None,
        statement_timeout_s: float = 600.0,
        connect_timeout_s: float | None = None,
        writable: bool = False,
    ) -> None:
        self.calls.append(
            {
                "name": name,
                "url": url,
                "password": password,
                "partitions": partitions,
                "statement_timeout_s": statement_timeout_s,
                "connect_timeout_s": connect_timeout_s,
                "writable": writable,
            }
        )


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sluice.toml"
    path.write_text(text, encoding="utf-8")
    return path


def error_for(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_catalog(path)
    message = str(caught.value)
    assert str(path) in message, message  # every message names the file
    assert SECRET not in message
    return message


def test_full_catalog_parses(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
[sources.pg]
url = "postgresql://root@127.0.0.1:5432/test"
password_env = "SLUICE_PG_PASSWORD"
partitions = 4
statement_timeout_s = 30
[sources.lite]
url = "sqlite:///demo-data/crm.db"
""",
    )
    catalog = load_catalog(path)
    assert catalog == {
        "pg": SourceConfig("pg", "postgresql://root@127.0.0.1:5432/test", "SLUICE_PG_PASSWORD", 4, 30.0),
        "lite": SourceConfig("lite", "sqlite:///demo-data/crm.db", None, None, 600.0),
    }
    assert isinstance(catalog["pg"].statement_timeout_s, float)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="file not found") as caught:
        load_catalog(path)
    assert str(path) in str(caught.value)


def test_directory_is_not_a_catalog(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_catalog(tmp_path)


def test_syntax_error_names_the_line(tmp_path: Path) -> None:
    message = error_for(tmp_path, f'[sources.pg]\nurl = "postgresql://u@h/db"\npartitions = = 4\n# {SECRET}\n')
    assert "TOML syntax error" in message and "line 3" in message


def test_unterminated_string_does_not_echo_the_url(tmp_path: Path) -> None:
    message = error_for(tmp_path, f'[sources.pg]\nurl = "postgresql://u:{SECRET}@h/db\n')
    assert "TOML syntax error" in message


def test_unknown_source_key_is_named_without_its_value(tmp_path: Path) -> None:
    message = error_for(tmp_path, f'[sources.pg]\nurl = "postgresql://u@h/db"\npassword = "{SECRET}"\n')
    assert "unknown key(s) password" in message
    assert "password_env" in message  # the hint says where passwords go


def test_unknown_top_level_key(tmp_path: Path) -> None:
    message = error_for(tmp_path, '[source.pg]\nurl = "sqlite:///x.db"\n')
    assert "unknown top-level key(s) source" in message


@pytest.mark.parametrize("text", ["", "sources = {}\n", "sources = 3\n"])
def test_no_sources(tmp_path: Path, text: str) -> None:
    assert "no sources defined" in error_for(tmp_path, text)


def test_missing_url(tmp_path: Path) -> None:
    message = error_for(tmp_path, "[sources.pg]\npartitions = 2\n")
    assert "source 'pg': missing url" in message


@pytest.mark.parametrize("value", ["42", f'"postgres:/u:{SECRET}@h/db"', '"crm.db"'])
def test_url_must_be_a_url_and_is_never_echoed(tmp_path: Path, value: str) -> None:
    message = error_for(tmp_path, f"[sources.pg]\nurl = {value}\n")
    assert "url: a source URL must" in message and "like scheme://" in message and "not shown" in message


def test_source_must_be_a_table(tmp_path: Path) -> None:
    assert "expected a table" in error_for(tmp_path, 'sources.pg = "sqlite:///x.db"\n')


def test_source_name_must_be_an_identifier(tmp_path: Path) -> None:
    assert "SQL identifier" in error_for(tmp_path, '[sources."my-db"]\nurl = "sqlite:///x.db"\n')


def test_names_differing_only_in_case_clash(tmp_path: Path) -> None:
    message = error_for(tmp_path, '[sources.pg]\nurl = "sqlite:///a.db"\n[sources.PG]\nurl = "sqlite:///b.db"\n')
    assert "differ only in case" in message


@pytest.mark.parametrize(
    "key, value",
    [
        ("partitions", "0"),
        ("partitions", '"4"'),
        ("partitions", "true"),
        ("partitions", "2.5"),
        ("statement_timeout_s", "0"),
        ("statement_timeout_s", "-1"),
        ("statement_timeout_s", "nan"),
        ("statement_timeout_s", "inf"),
        ("statement_timeout_s", '"10"'),
        ("statement_timeout_s", "true"),
        ("password_env", "3"),
        ("password_env", '""'),
    ],
)
def test_bad_option_values(tmp_path: Path, key: str, value: str) -> None:
    message = error_for(tmp_path, f'[sources.pg]\nurl = "sqlite:///x.db"\n{key} = {value}\n')
    assert key in message


def test_password_in_url_and_password_env_is_ambiguous_and_masked(tmp_path: Path) -> None:
    message = error_for(tmp_path, f'[sources.pg]\nurl = "postgresql://root:{SECRET}@h/db"\npassword_env = "PGPW"\n')
    assert "both password_env and a password in the url" in message
    assert "postgresql://root:***@h/db" in message


def test_literal_password_in_url_is_allowed_but_masked_in_repr(tmp_path: Path) -> None:
    config = load_catalog(write(tmp_path, f'[sources.pg]\nurl = "postgresql://root:{SECRET}@h/db"\n'))["pg"]
    assert config.url == f"postgresql://root:{SECRET}@h/db"
    assert SECRET not in repr(config) and "root:***@h" in repr(config)


def test_attach_reads_the_password_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_TEST_PW", SECRET)
    path = write(
        tmp_path,
        """
[sources.pg]
url = "postgresql://root@127.0.0.1:5432/test"
password_env = "SLUICE_TEST_PW"
partitions = 3
statement_timeout_s = 12.5
connect_timeout_s = 2.5
writable = true
[sources.lite]
url = "sqlite:///crm.db"
""",
    )
    fed = RecordingFederation()
    attached = attach_catalog(fed, path)  # type: ignore[arg-type]  # a stand-in that records attach() calls
    assert sorted(attached) == ["lite", "pg"]
    assert fed.calls == [
        {
            "name": "pg",
            "url": "postgresql://root@127.0.0.1:5432/test",
            "password": SECRET,
            "partitions": 3,
            "statement_timeout_s": 12.5,
            "connect_timeout_s": 2.5,
            "writable": True,
        },
        {
            "name": "lite",
            "url": "sqlite:///crm.db",
            "password": None,
            "partitions": None,
            "statement_timeout_s": 600.0,
            "connect_timeout_s": None,
            "writable": False,
        },
    ]


def test_writable_must_be_a_boolean(tmp_path: Path) -> None:
    """'writable = "yes"' is refused: a string would read as true and open a source to writes."""
    path = write(tmp_path, '[sources.pg]\nurl = "postgresql://root@127.0.0.1:5432/test"\nwritable = "yes"\n')
    with pytest.raises(ConfigError, match="writable must be true or false"):
        load_catalog(path)


def test_unset_password_variable_is_named_and_nothing_is_attached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLUICE_TEST_UNSET_PW", raising=False)
    path = write(
        tmp_path,
        """
[sources.lite]
url = "sqlite:///crm.db"
[sources.pg]
url = "postgresql://root@127.0.0.1:5432/test"
password_env = "SLUICE_TEST_UNSET_PW"
""",
    )
    fed = RecordingFederation()
    with pytest.raises(ConfigError, match="SLUICE_TEST_UNSET_PW") as caught:
        attach_catalog(fed, path)  # type: ignore[arg-type]  # a stand-in that records attach() calls
    assert "is not set" in str(caught.value) and "'pg'" in str(caught.value)
    assert fed.calls == []  # all passwords are resolved before the first attach


def test_empty_password_variable_counts_as_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLUICE_TEST_EMPTY_PW", "")
    assert SourceConfig("pg", "postgresql://h/db", password_env="SLUICE_TEST_EMPTY_PW").password() == ""
