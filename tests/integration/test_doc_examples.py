"""Every code block of README.md and docs/*.md runs as written (issue 15: "the README must run").

A small demo world is built once in a temporary folder, laid out as ``make demo`` lays
it out (``demo-data/crm.db``, ``sales.db``, ``space.db`` and the lake
``demo-data/lake/catalog.db`` with ``telemetry.readings``), and the examples run with that
folder as the working directory, so ``sqlite:///demo-data/crm.db`` means what it means
after ``make demo``.

- ```` ```python ```` blocks run in order, one namespace per file: a later block uses the
  names an earlier one made, as a reader following along does. ``Federation()`` in an
  example reuses the shared test session (``build_session`` ends in ``getOrCreate``);
  whatever the examples change in it (attached catalogs, the time zone) is put back
  before the next file and at the end.
- ```` ```sh ```` blocks: each ``sluice ...`` command runs as ``.venv/bin/sluice`` (the
  repository's virtualenv, linked into the folder) in a shell, with a timeout; ``export
  NAME=value`` lines set the environment of the commands after them. Any other command
  (``make``, a campaign, a server that never returns) must be marked not run. Every
  ``sluice`` command starts a Spark of its own (~10-30 s), so the shell blocks run one
  after another in a background thread while the Python blocks run; a Python block waits
  for the shell blocks above it in its file. A shell block therefore must not rely on
  what a Python block wrote.
- Spark's JVM keeps the working directory pytest started in, so a file path Spark opens
  itself (a DataFrame writer's or reader's, ``ingest(spark, url, path)``'s) must be
  absolute in an example; Sluice's source URLs are resolved in Python.
- Markers, an HTML comment on the line before a block:
  ``<!-- not run: reason -->`` skips it; ``<!-- needs: postgres, mariadb -->`` names the
  servers it needs (this test runs it when the integration suite has them, see
  ``SLUICE_TEST_SOURCES``; anything else it names is not available here, so the block is
  skipped); ``<!-- file: NAME -->`` writes the block (any language) to NAME in the
  folder before anything runs, for the blocks that use it.

A failure names the file, the block's index among the file's code blocks and its line;
tracebacks of Python blocks point at the lines of the Markdown file.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest
from rich.console import Console

from tests.sources import selected

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
VENV = ROOT / ".venv"
#: the demo world's size here (make demo: 1.2M orders, 10M readings)
ORDERS = 20_000
READINGS = 2_000
#: seconds one ``sluice`` command may take (a Spark start on a loaded 2-core machine is ~30 s)
COMMAND_TIMEOUT_S = 300
#: servers a ``needs:`` marker may name -> the integration suite's source that provides it
SERVERS = {"postgres": "pg", "postgresql": "pg", "mariadb": "my", "mysql": "my"}
RUN_LANGUAGES = {"python": "python", "sh": "sh", "bash": "sh", "shell": "sh"}

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)[^`]*$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<kind>needs|not run|file)\s*:\s*(?P<value>.*?)\s*-->\s*$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown file."""

    path: Path
    index: int  # 1-based, among all the file's code blocks
    line: int  # line of the opening fence (1-based)
    language: str  # "python", "sh", or the info string as written
    code: str
    needs: tuple[str, ...] = ()
    not_run: str | None = None
    file: str | None = None
    before: str = ""  # the line before the opening fence

    @property
    def name(self) -> str:
        return self.path.relative_to(ROOT).as_posix()

    @property
    def id(self) -> str:
        return f"{self.name}-{self.index}-{self.language or 'plain'}-L{self.line}"

    @property
    def where(self) -> str:
        return f"{self.name} block {self.index} ({self.language}, line {self.line})"


def parse_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of ``path``, each with the marker on the line before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    number = 0
    while number < len(lines):
        opening = _FENCE.match(lines[number])
        if not opening:
            number += 1
            continue
        fence = opening["fence"]
        end = number + 1
        while end < len(lines) and not re.match(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}\s*$", lines[end]):
            end += 1
        marker = _MARKER.match(lines[number - 1]) if number else None
        kind, value = (marker["kind"], marker["value"]) if marker else (None, "")
        info = opening["info"].lower()
        blocks.append(
            Block(
                path,
                len(blocks) + 1,
                number + 1,
                RUN_LANGUAGES.get(info, info),
                "\n".join(lines[number + 1 : end]) + "\n",
                needs=tuple(part.strip().lower() for part in value.split(",") if part.strip())
                if kind == "needs"
                else (),
                not_run=(value or "no reason given") if kind == "not run" else None,
                file=value if kind == "file" else None,
                before=lines[number - 1] if number else "",
            )
        )
        number = end + 1
    return blocks


BLOCKS = [block for path in DOCS for block in parse_blocks(path)]
PYTHON = [block for block in BLOCKS if block.language == "python"]
SHELL = [block for block in BLOCKS if block.language == "sh"]
FILES = [block for block in BLOCKS if block.file]


def skip_reason(block: Block) -> str | None:
    """Why ``block`` does not run here, or None."""
    if block.not_run:
        return f"{block.where} is marked not run: {block.not_run}"
    available = {source.name for source in selected()}
    for server in block.needs:
        if server not in SERVERS:
            return f"{block.where} needs {server}, which this test does not provide"
        if SERVERS[server] not in available:
            return f"{block.where} needs {server}, left out by SLUICE_TEST_SOURCES"
    return None


# ---------------------------------------------------------------- shell blocks
def shell_commands(block: Block) -> Iterator[tuple[int, str]]:
    """(line, command) for each command of a shell block: continuation lines and quoted
    newlines joined; blank and comment lines left out."""
    pending: list[str] = []
    start = 0
    for offset, text in enumerate(block.code.splitlines(), block.line + 1):
        if not pending:
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            start = offset
        pending.append(text)
        command = "\n".join(pending)
        if command.endswith("\\"):
            continue
        try:
            shlex.split(command, comments=True)
        except ValueError:  # an open quote: the command goes on
            continue
        yield start, command
        pending = []
    if pending:
        yield start, "\n".join(pending)


def command_words(command: str) -> list[str]:
    """The words of a command after leading ``NAME=value`` assignments and ``time``."""
    words = shlex.split(command.replace("\\\n", " "), comments=True)
    while words and (_ASSIGNMENT.match(words[0]) or words[0] == "time"):
        words.pop(0)
    return words


def run_shell_block(block: Block, cwd: Path, transcript: list[str]) -> None:
    """Run the block's ``sluice`` commands one by one, each with its output into ``transcript``.
    Raises AssertionError on the first failure."""
    env = {**os.environ, "PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    for line, command in shell_commands(block):
        words = command_words(command)
        if words[:1] == ["export"]:
            for assignment in words[1:]:
                name, _, value = assignment.partition("=")
                env[name] = value
            continue
        if not words or words[0] not in ("sluice", ".venv/bin/sluice"):
            raise AssertionError(
                f"{block.where}, line {line}: `{command.splitlines()[0]}` is not a sluice command, which this test "
                "does not run: mark the block with <!-- not run: reason --> on the line before it"
            )
        started = time.monotonic()
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = process.communicate(timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the command's own process group: bash, sluice and its JVM
            output, _ = process.communicate()
            raise AssertionError(
                f"{block.where}, line {line}: no answer after {COMMAND_TIMEOUT_S} s: {command}\n{output[-4000:]}"
            ) from None
        transcript.append(
            f"$ {command}  # line {line}: exit {process.returncode} in {time.monotonic() - started:.0f} s\n"
            f"{output[-2000:]}"
        )
        if process.returncode != 0:
            raise AssertionError(
                f"{block.where}, line {line}: exit status {process.returncode}: {command}\n{output[-4000:]}"
            )


class ShellRunner:
    """Runs shell blocks one after another in a background thread, in document order."""

    def __init__(self, blocks: list[Block], cwd: Path) -> None:
        #: block -> (what failed or None, each command with its output)
        self.results: dict[Block, Future[tuple[str | None, list[str]]]] = {block: Future() for block in blocks}
        self._cwd = cwd
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="doc-shell-blocks", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for block, result in self.results.items():
            if self._stopping.is_set() or not result.set_running_or_notify_cancel():
                continue
            transcript: list[str] = []
            try:
                run_shell_block(block, self._cwd, transcript)
            except AssertionError as failure:  # handed to the test that waits for it
                result.set_result((str(failure), transcript))
            except BaseException as error:  # noqa: BLE001 - a bug here must not hang the tests that wait
                result.set_result((f"{block.where}: {''.join(traceback.format_exception(error))}", transcript))
            else:
                result.set_result((None, transcript))

    def wait(self, block: Block) -> tuple[str | None, list[str]]:
        """(None when the block ran, else what failed; the commands run and their output)."""
        return self.results[block].result()

    def stop(self) -> None:
        self._stopping.set()
        for result in self.results.values():
            result.cancel()
        self._thread.join()


# ---------------------------------------------------------------- python blocks
@dataclass
class FileRun:
    """The namespace of one file's Python blocks and how far they have run."""

    path: Path
    namespace: dict[str, Any] = field(default_factory=dict)
    done: int = 0  # blocks (by index) run so far
    failed: str | None = None


class DocWorld:
    """The demo folder, the shared session's settings to restore, and each file's progress."""

    def __init__(self, spark: Any, folder: Path, shell: ShellRunner | None) -> None:
        self.spark = spark
        self.folder = folder
        self.shell = shell
        self.baseline = dict(spark.conf.getAll)
        self.current: FileRun | None = None

    def restore_session(self) -> None:
        """Put back the session settings the examples changed (attached catalogs, time zone, ...)."""
        from sluice.spark.bridge import PLANNER

        now = dict(self.spark.conf.getAll)
        changed = {key for key in now.keys() | self.baseline.keys() if now.get(key) != self.baseline.get(key)}
        for catalog in {key.split(".")[3] for key in changed if key.startswith("spark.sql.catalog.")}:
            PLANNER.forget(catalog)  # the sources an example attached (others reopen from their options)
        for key in now.keys() - self.baseline.keys():
            self.spark.conf.unset(key)
        for key, value in self.baseline.items():
            if now.get(key) != value:
                try:
                    self.spark.conf.set(key, value)
                except Exception:  # noqa: BLE001 - a static setting no example can have changed
                    pass
        # Spark keeps each catalog it loaded with the options it was loaded with (SluiceCatalog
        # reads the session's over them): drop them, so none keeps an example's URL or password
        self.spark._jsparkSession.sessionState().catalogManager().reset()

    def run_python(self, block: Block) -> None:
        """Run ``block``, after the file's earlier Python blocks (once) and shell blocks."""
        if self.current is None or self.current.path != block.path:
            self.restore_session()  # each file starts from the session as the suite left it
            self.current = FileRun(block.path, {"__name__": "__doc_example__"})
        run = self.current
        for earlier in PYTHON:
            if earlier.path != block.path or earlier.index <= run.done or earlier.index > block.index:
                continue
            if run.failed:
                pytest.fail(
                    f"{run.failed} failed before {block.where}, which would run in its namespace", pytrace=False
                )
            self._wait_for_shell(earlier)
            if earlier is not block and skip_reason(earlier):
                run.done = earlier.index
                continue
            run.done = earlier.index
            failure = _execute(earlier, run.namespace)
            if failure:
                run.failed = earlier.where
                pytest.fail(f"{earlier.where} failed:\n{failure}", pytrace=False)
            self._check_session(earlier, run.namespace)

    def _wait_for_shell(self, block: Block) -> None:
        if self.shell is None:
            return
        for earlier in SHELL:
            if earlier.path == block.path and earlier.index < block.index and earlier in self.shell.results:
                self.shell.wait(earlier)  # a failure is its own test's to report

    def _check_session(self, block: Block, namespace: dict[str, Any]) -> None:
        from sluice import Federation

        for name, value in namespace.items():
            if isinstance(value, Federation):
                assert value.spark is self.spark, (
                    f"{block.where}: {name} = Federation(...) started a second Spark session instead of the running one"
                )


def _execute(block: Block, namespace: dict[str, Any]) -> str | None:
    """Run the block; None, or the traceback from the block's own frame on.

    Compiled with the Markdown file's name and line numbers, so the traceback quotes the
    doc's lines (pytest's own view of the frame would print the whole file).
    """
    code = compile("\n" * block.line + block.code, str(block.path), "exec")
    try:
        exec(code, namespace)  # the documentation's own examples
    except Exception as error:  # noqa: BLE001 - reported by the caller
        assert error.__traceback__ is not None  # a caught exception has one
        return "".join(traceback.format_exception(type(error), error, error.__traceback__.tb_next))
    return None


# ---------------------------------------------------------------- fixtures and tests
@pytest.fixture(scope="module")
def docs_world(spark, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[DocWorld]:
    """A small ``make demo`` world in a temporary folder, which becomes the working directory."""
    from tools.demo.lake import build_lake, build_space
    from tools.demo.world import build_world

    folder = tmp_path_factory.mktemp("docs")
    data = folder / "demo-data"
    quiet = Console(file=open(os.devnull, "w"), width=120)  # closed below
    build_world(data, orders=ORDERS, console=quiet)
    build_space(data / "space.db")
    build_lake(spark, data, READINGS, rebuild=False, console=quiet)
    quiet.file.close()
    (folder / ".venv").symlink_to(VENV)  # `.venv/bin/sluice` as the README writes it
    written: dict[str, Block] = {}
    for block in FILES:
        assert block.file is not None  # FILES holds the blocks that name one
        if block.file in written and written[block.file].code != block.code:
            raise AssertionError(f"{block.where} and {written[block.file].where} both write {block.file}, differently")
        written[block.file] = block
        target = folder / block.file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.code, encoding="utf-8")

    # the shell blocks this session runs: those selected, and those above a selected Python block
    chosen = {
        cast(Block, item.callspec.params["block"])  # pytest types parameters as object
        for item in request.session.items
        if isinstance(item, pytest.Function)
        and item.module is request.module
        and hasattr(item, "callspec")
        and "block" in item.callspec.params
    }
    awaited = {
        block
        for block in SHELL
        if any(p.path == block.path and p.index > block.index for p in chosen if p.language == "python")
    }
    wanted = [block for block in SHELL if not skip_reason(block) and (block in chosen or block in awaited)]
    wanted.sort(key=lambda block: block not in awaited)  # first those a Python block waits for
    previous = Path.cwd()
    os.chdir(folder)
    shell = ShellRunner(wanted, folder) if wanted else None
    world = DocWorld(spark, folder, shell)
    try:
        yield world
    finally:
        if shell is not None:
            shell.stop()
        world.restore_session()
        os.chdir(previous)
    assert dict(spark.conf.getAll) == world.baseline, "the examples changed the shared session's settings for good"


def test_every_doc_is_read() -> None:
    """The parser found the blocks this test is about (a broken fence would hide them)."""
    names = {block.name for block in BLOCKS}
    assert "README.md" in names and len(PYTHON) >= 5 and SHELL
    for block in BLOCKS:
        assert block.code.strip(), f"{block.where} is empty"
        if block.language in ("python", "sh") and block.before.lstrip().startswith("<!--"):
            assert _MARKER.match(block.before), (
                f"{block.where}: {block.before.strip()!r} is not a marker this test reads "
                "(<!-- needs: postgres, mariadb -->, <!-- not run: reason --> or <!-- file: NAME -->)"
            )


@pytest.mark.parametrize("block", PYTHON, ids=lambda block: block.id)
def test_python_block(docs_world: DocWorld, block: Block) -> None:
    reason = skip_reason(block)
    if reason:
        pytest.skip(reason)
    docs_world.run_python(block)


@pytest.mark.parametrize("block", SHELL, ids=lambda block: block.id)
def test_shell_block(docs_world: DocWorld, block: Block) -> None:
    reason = skip_reason(block)
    if reason:
        pytest.skip(reason)
    assert docs_world.shell is not None and block in docs_world.shell.results
    failure, transcript = docs_world.shell.wait(block)
    print("\n".join(transcript))
    if failure:
        pytest.fail(failure, pytrace=False)
