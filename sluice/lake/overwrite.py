"""Which files an overwrite by a filter replaces, or why it is refused.

``INSERT OVERWRITE t PARTITION (p = v)`` in static mode and ``DataFrameWriterV2.overwrite``
delete the rows matching a filter and add the query's rows. Lake writes replace whole
files (no delete files are written), so, as Iceberg's own ``overwriteByRowFilter`` rule
says, the filter must select whole files: each file of the table is either kept (no row
can match, by its partition or its column bounds) or replaced (every row matches). A file
that may hold both is refused, naming it, before anything is written; the statement then
changes nothing. Rewriting such files would silently make a partition-sized statement
rewrite the table, so it is left to the user (overwrite whole partitions instead).

The filter arrives as the lake dialect's conjuncts (DuckDB SQL, see
:mod:`sluice.lake.expressions`): their Iceberg form is a superset of Spark's rows, which
is safe for keeping a file; replacing one needs every conjunct ``exact``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sluice.errors import ConfigError
from sluice.lake.expressions import combined, conjunct_filter
from sluice.lake.wrapped import WrappedTruncates

if TYPE_CHECKING:
    from pyiceberg.expressions import BooleanExpression
    from pyiceberg.manifest import DataFile
    from pyiceberg.table import Table


def files_to_replace(table: Table, where: Sequence[str], current: list[DataFile]) -> list[DataFile]:
    """The ``current`` files of ``table`` whose rows all match ``where`` (AND of conjuncts);
    refused (:class:`ConfigError`) when a file may hold matching and other rows."""
    from pyiceberg.expressions.visitors import _InclusiveMetricsEvaluator, _StrictMetricsEvaluator

    schema = table.metadata.schema()
    shown = " AND ".join(where) or "TRUE"
    name = ".".join(table.name())
    if not where:
        return list(current)
    pruning = combined([conjunct_filter(sql, schema) for sql in where])
    may_match_rows = _InclusiveMetricsEvaluator(schema, pruning.expression).eval
    all_rows_match = _StrictMetricsEvaluator(schema, pruning.expression).eval
    may_match_partition = partition_test(table, pruning.expression, strict=False)
    all_partition_matches = partition_test(table, pruning.expression, strict=True)
    replaced = []
    for data_file in current:
        if not may_match_partition(data_file) or not may_match_rows(data_file):
            continue
        if pruning.exact and (all_partition_matches(data_file) or all_rows_match(data_file)):
            replaced.append(data_file)
            continue
        why = (
            "may hold rows that match it and rows that do not"
            if pruning.exact
            else "cannot be proven to match it whole (Sluice proves whole-file matches for comparisons "
            "and IN lists of non-float columns, without NOT)"
        )
        raise ConfigError(
            f"overwrite of lake table {name} where {shown}: file {data_file.file_path} {why}. Lake overwrites "
            "replace whole files, as Iceberg's do: use a filter on the table's partition columns "
            "(INSERT OVERWRITE ... PARTITION (column = value) for identity partitions), or a dynamic "
            "partition overwrite. Nothing was written; the table is as it was"
        )
    return replaced


def partition_test(table: Table, expression: BooleanExpression, *, strict: bool) -> Callable[[DataFile], bool]:
    """Whether a file's partition record may match ``expression`` (inclusive projection) or
    proves every row matches it (``strict`` projection), per partition spec. A partition
    value a truncate wrapped (:mod:`sluice.lake.wrapped`) may match and proves nothing."""
    from pyiceberg.expressions.visitors import expression_evaluator
    from pyiceberg.schema import Schema

    from sluice.lake import projection

    schema = table.metadata.schema()
    specs = table.specs()
    project = projection.strict if strict else projection.inclusive
    tests: dict[int, Callable[[DataFile], bool]] = {}

    def test(data_file: DataFile) -> bool:
        spec_id = data_file.spec_id
        if spec_id not in tests:
            spec = specs[spec_id]
            partition_schema = Schema(*spec.partition_type(schema).fields)
            evaluate = expression_evaluator(partition_schema, project(schema, spec)(expression), True)
            wrapped = WrappedTruncates(spec, schema).in_record
            tests[spec_id] = lambda f: not strict if wrapped(f.partition) else bool(evaluate(f.partition))
        return tests[spec_id](data_file)

    return test
