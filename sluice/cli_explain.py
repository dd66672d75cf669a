"""``sluice explain`` on a running Spark Connect server: the plan the local path renders, no JVM here.

The plan comes from the server's own driver through the procedure every Sluice catalog has
(:mod:`sluice.remote_plan`), in this command's Connect session, with the sources the command
names attached as ``sluice sql`` attaches them (:func:`sluice.cli_server.attach`). What the
local path adds from the sources themselves is added here from the same sources: the pruning
pyramid of a lake scan is read from the lake (its URL is the command's, else the server's
setting; a lake has no password), and ``--analyze``'s transfer metrics are the files the
server's readers write into a folder of this machine, so ``--analyze`` needs a server on it.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import TYPE_CHECKING

from sluice.errors import ConfigError

if TYPE_CHECKING:
    from sluice.catalog import SourceConfig
    from sluice.lake.pyramid import Pyramid
    from sluice.scan.plan import QueryPlan
    from sluice.sources.base import Source

#: hosts whose server shares this machine's files (``--analyze``'s metrics)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")
CATALOGS = "spark.sql.catalog."


def explain_on_server(
    url: str, configs: list[SourceConfig], query: str, analyze: bool
) -> tuple[QueryPlan, dict[str, dict[str, int]] | None, dict[str, Pyramid]]:
    """``query``'s plan from the server at ``url``, its transfers (``analyze``) and lake pruning."""
    from sluice.cli_server import attach
    from sluice.connect_client import ConnectClient
    from sluice.federation import METRICS_CONF, read_metrics
    from sluice.remote_plan import remote_plan, sluice_catalog
    from sluice.spark.errors import translated_errors

    host = url.removeprefix("sc://").split("/", 1)[0].rsplit(":", 1)[0]
    if analyze and host not in LOCAL_HOSTS:
        raise ConfigError(
            f"--analyze on the server at {url}: its readers write the transfer counts into a folder of the "
            "server's machine, not this one; run it with --local, or on that machine"
        )
    directory = tempfile.mkdtemp(prefix="sluice-metrics-") if analyze else None
    try:
        with ConnectClient(url, {METRICS_CONF: directory} if directory is not None else {}) as client:
            attach(client, configs)
            settings = client.get_prefixed(CATALOGS)
            catalog = sluice_catalog([config.name for config in configs], settings)

            def first_row(sql: str) -> tuple[str, str]:
                row = next(client.sql(sql).rows)
                return str(row[0]), str(row[1])

            with translated_errors():
                plan = remote_plan(first_row, catalog, query, run=analyze)
        metrics = (
            None
            if directory is None
            else {scan.scan_id: read_metrics(f"{directory}/{scan.scan_id}") for scan in plan.scans}
        )
    finally:
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
    return plan, metrics, _pruning(plan, configs, settings)


def _pruning(plan: QueryPlan, configs: list[SourceConfig], settings: dict[str, str]) -> dict[str, Pyramid]:
    """The pyramids of ``plan``'s lake scans, read from their lakes here."""
    from sluice.catalog import SourceConfig, open_sources
    from sluice.explain import scan_pruning

    given = {config.name.lower(): config for config in configs}
    lakes: list[SourceConfig] = []
    for name in sorted({scan.source for scan in plan.scans if scan.reader is not None}):  # lake scans
        config = given.get(name)
        if config is None and (lake_url := settings.get(f"{CATALOGS}{name}.url")) is not None:
            config = SourceConfig(name, lake_url)
        if config is not None:
            lakes.append(config)
    sources: dict[str, Source] = open_sources(lakes) if lakes else {}
    return scan_pruning(plan, sources)
