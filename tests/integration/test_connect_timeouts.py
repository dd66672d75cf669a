"""A server that accepts the connection and never answers fails the attach within connect_timeout_s.

Each test points a source at a real silent TCP server on 127.0.0.1 (tests/silent_server.py,
which closes everything after 30 s so a client that waits longer fails rather than hangs)
and checks that ``Federation.attach`` fails within the timeout plus a margin for a busy
machine, with a message that names the setting and its value. Before connect_timeout_s,
MySQL/MariaDB waited for the statement timeout (600 s; here: until the server closed, 30
s), PostgreSQL for a fixed 10 s and a Flight probe for 60 s.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from sluice import Federation
from sluice.cli import main
from sluice.errors import ConfigError, SourceError
from tests.silent_server import SilentServer
from tests.sources import MYSQL_SERVER

pytestmark = pytest.mark.integration

MARGIN_S = 4.0  # connection set-up and a loaded 2-core machine


@pytest.fixture(scope="module")
def fed(spark):
    return Federation(spark=spark)


@pytest.mark.parametrize("scheme, timeout_s", [("mysql", 1.5), ("mariadb", 1), ("postgresql", 2), ("grpc", 1.5)])
def test_a_silent_server_fails_the_attach_within_connect_timeout_s(
    fed: Federation, scheme: str, timeout_s: float
) -> None:
    path = "" if scheme == "grpc" else "/test"
    with SilentServer(lifetime_s=30) as server:
        started = time.monotonic()
        with pytest.raises(SourceError) as caught:
            fed.attach("silent", f"{scheme}://root:Pw-7Xq@127.0.0.1:{server.port}{path}", connect_timeout_s=timeout_s)
        elapsed = time.monotonic() - started
        assert server.accepted >= 1  # the TCP connection was made: the wait was for an answer
    message = str(caught.value)
    assert elapsed < timeout_s + MARGIN_S, (elapsed, message)
    assert elapsed >= min(timeout_s, 2) * 0.9, elapsed  # it did wait for the server, it did not fail early
    assert message.startswith("source 'silent': ") and f"connect_timeout_s={timeout_s:g}" in message, message
    assert "Pw-7Xq" not in message and "silent" not in fed.sources


def test_the_url_option_and_the_default_bound_the_wait(fed: Federation) -> None:
    with SilentServer(lifetime_s=30) as server:
        started = time.monotonic()
        with pytest.raises(SourceError, match=r"connect_timeout_s=1\b"):
            fed.attach("silent", f"mysql://root@127.0.0.1:{server.port}/test?connect_timeout_s=1")
        assert time.monotonic() - started < 1 + MARGIN_S
        started = time.monotonic()
        with pytest.raises(SourceError, match=r"connect_timeout_s=10\b"):  # the default, named as the setting
            fed.attach("silent", f"mysql://root@127.0.0.1:{server.port}/test")
        assert time.monotonic() - started < 10 + MARGIN_S


def test_the_catalog_option_bounds_the_cli_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SilentServer(lifetime_s=30) as server:
        catalog = tmp_path / "sluice.toml"
        catalog.write_text(f'[sources.my]\nurl = "mysql://root@127.0.0.1:{server.port}/test"\nconnect_timeout_s = 1\n')
        started = time.monotonic()
        assert main(["sql", "SELECT * FROM my.t", "--catalog", str(catalog)]) == 2  # no session given: none is built
        assert time.monotonic() - started < 1 + MARGIN_S
    err = capsys.readouterr().err
    assert err.startswith("error: source 'my': cannot connect to") and "connect_timeout_s=1" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("value", ["0", "-1", "inf", "soon"])
def test_a_bad_connect_timeout_is_a_config_error(fed: Federation, value: str) -> None:
    with pytest.raises(ConfigError, match="connect_timeout_s must be a positive number|must be a number of seconds"):
        fed.attach("bad", f"mysql://root@{MYSQL_SERVER}/test?connect_timeout_s={value}")


def test_libpq_connect_timeout_in_a_postgresql_url_is_refused_as_ambiguous(fed: Federation) -> None:
    with pytest.raises(ConfigError, match="give the connect timeout as connect_timeout_s"):
        fed.attach("pg2", "postgresql://root@127.0.0.1:5432/test?connect_timeout=3")


def test_a_locked_sqlite_file_waits_connect_timeout_s_at_attach(fed: Federation, tmp_path: Path) -> None:
    """Attach waits for a writer's lock for connect_timeout_s, not the 600 s statement timeout."""
    path = tmp_path / "locked.db"
    setup = sqlite3.connect(path)
    setup.execute("CREATE TABLE t (x INTEGER)")
    setup.commit()
    setup.close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        with pytest.raises(SourceError, match=r"is locked by another connection.*after waiting connect_timeout_s=1\)"):
            fed.attach("locked", f"sqlite:///{path}?connect_timeout_s=1")
        assert time.monotonic() - started < 1 + MARGIN_S
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    fed.attach("locked", f"sqlite:///{path}?connect_timeout_s=1")  # the lock is gone: the same URL attaches
