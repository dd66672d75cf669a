"""Credentials never appear in what Sluice shows."""

from __future__ import annotations

import pytest

from sluice.errors import ConfigError
from sluice.masking import mask_text, mask_url
from sluice.scan.spec import strip_password
from sluice.sources import open_source


def test_mask_url_keeps_user_and_host() -> None:
    assert mask_url("postgresql://alice:s3cr3t!@db:5432/x") == "postgresql://alice:***@db:5432/x"
    assert mask_url("sqlite:///a.db") == "sqlite:///a.db"


def test_mask_text_removes_urls_pairs_and_known_secrets() -> None:
    text = "failed: postgresql://bob:hunter2@h/db password=hunter2 token='abc' and again hunter2"
    masked = mask_text(text, ("hunter2",))
    assert "hunter2" not in masked and "abc" not in masked


def test_strip_password_splits_it_off() -> None:
    assert strip_password("postgresql://u:p%40ss@h:1/d") == ("postgresql://u@h:1/d", "p%40ss")


def test_unknown_scheme_error_is_masked() -> None:
    with pytest.raises(ConfigError) as error:
        open_source("x", "oracle://scott:tiger@h/db")
    assert "tiger" not in str(error.value) and "oracle" in str(error.value)


def test_a_known_secret_is_masked_as_a_token_not_as_letters() -> None:
    """A one-letter password once turned ``does not exist`` into ``does not e***ist``."""
    assert mask_text('role "nosuchuser" does not exist', ("x",)) == 'role "nosuchuser" does not exist'
    assert mask_text("login x failed (x)", ("x",)) == "login *** failed (***)"
    assert mask_text("secret p@ss! and p@ss!word", ("p@ss!",)) == "secret *** and ***word"


def test_py4j_answers_echoing_a_secret_option_are_masked() -> None:
    """A password set as a Spark option comes back in answers py4j logs (conf.get, getAll)."""
    import logging

    from sluice.masking import Py4jSecretFilter

    guard = Py4jSecretFilter()

    def logged(message: str) -> str:
        record = logging.LogRecord("py4j.clientserver", logging.DEBUG, "", 0, message, None, None)
        guard.filter(record)
        return str(record.msg)

    sent = logged("Command to send: c\no1\nset\nsspark.sql.catalog.b.password\nsHunter-77\ne\n")
    assert "Hunter-77" not in sent and "spark.sql.catalog.b.password" in sent
    assert logged("Command to send: c\no2\n_2\ne\n")  # a command naming no secret
    assert logged("Answer received: !ysHunter-77") == "Answer received: !ys***"
    assert logged("Answer received: !ysHunter-776") == "Answer received: !ysHunter-776"
