"""``sluice server``: a local Spark Connect server with Sluice's catalogs, in one command.

The server is the pyspark wheel's own ``SparkConnectServer`` (``bin/spark-submit --class
org.apache.spark.sql.connect.service.SparkConnectServer``; nothing downloaded), started in the
background with the settings of :func:`sluice.spark.session.session_conf` (Sluice's jar, the
planner's Python) and one ``spark.sql.catalog.NAME`` per source of the catalog file. It has no
Python driver: its catalogs plan in the planner process its JVM starts (docs/architecture.md, "A
driver without Python"), and a Spark Connect client (``SparkSession.builder.remote(
"sc://127.0.0.1:PORT")``) queries them with plain ``spark.sql``.

What runs is recorded in a state file, ``server.json`` in :func:`state_dir` (``$SLUICE_SERVER_DIR``,
else ``~/.sluice/server``), beside the server's log ``server.log``: one server per state
directory. ``status`` asks the recorded port whether it answers (a gRPC handshake), ``stop``
ends the server's process group (the JVM, its planner process and Python workers).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sluice.errors import SluiceError

if TYPE_CHECKING:  # imported where used: `sluice sql` reads the state file and must start fast
    from sluice.catalog import SourceConfig

SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DEFAULT_PORT = 15002  # Spark Connect's own default
HOST = "127.0.0.1"  # loopback only: the server has no authentication
DIR_VARIABLE = "SLUICE_SERVER_DIR"
#: seconds ``start`` waits for the server to answer (a JVM start on a loaded 2-core machine is ~30 s)
START_TIMEOUT_S = float(os.environ.get("SLUICE_SERVER_START_TIMEOUT_S", "300"))
ROOT = Path(__file__).resolve().parents[1]


class ServerError(SluiceError):
    """The server could not be started, reached or stopped; the message says why."""


@dataclass(frozen=True)
class Kind:
    """A server ``sluice`` starts from the wheel: its class, how it is told its port, how it is
    asked whether it answers, and the names of its command (``sluice server``, ``sluice thrift``),
    state file and log in :func:`state_dir` (one of each kind per directory)."""

    command: str  # the CLI command, the state file's and the log's stem
    noun: str  # "a Sluice <noun> already runs"
    label: str  # "the <label> exited while starting"
    main_class: str
    scheme: str  # of its URL: scheme://127.0.0.1:PORT

    def settings(self, port: int, folder: Path) -> dict[str, str]:
        """Spark settings that bind it to ``HOST:port`` and keep what it writes in ``folder``
        (the Thrift server's Hive metastore, Derby, would go to the working directory; the
        server itself keeps the caller's, where relative source paths such as
        ``sqlite:///demo-data/crm.db`` point)."""
        if self is THRIFT:
            return {
                "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={folder / 'metastore_db'};create=true",
                "spark.sql.warehouse.dir": str(folder / "warehouse"),
                "spark.driver.extraJavaOptions": f"-Dderby.stream.error.file={folder / 'derby.log'}",
            }
        return {"spark.connect.grpc.binding.address": HOST, "spark.connect.grpc.binding.port": str(port)}

    def arguments(self, port: int) -> list[str]:
        """Its own arguments after spark-submit's."""
        if self is THRIFT:
            return [
                "--hiveconf",
                f"hive.server2.thrift.bind.host={HOST}",
                "--hiveconf",
                f"hive.server2.thrift.port={port}",
            ]
        return []

    def answers(self, port: int, timeout_s: float) -> bool:
        return answers(port, timeout_s) if self is CONNECT else _listens(port, timeout_s)


CONNECT = Kind("server", "server", "Spark Connect server", SERVER_CLASS, "sc")
#: the Thrift JDBC/ODBC server (HiveServer2's protocol) of the wheel's spark-hive-thriftserver jar
THRIFT = Kind(
    "thrift",
    "Thrift server",
    "Thrift JDBC/ODBC server",
    "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
    "jdbc:hive2",
)


@dataclass(frozen=True)
class ServerState:
    """What ``start`` recorded: the server's process (its group leader) and where it listens."""

    pid: int
    port: int
    log: str
    started: float
    scheme: str = "sc"

    @property
    def url(self) -> str:
        return f"{self.scheme}://{HOST}:{self.port}"


def state_dir() -> Path:
    return Path(os.environ.get(DIR_VARIABLE) or Path.home() / ".sluice" / "server")


def _state_file(kind: Kind = CONNECT) -> Path:
    return state_dir() / f"{kind.command}.json"


def read_state(kind: Kind = CONNECT) -> ServerState | None:
    try:
        return ServerState(**json.loads(_state_file(kind).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def source_conf(configs: Iterable[SourceConfig]) -> dict[str, str]:
    """The ``spark.sql.catalog.NAME*`` settings of catalog sources (passwords stay in their
    variables: the planner process reads ``.password.env`` from the server's environment)."""
    from sluice.spark.session import catalog_conf

    conf: dict[str, str] = {}
    for config in configs:
        name = config.name.lower()
        conf.update(catalog_conf(name, config.url, config.password_env))
        prefix = f"spark.sql.catalog.{name}."
        conf[prefix + "statement_timeout_s"] = repr(config.statement_timeout_s)
        if config.partitions is not None:
            conf[prefix + "partitions"] = str(config.partitions)
        if config.connect_timeout_s is not None:
            conf[prefix + "connect_timeout_s"] = repr(config.connect_timeout_s)
        if config.writable:
            conf[prefix + "writable"] = "true"
    return conf


def server_command(port: int, conf: Mapping[str, str], kind: Kind = CONNECT) -> list[str]:
    """The wheel's ``spark-submit`` running the server with ``conf``."""
    import pyspark

    submit = Path(pyspark.__file__).resolve().parent / "bin" / "spark-submit"
    command = [str(submit), "--class", kind.main_class, "--name", f"Sluice {kind.label}"]
    for key, value in {**conf, **kind.settings(port, state_dir())}.items():
        command += ["--conf", f"{key}={value}"]
    return [*command, "spark-internal", *kind.arguments(port)]  # spark-internal: a class of Spark's own jars


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (our own child not yet reaped) is not running
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def answers(port: int, timeout_s: float = 2.0, host: str = HOST) -> bool:
    """Whether a gRPC server answers on ``host:port`` (an HTTP/2 handshake, no Spark call)."""
    import grpc

    channel = grpc.insecure_channel(f"{host}:{port}")
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout_s)
        return True
    except grpc.FutureTimeoutError:
        return False
    finally:
        channel.close()


def _listens(port: int, timeout_s: float) -> bool:
    """Whether something accepts connections on ``port`` (the Thrift server opens it once ready)."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def _free_port() -> int:
    """A port free now (the server binds it a few seconds later; another process may take it first)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def log_tail(path: str | Path, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def start(
    configs: Iterable[SourceConfig],
    port: int = DEFAULT_PORT,
    extra: Mapping[str, str] | None = None,
    kind: Kind = CONNECT,
) -> ServerState:
    """Start the server in the background and return once it answers on ``port`` (0: a free one).

    Fails when a server of this state directory still runs, when ``port`` is taken, when the
    jar is missing (:func:`session_conf`) or when the server exits or stays silent while starting
    (the message ends with its log's last lines)."""
    from sluice.spark.session import local_conf, session_conf

    running = read_state(kind)
    if running is not None and alive(running.pid):
        raise ServerError(
            f"a Sluice {kind.noun} already runs (pid {running.pid}, {running.url}); `sluice {kind.command} stop` first"
        )
    if port == 0:
        port = _free_port()
    elif not _port_free(port):
        raise ServerError(f"port {port} on {HOST} is in use: choose another with --port")
    conf = {**local_conf(), **session_conf(), **source_conf(configs), **(extra or {})}
    folder = state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{kind.command}.log"
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": HOST,
        "PYSPARK_PYTHON": sys.executable,
        # the planner process and the reader's workers import this Sluice
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    with log.open("w") as output:
        process = subprocess.Popen(  # the wheel's own launcher
            server_command(port, conf, kind),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group: `stop` ends the JVM and its children
        )
    state = ServerState(process.pid, port, str(log), time.time(), kind.scheme)
    deadline = time.monotonic() + START_TIMEOUT_S
    while not kind.answers(port, 1.0):
        if process.poll() is not None:
            raise ServerError(
                f"the {kind.label} exited while starting (exit code {process.returncode}); "
                f"its log {log} ends:\n{log_tail(log)}"
            )
        if time.monotonic() > deadline:
            _end(process.pid)
            raise ServerError(
                f"the {kind.label} did not answer on port {port} within {START_TIMEOUT_S:.0f} s "
                f"(stopped it); its log {log} ends:\n{log_tail(log)}"
            )
        time.sleep(0.5)
    _state_file(kind).write_text(json.dumps(asdict(state)) + "\n")
    return state


def status(kind: Kind = CONNECT) -> tuple[ServerState | None, str]:
    """The recorded server if it answers (else None) and a line saying what was found."""
    state = read_state(kind)
    noun = kind.noun
    if state is None:
        return None, f"no Sluice {noun} (no state in {state_dir()})"
    if not alive(state.pid):
        return (
            None,
            f"the Sluice {noun} (pid {state.pid}, port {state.port}) has exited; its log {state.log} ends:\n{log_tail(state.log)}",
        )
    if not kind.answers(state.port, 2.0):
        return None, f"the Sluice {noun} (pid {state.pid}) runs but does not answer on port {state.port}"
    return state, f"running: {state.url} (pid {state.pid}, log {state.log})"


def stop(timeout_s: float = 30.0, kind: Kind = CONNECT) -> ServerState:
    """Stop the recorded server (SIGTERM to its process group, SIGKILL after ``timeout_s``)."""
    state = read_state(kind)
    if state is None:
        raise ServerError(f"no Sluice {kind.noun} to stop (no state in {state_dir()})")
    _end(state.pid, timeout_s)
    _state_file(kind).unlink(missing_ok=True)
    return state


def _end(pid: int, timeout_s: float = 30.0) -> None:
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sent)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                os.waitpid(pid, os.WNOHANG)  # our own child (tests): reap it
            except ChildProcessError:
                pass
            if not alive(pid):
                return
            time.sleep(0.2)
