"""What every request carries (the source it is about, the session's settings) and the error answer."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, kw_only=True)
class SourceRequest:
    """The attached source a request is about (``io.sluice.spark.SourceRef``) and the session's settings.

    ``catalog`` is None for a DataFrame reader (``format("sluice")``): its ``options`` name the
    source and the table. The options may hold a password: the planner masks it in every message.
    """

    catalog: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    session_zone: str | None = None
    ansi: bool = True
    #: ``spark.sluice.lakeReader``, ``spark.sluice.lakeVectorisedFraction``, ``spark.sluice.smallReadRows``
    #: as set (text: the planner parses and names a bad value, sluice/lake/vectorised.py)
    lake_reader: str | None = None
    lake_vectorised_fraction: str | None = None
    small_read_rows: str | None = None
    #: ``spark.sluice.metricsDir``: where each read of a scan planned now records rows and bytes
    metrics_dir: str | None = None

    @property
    def zone(self) -> str:
        """The session time zone Spark evaluates timestamps in."""
        return self.session_zone or "UTC"


@dataclass(frozen=True, kw_only=True)
class ErrorBody:
    """Why the planner could not answer: ``kind`` is ``no_such_table``, ``no_such_namespace`` or ``error``."""

    kind: str
    message: str
    namespace: list[str] | None = None
    name: str | None = None


@dataclass(frozen=True, kw_only=True)
class ErrorAnswer:
    """Any method's answer when it failed; the Java side raises it as Spark's own exception."""

    error: ErrorBody
