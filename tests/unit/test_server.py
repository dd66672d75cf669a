"""``sluice server``'s settings and state, without starting Spark (tests/integration/test_spark_connect.py starts it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluice import server
from sluice.catalog import SourceConfig
from sluice.errors import ConfigError

pytestmark = pytest.mark.unit


def test_source_conf_carries_what_the_planner_reads_and_never_a_password() -> None:
    conf = server.source_conf(
        [
            SourceConfig("PG", "postgresql://root@127.0.0.1:5432/test", "PG_PASSWORD", 4, 30.0, 5.0),
            SourceConfig("lite", "sqlite:///demo-data/crm.db"),
        ]
    )
    assert conf == {
        "spark.sql.catalog.pg": "io.sluice.spark.SluiceCatalog",
        "spark.sql.catalog.pg.url": "postgresql://root@127.0.0.1:5432/test",
        "spark.sql.catalog.pg.password.env": "PG_PASSWORD",
        "spark.sql.catalog.pg.statement_timeout_s": "30.0",
        "spark.sql.catalog.pg.partitions": "4",
        "spark.sql.catalog.pg.connect_timeout_s": "5.0",
        "spark.sql.catalog.lite": "io.sluice.spark.SluiceCatalog",
        "spark.sql.catalog.lite.url": "sqlite:///demo-data/crm.db",
        "spark.sql.catalog.lite.statement_timeout_s": "600.0",
    }
    with pytest.raises(ConfigError, match="the URL holds a password"):
        server.source_conf([SourceConfig("pg", "postgresql://root:secret@127.0.0.1:5432/test")])


def test_the_command_is_the_wheels_connect_server_on_loopback() -> None:
    command = server.server_command(15999, {"spark.sql.catalog.x": "io.sluice.spark.SluiceCatalog"})
    assert command[0].endswith("pyspark/bin/spark-submit")
    assert command[1:3] == ["--class", server.SERVER_CLASS]
    assert "spark.connect.grpc.binding.port=15999" in command
    assert "spark.connect.grpc.binding.address=127.0.0.1" in command
    assert "spark.sql.catalog.x=io.sluice.spark.SluiceCatalog" in command
    assert command[-1] == "spark-internal"


def test_status_and_stop_without_a_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(server.DIR_VARIABLE, str(tmp_path))
    state, said = server.status()
    assert state is None and said == f"no Sluice server (no state in {tmp_path})"
    with pytest.raises(server.ServerError, match="no Sluice server to stop"):
        server.stop()
    (tmp_path / "server.json").write_text('{"pid": 999999999, "port": 1, "log": "/nonexistent", "started": 0}')
    state, said = server.status()
    assert state is None and said.startswith("the Sluice server (pid 999999999, port 1) has exited"), said
