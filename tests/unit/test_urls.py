"""The one URL parser (sluice/urls.py): hand-picked cases and a seeded fuzz, no server.

Every URL carries a secret made of marker words joined by reserved characters, so a message
that quotes even part of it (``urlsplit`` quoted the text before a '/' as "the port") is
caught, not only one that quotes it whole.
"""

from __future__ import annotations

import random
import re
from urllib.parse import quote

import pytest

from sluice.errors import ConfigError
from sluice.masking import mask_url
from sluice.scan.spec import strip_password
from sluice.sources import open_source
from sluice.urls import parse_url, url_secrets

pytestmark = pytest.mark.unit

MARKERS = ("Qz7sEcr", "Wv4pAss", "Kj2hIdn")
RESERVED = "/?#@:[]%!$&'()*+,;= \"\\~`^{}|<>"
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def secret_of(rng: random.Random) -> str:
    """The three markers joined by 0-2 reserved characters each, sometimes led or ended by one."""

    def joint() -> str:
        return "".join(rng.choice(RESERVED) for _ in range(rng.randint(0, 2)))

    return joint() + joint().join(MARKERS) + joint()


def leaks(text: str) -> list[str]:
    return [marker for marker in MARKERS if marker in text]


@pytest.mark.parametrize(
    "url, expected",
    [
        ("mysql://root:s3c/ret@127.0.0.1:3306/test", "an '@' follows the host"),
        ("mysql://root:s3c?ret@127.0.0.1:3306/test", "an '@' follows the host"),
        ("mysql://root:s3c@h?ret@127.0.0.1:3306/test", "an '@' follows the host"),  # would log in to host 'h'
        ("mysql://root:pw@h,x:3306/test", "characters a host name cannot"),
        ("mysql://root:s3cret/test", "the port is not a number"),  # forgot @host: the "port" is the password
        ("mysql://root:s3c#ret@127.0.0.1:3306/test", "holds a '#'"),
        ("mysql://root:1234/ret@127.0.0.1/test", "an '@' follows the host"),  # urlsplit: host 'root', port 1234
        ("postgresql://u:pw@[::1/db", "malformed IPv6 host"),
        ("postgresql://u:pw@h:99999/db", "the port is not a number from 1 to 65535"),
        ("postgresql://u:pw@h:0/db", "the port is not a number from 1 to 65535"),
        ("postgresql://u:pw@h o st/db", "characters a host name cannot"),
        ("postgresql:/u:pw@h/db", "must look like scheme://"),
        ("u:pw@h/db", "must look like scheme://"),
    ],
)
def test_urls_that_do_not_parse_are_config_errors_that_never_quote_the_password(url: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(expected)) as caught:
        parse_url(url)
    message = str(caught.value)
    assert not any(piece in message for piece in ("s3c", "ret@", "1234/ret", ":pw@")), message


def test_the_mysql_url_of_the_issue_fails_naming_the_source_with_the_password_masked() -> None:
    with pytest.raises(ConfigError) as caught:
        open_source("my", "mysql://root:s3c/ret@127.0.0.1:3306/test")
    message = str(caught.value)
    assert message.startswith("source 'my': cannot read the URL mysql://root:***@127.0.0.1:3306/test")
    assert "s3c" not in message and "ret" not in message.replace("percent", "")


@pytest.mark.parametrize(
    "url, user, password, host, port, database",
    [
        ("mysql://root:p@ss:w[0]rd@127.0.0.1:3306/test", "root", "p@ss:w[0]rd", "127.0.0.1", 3306, "test"),
        ("mysql://root:s3c%2Fret%3F%23@127.0.0.1/test", "root", "s3c/ret?#", "127.0.0.1", None, "test"),
        ("postgresql://u%40corp:pw@[::1]:5432/db", "u@corp", "pw", "::1", 5432, "db"),
        ("postgresql://:pw@localhost/db", "", "pw", "localhost", None, "db"),
        ("postgresql://u@h", "u", None, "h", None, None),
        ("grpc://127.0.0.1:8815", None, None, "127.0.0.1", 8815, None),
        ("sqlite:///rel/a@b.db", None, None, None, None, "rel/a@b.db"),
        ("sqlite:////tmp/my data/x.db", None, None, None, None, "/tmp/my data/x.db"),  # a path with a space
        ("sqlite:////abs/x.db?connect_timeout_s=3", None, None, None, None, "/abs/x.db"),
    ],
)
def test_urls_parse_into_their_parts(
    url: str, user: str | None, password: str | None, host: str | None, port: int | None, database: str | None
) -> None:
    parsed = parse_url(url)
    assert (parsed.username, parsed.password, parsed.host, parsed.port, parsed.database) == (
        user,
        password,
        host,
        port,
        database,
    )


def test_masking_and_stripping_keep_everything_but_the_password() -> None:
    url = "postgresql://alice:s3%2Fcr@[::1]:5432/x?sslmode=disable"
    assert mask_url(url) == "postgresql://alice:***@[::1]:5432/x?sslmode=disable"
    assert strip_password(url) == ("postgresql://alice@[::1]:5432/x?sslmode=disable", "s3%2Fcr")
    assert mask_url("mysql://root:s3c/ret@h/db") == "mysql://root:***@h/db"  # does not parse: masked anyway
    assert mask_url("mysql://root:s3cret/db") == "mysql://root:***/db"  # the "port" may be a password
    assert set(url_secrets("mysql://root:s3c/ret@h/db")) == {"s3c/ret"}


def test_seeded_fuzz_no_secret_in_what_parsing_masking_or_opening_shows() -> None:
    """2,000 URLs (seed 15): every reserved character in the password, typed as is or
    percent-encoded, IPv6 and named hosts, missing user, port, database. Each either parses
    with the password intact and the host as written, or fails with a ConfigError; no marker
    is ever in the error, the masked URL, the stripped URL, or a source's repr."""
    rng = random.Random(15)
    parsed_count = refused = 0
    for _ in range(2000):
        secret = secret_of(rng)
        encoded = rng.random() < 0.4
        password = quote(secret, safe="") if encoded else secret
        host = rng.choice(LOOPBACK)
        port = rng.choice(["", ":3306", ":5432", ":1", ":", ":x"])
        user = rng.choice(["root", "", "ro%40ot"])
        path = rng.choice(["/test", "", "/", "/a/b"])
        query = rng.choice(["", "?connect_timeout_s=2", "?sslmode=disable"])
        scheme = rng.choice(["mysql", "postgresql", "grpc", "mariadb"])
        url = f"{scheme}://{user}:{password}@{host}{port}{path}{query}"
        shown = [mask_url(url)]
        try:
            parsed = parse_url(url)
        except ConfigError as error:
            refused += 1
            shown.append(str(error))
        else:
            parsed_count += 1
            assert parsed.password == secret, url
            assert parsed.url_host == host  # the login never goes to a host made of password text
            shown += [parsed.masked(), strip_password(url)[0], repr(parsed)]
            try:
                shown.append(repr(open_source("x", url)))
            except ConfigError as error:
                shown.append(str(error))
        for text in shown:
            assert not leaks(text), (url, text)
    assert parsed_count > 500 and refused > 500  # both paths were exercised


def test_the_command_line_masks_argparse_messages(capsys: pytest.CaptureFixture[str]) -> None:
    from sluice.cli import main

    secret = "Qz7sEcr/Wv4pAss Kj2hIdn"
    assert main(["sql", "--sorce", f"pg=mysql://root:{secret}@127.0.0.1/test", "SELECT 1", "extra"]) == 2
    assert main(["sql", "--source", f"pg=mysql://root:{secret}@127.0.0.1:x/test", "SELECT 1"]) == 2
    captured = capsys.readouterr()
    assert "unrecognized arguments" in captured.err and "must be percent-encoded" in captured.err
    assert not leaks(captured.out + captured.err), captured.err
