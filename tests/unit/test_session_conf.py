"""The settings a session needs for Sluice (sluice.spark.session.session_conf): what spark-sql, a
Thrift or Connect server is started with, and what ``sluice.spark.configure`` adds to a builder."""

from __future__ import annotations

import sys

import pytest
from pyspark.sql import SparkSession

import sluice.spark
from sluice.errors import ConfigError
from sluice.spark.jvm import ensure_jar
from sluice.spark.session import PUSHDOWN_CONF, SAFE_CONF, catalog_conf, session_conf


def test_the_settings_name_the_jar_this_python_and_each_catalog() -> None:
    conf = session_conf({"crm": "sqlite:///crm.db"})
    assert conf["spark.driver.extraClassPath"] == conf["spark.executor.extraClassPath"] == str(ensure_jar())
    assert conf["spark.sluice.python"] == sys.executable
    assert conf["spark.sql.catalog.crm"] == "io.sluice.spark.SluiceCatalog"
    assert conf["spark.sql.catalog.crm.url"] == "sqlite:///crm.db"
    assert SAFE_CONF.items() <= conf.items() and PUSHDOWN_CONF.items() <= conf.items()


def test_a_password_is_named_by_an_environment_variable_never_written_in_a_setting() -> None:
    assert catalog_conf("pg", "postgresql://u@h/db", password_env="PG_PASSWORD")[
        "spark.sql.catalog.pg.password.env"
    ] == ("PG_PASSWORD")
    with pytest.raises(ConfigError, match="holds a password") as refused:
        catalog_conf("pg", "postgresql://u:s3cret@h/db")
    assert "s3cret" not in str(refused.value)
    with pytest.raises(ConfigError, match="SQL identifier"):
        catalog_conf("my-db", "sqlite:///x.db")


def test_configure_adds_the_same_settings_to_a_builder() -> None:
    builder = sluice.spark.configure(SparkSession.builder, {"crm": "sqlite:///crm.db"})
    expected = session_conf({"crm": "sqlite:///crm.db"})
    assert {key: builder._options[key] for key in expected} == expected
