"""URLs carrying a known secret, through every door a URL comes in by: the secret never shows.

Each URL's password is three marker words joined by reserved characters (tests/unit/
test_urls.py), typed as is or percent-encoded, with IPv6 and named loopback hosts, missing
parts and bad ports, for MySQL/MariaDB (a wrong password: access denied), PostgreSQL (an
unknown role, or the trusted root), a real Flight server that wants a token, and file URLs
that cannot hold a user. A seeded, bounded sample goes through ``Federation.attach``, the
``sluice sql --source`` and ``--catalog`` paths of the command, and the ``sluice serve``
command as a subprocess, plus hand-picked cases (the issue's ``/`` in a MySQL password
first). No marker may appear in an exception's text, repr or traceback (chained ones
included), stdout, stderr or any log record at DEBUG. Before the one parser, the issue's
URL ended in ``ValueError: Port could not be cast to integer value as '<first marker>'``.
"""

from __future__ import annotations

import json
import logging
import random
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from sluice import Federation
from sluice.cli import main
from sluice.serve.server import serve_in_background
from tests.sources import MYSQL_SERVER
from tests.unit.test_urls import leaks, secret_of

pytestmark = pytest.mark.integration

SEED = 20261124
CASES = 40
TOKEN = "flight-token-for-url-secrets"
HAND_PICKED = [
    f"mysql://root:Qz7sEcr/Wv4pAss@{MYSQL_SERVER}/test",  # the issue: '/' in a MySQL password
    f"mysql://root:Qz7sEcr%2FWv4pAss@{MYSQL_SERVER}/test",  # the same, encoded: access denied
    "mariadb://root:Qz7sEcr@Wv4pAss@[::1]:3306/test",
    "mysql://root:Qz7sEcrWv4pAss/test",  # the host forgotten: the "port" is the password
    "mysql://root:Qz7sEcr@127.0.0.1:99999/test",
    "postgresql://nosuchrole:Qz7sEcr:Wv4pAss@127.0.0.1:5432/test",
    "postgresql://root:Qz7sEcr#Wv4pAss@127.0.0.1:5432/test",
    "postgresql://root:Qz7sEcr%23Wv4pAss@127.0.0.1:5432/test",  # encoded: the trusted root attaches
    "sqlite://root:Qz7sEcr@127.0.0.1/x.db",
]


@pytest.fixture(scope="module")
def flight_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    import sqlite3

    path = tmp_path_factory.mktemp("secrets") / "t.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (x INTEGER)")
    connection.close()
    location, stop = serve_in_background({"lite": f"sqlite:///{path}"}, token=TOKEN)
    yield int(location.rsplit(":", 1)[1])
    stop()


def fuzz_urls(flight_port: int) -> list[str]:
    rng = random.Random(SEED)
    urls = []
    for _ in range(CASES):
        secret = secret_of(rng)
        password = quote(secret, safe="") if rng.random() < 0.4 else secret
        scheme, user, port, path = rng.choice(
            [
                ("mysql", "root", ":3306", "/test"),
                ("mariadb", "root", ":3306", "/test"),
                ("postgresql", "nosuchrole", ":5432", "/test"),
                ("postgresql", "root", ":5432", "/test"),
                ("grpc", "reader", f":{flight_port}", ""),
                ("mysql", "root", ":1", "/test"),
                ("sqlite", "root", "", "/x.db"),
            ]
        )
        host = rng.choice(["127.0.0.1", "localhost", "[::1]"])
        port = rng.choice([port, port, "", ":", ":x"])
        urls.append(f"{scheme}://{user}:{password}@{host}{port}{path}")
    return urls


def shown(error: BaseException) -> str:
    """Everything an exception shows: str, repr, and the traceback of it and every chained one."""
    return "\n".join([str(error), repr(error), *traceback.format_exception(error)])


def test_no_secret_through_attach_the_cli_and_the_catalog(
    spark,
    flight_port: int,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    fed = Federation(spark=spark)
    outcomes = {"attached": 0, "refused": 0}
    for index, url in enumerate(HAND_PICKED + fuzz_urls(flight_port)):
        seen = []
        try:
            fed.attach("x", url, connect_timeout_s=5)
            outcomes["attached"] += 1
            seen += [json.dumps(fed.sources), repr(fed._sources["x"])]
            fed.detach("x")
        except Exception as error:  # noqa: BLE001 - any exception at all must be clean
            outcomes["refused"] += 1
            seen.append(shown(error))
        catalog = tmp_path / f"c{index}.toml"
        catalog.write_text(f"[sources.x]\nurl = {json.dumps(url)}\nconnect_timeout_s = 5\n", encoding="utf-8")
        for argv in (
            ["sql", "SELECT * FROM x.nope", "--source", f"x={url}"],
            ["sql", "SELECT * FROM x.nope", "--catalog", str(catalog)],
        ):
            assert main(argv, spark=spark) == 2  # nope is no table anywhere: every path ends in an error
            captured = capsys.readouterr()
            assert captured.err.startswith(("error: ", "usage: ")) and captured.err.count("\nerror") == 0, captured.err
            seen += [captured.out, captured.err]
        seen += [record.getMessage() for record in caplog.records]
        caplog.clear()
        for text in seen:
            assert not leaks(text), (url, text[:3000])
    assert outcomes["attached"] >= 2 and outcomes["refused"] >= 20, outcomes  # both paths were exercised


def test_no_secret_through_the_serve_command(flight_port: int) -> None:
    """``sluice serve`` as a subprocess: each URL fails before listening (a wrong password, a
    refused token, a URL that does not parse), with one masked line on stderr."""
    rng = random.Random(SEED + 1)
    candidates = [
        u for u in fuzz_urls(flight_port) if not u.startswith("postgresql://root")
    ]  # root is trusted: it would serve
    urls = [u for u in HAND_PICKED if not u.startswith("postgresql://root")][:4] + rng.sample(candidates, 4)
    for url in urls:
        done = subprocess.run(
            [sys.executable, "-m", "sluice.cli", "serve", "--no-auth", "--port", "0", "--source", f"x={url}"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2 and done.stdout == "", (url, done.stdout, done.stderr)
        assert done.stderr.count("error: ") == 1, done.stderr
        assert not leaks(done.stdout + done.stderr), (url, done.stderr)
