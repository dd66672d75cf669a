"""Which JVM exception texts carry a Sluice error, and which class it becomes (the real
round trip through Spark is tests/integration/test_errors_and_explain.py)."""

from __future__ import annotations

from sluice.errors import SluiceError, SourceError, TimeTravelError
from sluice.spark.errors import sluice_error


def test_the_planners_refusal_and_a_workers_sluice_error_keep_their_class() -> None:
    refused = sluice_error("io.sluice.spark.SluiceException: [SLUICE] TimeTravelError: only lake\n\tat io.sluice.X")
    assert isinstance(refused, TimeTravelError) and str(refused) == "only lake"
    worker = (
        "org.apache.spark.SparkException: Job aborted\norg.apache.spark.api.python.PythonException: "
        "Traceback (most recent call last):\n  File \"x.py\", line 1\nsluice.errors.SourceError: source 'pg': "
        "relation gone\n\tat org.apache.spark.X"
    )
    failed = sluice_error(worker)
    assert isinstance(failed, SourceError) and failed.source == "pg" and failed.message == "relation gone"
    plain = sluice_error("[SLUICE] internal error in the Sluice planner (filters): RuntimeError: boom")
    assert type(plain) is SluiceError and "boom" in str(plain)


def test_other_errors_are_left_to_pyspark() -> None:
    assert sluice_error("org.apache.spark.SparkArithmeticException: [DIVIDE_BY_ZERO] Division by zero") is None
    assert sluice_error("Traceback (most recent call last):\nmymodule.QueryError: my own UDF's error") is None
    assert sluice_error("Traceback (most recent call last):\nValueError: bad") is None
