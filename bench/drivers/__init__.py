"""Raw driver paths, one module per engine: the same pushed SQL into the same Arrow table.

Each module's ``cases(read)`` returns the timed paths for one shape; ``read`` (a
:class:`bench.cases.SluiceRead`) carries the SQL text Sluice pushes, the Arrow schema its
reader returns, and Sluice's own reader, which is the baseline every path is compared to.
"""

from __future__ import annotations

from bench.drivers import duckdb, mysql, postgres, sqlite

#: engine -> module with ``cases(read: SluiceRead) -> list[Case]``
BY_ENGINE = {"postgresql": postgres, "mariadb": mysql, "sqlite": sqlite, "duckdb": duckdb}
