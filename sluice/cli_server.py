"""``sluice sql`` on a running Spark Connect server: which server, and the sources on it.

A command finds its server in this order: ``--server sc://HOST:PORT`` (it must answer), else
the server ``sluice server start`` recorded in ``$SLUICE_SERVER_DIR`` when it runs and answers,
else none (``--local`` says none outright): the command then starts Spark itself, as it
always did. On a server the command starts no JVM and imports neither PySpark's session nor
pandas (:mod:`sluice.connect_client`), so a small query answers in about a second.

Sources named on the command line (``--source``, ``--catalog``) meet the server's catalogs: a
source the server has, with the same settings, is used as it is; any other is attached to this
command's own Connect session with ``spark.conf`` settings (``spark.sql.catalog.NAME``; the
server's other sessions do not see them, and they go when the command ends), once it was
connected to here, as the local path checks every source before it runs. A source with a
password cannot be attached that way: the server's planner reads passwords from its own
environment, never from a setting, so such a source must be one the server was started with.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from sluice.errors import ConfigError

if TYPE_CHECKING:
    from sluice.catalog import SourceConfig
    from sluice.connect_client import ConnectClient

#: sc://host:port, optionally followed by Spark Connect's /;key=value parameters (not used here)
_URL = re.compile(r"^sc://(?P<host>[^:/;]+):(?P<port>\d{1,5})(?:/.*)?$")


def server_option(text: str) -> str:
    """``--server``'s value: ``sc://HOST:PORT``."""
    if _URL.match(text) is None:
        raise argparse.ArgumentTypeError(f"expected sc://HOST:PORT (a Spark Connect server), not {text!r}")
    return text


def server_url(args: argparse.Namespace) -> str | None:
    """The Spark Connect server this command runs on, or None: start Spark here."""
    from sluice import server

    if getattr(args, "local", False):
        return None
    given: str | None = getattr(args, "server", None)
    if given is not None:
        match = _URL.match(given)
        assert match is not None  # server_option checked it
        if not server.answers(int(match["port"]), timeout_s=5.0, host=match["host"]):
            raise ConfigError(f"no Spark Connect server answers at {given} (start one: `sluice server start`)")
        return given
    state = server.read_state()
    if state is None or not server.alive(state.pid) or not server.answers(state.port, timeout_s=1.0):
        return None
    return state.url


def attach(client: ConnectClient, configs: Iterable[SourceConfig]) -> None:
    """Give ``client``'s session every source of ``configs`` the server lacks (module docstring)."""
    from sluice.server import source_conf
    from sluice.urls import url_secrets

    configs = list(configs)
    if not configs:
        return
    wanted: dict[str, str] = {}
    attaching: list[SourceConfig] = []
    for config in configs:
        name = config.name.lower()
        secret = config.password_env is not None or bool(url_secrets(config.url))
        conf = _bare_conf(config) if secret else source_conf([config])
        found = client.get_all(list(conf))
        if found == conf:
            continue
        if secret:
            raise ConfigError(
                f"source {name!r} needs a password and the server at {client.url} "
                + (
                    "has no such catalog"
                    if found.get(f"spark.sql.catalog.{name}") is None
                    else "has it with other settings"
                )
                + ": the server's planner reads passwords from its own environment only. Start the server with it "
                "(`sluice server start --source/--catalog`, the variable set), or run without the server (--local)"
            )
        wanted.update(conf)
        attaching.append(config)
    if attaching:
        from sluice.catalog import open_sources

        open_sources(attaching)  # as the local path does: a bad source fails now, in one line
        client.set(wanted)


def _bare_conf(config: SourceConfig) -> dict[str, str]:
    """The settings the server holds for a source with a password (its URL without it)."""
    from dataclasses import replace

    from sluice.scan.spec import strip_password
    from sluice.server import source_conf

    return source_conf([replace(config, url=strip_password(config.url)[0])])
