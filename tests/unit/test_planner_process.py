"""The planner process (sluice/spark/planner_process.py) answers, over its pipes, exactly what the
py4j callback answers in the driver; a malformed line gets an error answer and the process serves
the next; it ends when its stdin closes (the JVM that started it is gone)."""

from __future__ import annotations

import base64
import json
import os
import pickle
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sluice.spark.bridge import CALLBACK
from sluice.spark.datasource import SluiceReaderSource
from sluice.spark.planner_process import SEPARATOR

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def planner() -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen(  # this interpreter running Sluice's module
        [sys.executable, "-m", "sluice.spark.planner_process"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    yield process
    process.kill()
    process.wait()


def ask(process: subprocess.Popen[str], method: str, request: str) -> str:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(method + SEPARATOR + request + "\n")
    process.stdin.flush()
    return process.stdout.readline().rstrip("\n")


def test_the_process_answers_as_the_driver_callback_does(planner: subprocess.Popen[str], tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO items VALUES (1, 'a'), (2, 'b\nc')")
    source = {"catalog": "lite", "options": {"url": f"sqlite:///{path}"}}
    for method, request in [
        ("tables", source),
        ("describe", {**source, "name": "items"}),
        ("describe", {**source, "name": "missing"}),
    ]:
        text = json.dumps(request)
        assert json.loads(ask(planner, method, text)) == json.loads(CALLBACK.call(method, text))


def test_the_reader_source_unpickles_to_the_reader_class(planner: subprocess.Popen[str]) -> None:
    answer = json.loads(ask(planner, "reader_source", "{}"))
    assert pickle.loads(base64.b64decode(answer["data_source"])) is SluiceReaderSource  # our own pickle
    assert answer["python_version"] == f"{sys.version_info.major}.{sys.version_info.minor}"


def test_a_malformed_request_is_an_error_answer_and_the_next_is_served(planner: subprocess.Popen[str]) -> None:
    assert "error" in json.loads(ask(planner, "describe", "{not json"))
    assert "error" in json.loads(ask(planner, "no_such_method", "{}"))
    assert "data_source" in json.loads(ask(planner, "reader_source", "{}"))


def test_the_process_ends_when_its_stdin_closes(planner: subprocess.Popen[str]) -> None:
    assert planner.stdin is not None
    planner.stdin.close()
    assert planner.wait(timeout=30) == 0
