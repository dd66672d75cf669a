"""A session built the README's "Without Federation" way, in a new Python on a terminal: its
catalog's password never reaches py4j's DEBUG log, and Spark's progress bar stays on.

One subprocess (a fresh interpreter, so nothing of the suite's session is reused), its
stderr a pseudo-terminal as a person's would be; both tests read what it left.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from tests.sources import PG_URL

pytestmark = pytest.mark.integration

SECRET = "Byhand-Secret-4711"  # PostgreSQL here trusts root: any password logs in

SCRIPT = textwrap.dedent(
    """
    import json, logging, sys

    logging.basicConfig(filename=sys.argv[1], level=logging.DEBUG)  # py4j logs every command and answer
    from sluice.spark import install
    from sluice.spark.session import build_session

    catalog = "spark.sql.catalog.byhand"
    spark = build_session(conf={catalog: "io.sluice.spark.SluiceCatalog", catalog + ".url": sys.argv[2],
                                catalog + ".password": sys.argv[3]})
    install(spark)
    namespaces = [row[0] for row in spark.sql("SHOW NAMESPACES IN byhand").collect()]
    echoed = spark.conf.get(catalog + ".password")
    print(json.dumps({"progress": spark.conf.get("spark.ui.showConsoleProgress"), "namespaces": namespaces,
                      "echoed": echoed == sys.argv[3]}))
    spark.stop()
    """
)


def _drain(terminal: int) -> None:
    """Read what the subprocess writes to its terminal until the terminal closes."""
    try:
        while os.read(terminal, 65536):
            pass
    except OSError:  # the terminal was closed
        return


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("byhand")
    log = folder / "python.log"
    terminal, attached = pty.openpty()
    drain = threading.Thread(target=_drain, args=(terminal,), daemon=True)  # a full terminal would block the JVM
    drain.start()
    try:
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(log), PG_URL, SECRET],
            stdout=subprocess.PIPE,
            stderr=attached,
            cwd=Path(__file__).parents[2],
            timeout=300,
            text=True,
            check=False,
        )
    finally:
        os.close(attached)
        os.close(terminal)
    assert done.returncode == 0, done.stdout
    return {"answer": json.loads(done.stdout.strip().splitlines()[-1]), "log": log.read_text()}


def test_a_password_set_by_hand_never_reaches_py4js_debug_log(by_hand) -> None:
    answer, log = by_hand["answer"], by_hand["log"]
    assert isinstance(answer["namespaces"], list) and answer["echoed"]  # the catalog answered; the password was set
    assert "Command to send" in log and "Answer received" in log  # the DEBUG log was written
    assert "spark.sql.catalog.byhand.password" in log  # ... and saw the option
    leaked = [line for line in log.splitlines() if SECRET in line]
    assert not leaked, leaked[:5]


def test_sessions_sluice_builds_keep_sparks_progress_bar_on_a_terminal(by_hand) -> None:
    assert by_hand["answer"]["progress"] == "true"
