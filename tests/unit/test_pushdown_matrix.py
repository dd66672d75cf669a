"""docs/pushdown-matrix.md: current with the dialect code, and saying what the code does."""

from __future__ import annotations

from pathlib import Path

import pytest

from sluice.pushdown.levels import Level
from tools import matrix
from tools.matrix import COLUMNS, PROFILES, SHAPES, Cell, classify, referenced_columns

DOCUMENT = Path(__file__).parent.parent.parent / "docs" / "pushdown-matrix.md"
PG_C, PG_ICU, SQLITE = "PostgreSQL (C collation)", "PostgreSQL (ICU/non-C collation)", "SQLite"


def cell(profile_name: str, predicate: str) -> Cell:
    """The matrix's cell: the predicate must be one of its rows, so checks cover the document."""
    shape = next((s for s in SHAPES if s.predicate == predicate), None)
    assert shape is not None, f"{predicate!r} is not a row of the matrix"
    profile = next(p for p in PROFILES if p.name == profile_name)
    return classify(profile, shape)


def test_committed_matrix_is_current() -> None:
    assert DOCUMENT.exists(), "docs/pushdown-matrix.md is missing: run `make docs`"
    assert DOCUMENT.read_bytes() == matrix.render_markdown().encode("utf-8"), (
        "docs/pushdown-matrix.md is stale: run `make docs` and commit the result"
    )


def test_render_is_deterministic() -> None:
    assert matrix.render_markdown() == matrix.render_markdown()


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
def test_every_profile_has_every_column_pushable(profile: matrix.Profile) -> None:
    assert [c.name for c in profile.table.columns] == list(COLUMNS)
    assert [c.name for c in profile.table.columns if c.unpushable] == []


def test_shapes_use_only_matrix_columns() -> None:
    used = set().union(*(referenced_columns(s) for s in SHAPES))
    assert used <= set(COLUMNS), used - set(COLUMNS)
    assert len({s.predicate for s in SHAPES}) == len(SHAPES), "duplicate row"


def test_every_type_family_has_equality_and_range_rows() -> None:
    starts = {tuple(s.predicate.split()[:2]) for s in SHAPES}
    for name in COLUMNS:
        for op in ("=", "<"):
            assert (name, op) in starts, f"no `{name} {op} ...` row"


def test_postgres_icu_text_range_is_exact_under_collate_c() -> None:
    icu = cell(PG_ICU, "s < 'b'")
    assert icu.level is Level.EXACT
    assert icu.remote_sql is not None and 'COLLATE "C"' in icu.remote_sql
    c = cell(PG_C, "s < 'b'")
    assert c.level is Level.EXACT and c.remote_sql == "\"s\" < 'b'"


def test_sqlite_nan_comparison_is_unsupported() -> None:
    assert cell(SQLITE, "f = double('NaN')").level is Level.UNSUPPORTED
    assert cell(PG_C, "f = double('NaN')").level is Level.EXACT


@pytest.mark.parametrize("predicate", ["upper(s) = 'A'", "lower(s) = 'a'"])
def test_case_mapping_is_unsupported_everywhere(predicate: str) -> None:
    for profile in PROFILES:
        result = cell(profile.name, predicate)
        assert result.level is Level.UNSUPPORTED and result.remote_sql is None, profile.name


def test_sqlite_like_is_glob_and_and_keeps_the_pushable_side() -> None:
    assert cell(SQLITE, "s LIKE 'ab%'").remote_sql == "\"s\" GLOB 'ab*'"
    partial = cell(PG_C, "i = 1 AND upper(s) = 'A'")
    assert partial.level is Level.INEXACT and partial.remote_sql == '"i" = 1'


def test_document_shows_reasons_and_remote_sql() -> None:
    document = matrix.render_markdown()
    assert "America/New_York" in document and "`make docs`" in document
    assert "SQLite cannot store NaN" in document
    assert 'remote: `("s" COLLATE "C") < (\'b\' COLLATE "C")`' in document


def test_code_spans_survive_backticks_and_table_pipes() -> None:
    assert matrix._code("`a` = 1") == "`` `a` = 1 ``"
    assert matrix._code("(i | 1) = 1", in_table=True) == "`(i \\| 1) = 1`"
    assert matrix._text("a <b> * c_") == "a \\<b> \\* c\\_"


def test_check_reports_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "matrix.md"
    assert matrix.main(["--write", str(path)]) == 0
    assert matrix.main(["--check", str(path)]) == 0
    path.write_text(path.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
    assert matrix.main(["--check", str(path)]) == 1
    assert f"{path} is stale: run `make docs`" in capsys.readouterr().err
