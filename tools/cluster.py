"""A standalone Spark cluster on loopback: one master and N workers, from pyspark's own ``spark-class``.

Local mode runs every task inside the driver's JVM, so it cannot show that what Sluice
ships to executors pickles and needs nothing that lives only on the driver. This cluster
runs executors in JVMs of their own (one per worker), with Python workers of their own,
in working directories of their own: a real cluster in everything but the shared file
system. It needs only Java and the ``pyspark`` package, no Spark download.

    python -m tools.cluster start --workers 2    # prints spark://127.0.0.1:PORT
    python -m tools.cluster status               # the master's view, as JSON
    python -m tools.cluster stop

Daemons run in process groups of their own (an executor and its Python workers belong to
their worker's group), so :meth:`Cluster.stop` ends everything a worker started. The
state (URLs, process ids, logs, work directories) lives in one folder, by default
``$TMPDIR/sluice-cluster``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sluice.errors import SluiceError

HOST = "127.0.0.1"
DEFAULT_DIR = Path(tempfile.gettempdir()) / "sluice-cluster"
STATE_FILE = "cluster.json"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class ClusterError(SluiceError):
    """The cluster did not come up, or there is none to talk to."""


@dataclass(frozen=True)
class Cluster:
    """A running loopback cluster: where its master listens and which process groups are its."""

    directory: str
    master_url: str  # spark://127.0.0.1:PORT, what a driver's --master names
    webui_url: str  # the master's web UI; <webui_url>/json/ is its state
    pids: tuple[int, ...]  # master first, then the workers; each leads its own process group
    work_dirs: tuple[str, ...]  # per worker: where its executors run (app-<id>/<executor>/ with their logs)

    def state(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """The master's JSON: workers with their state, active and completed applications."""
        return _master_json(self.webui_url, timeout_s)

    def alive_workers(self) -> int:
        return sum(1 for worker in self.state()["workers"] if worker["state"] == "ALIVE")

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM every process group (workers first), SIGKILL what is left after ``grace_s``."""
        groups = [pid for pid in reversed(self.pids) if _is_ours(pid)]
        for pid in groups:
            _signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and any(_members(pid) for pid in groups):
            time.sleep(0.1)
        for pid in groups:
            _signal_group(pid, signal.SIGKILL)
        state = Path(self.directory) / STATE_FILE
        if state.exists():
            state.unlink()


def spark_class() -> Path:
    """The ``spark-class`` launcher that ships inside the pyspark package."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "bin" / "spark-class"


def driver_conf(cores: int, executor_memory: str = "1g") -> dict[str, str]:
    """Settings for a driver on this cluster: its Python on the executors, and wait for all of them.

    ``spark.cores.max`` caps the application at ``cores`` (one executor per one-core
    worker); the scheduler waits until they are all registered (at most 120 s) so the first
    job already spreads over every worker.
    """
    return {
        "spark.pyspark.python": sys.executable,  # the venv's python: Sluice and its dependencies
        "spark.executor.memory": executor_memory,
        "spark.cores.max": str(cores),
        "spark.scheduler.minRegisteredResourcesRatio": "1.0",
        "spark.scheduler.maxRegisteredResourcesWaitingTime": "120s",
    }


def start(
    directory: str | Path = DEFAULT_DIR, workers: int = 2, cores: int = 1, memory: str = "1g", timeout_s: float = 90.0
) -> Cluster:
    """Start a master and ``workers`` workers on loopback; return once every worker is ALIVE.

    If anything fails to come up in ``timeout_s``, everything started is stopped and the
    error quotes the failing daemon's log.
    """
    folder = Path(directory).resolve()
    running = _load(folder)
    if running is not None and _is_spark_daemon(running.pids[0]):
        raise ClusterError(f"a cluster is already running at {running.master_url} (state in {folder}); stop it first")
    folder.mkdir(parents=True, exist_ok=True)
    port, webui = _free_port(), _free_port()
    master = Cluster(str(folder), f"spark://{HOST}:{port}", f"http://{HOST}:{webui}", (), ())
    deadline = time.monotonic() + timeout_s
    daemons: list[tuple[int, Path]] = []  # (pid, log)
    try:
        daemons.append(
            _launch(
                folder / "master.log", MASTER_CLASS, "--host", HOST, "--port", str(port), "--webui-port", str(webui)
            )
        )
        _wait(lambda: master.state(1.0)["status"] == "ALIVE", deadline, "the master", daemons)
        work_dirs = tuple(str(folder / f"worker-{index}") for index in range(workers))
        for index, work_dir in enumerate(work_dirs):
            daemons.append(
                _launch(
                    folder / f"worker-{index}.log",
                    WORKER_CLASS,
                    master.master_url,
                    "--host",
                    HOST,
                    "--cores",
                    str(cores),
                    "--memory",
                    memory,
                    "--work-dir",
                    work_dir,
                    "--webui-port",
                    "0",
                )
            )
        cluster = Cluster(str(folder), master.master_url, master.webui_url, tuple(pid for pid, _ in daemons), work_dirs)
        _wait(lambda: cluster.alive_workers() >= workers, deadline, f"{workers} workers", daemons)
    except BaseException:
        Cluster(str(folder), master.master_url, master.webui_url, tuple(pid for pid, _ in daemons), ()).stop()
        raise
    (folder / STATE_FILE).write_text(json.dumps(asdict(cluster), indent=2), encoding="utf-8")
    return cluster


def running(directory: str | Path = DEFAULT_DIR) -> Cluster:
    """The cluster whose state is in ``directory``; ClusterError if there is none."""
    folder = Path(directory).resolve()
    cluster = _load(folder)
    if cluster is None or not _is_spark_daemon(cluster.pids[0]):
        raise ClusterError(f"no cluster is running with state in {folder}")
    return cluster


def _load(folder: Path) -> Cluster | None:
    path = folder / STATE_FILE
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return Cluster(
        data["directory"], data["master_url"], data["webui_url"], tuple(data["pids"]), tuple(data["work_dirs"])
    )


def _launch(log: Path, main_class: str, *args: str) -> tuple[int, Path]:
    """Start a daemon in a process group of its own, output to ``log``; its pid leads the group."""
    launcher = spark_class()
    env = {**os.environ, "SPARK_HOME": str(launcher.parent.parent), "SPARK_LOCAL_IP": HOST}
    env.setdefault("SPARK_DAEMON_MEMORY", "512m")
    with open(log, "wb") as handle:
        process = subprocess.Popen(
            [str(launcher), main_class, *args],
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    return process.pid, log


def _wait(ready: Callable[[], bool], deadline: float, what: str, daemons: list[tuple[int, Path]]) -> None:
    """Poll ``ready()`` until it is true. Fail past ``deadline``, or as soon as a daemon has
    exited (a port taken, no Java), quoting the last lines of that daemon's log."""
    while time.monotonic() < deadline:
        dead = [log for pid, log in daemons if _exited(pid)]
        if dead:
            raise ClusterError(f"{what}: a daemon exited; last lines of {dead[0]}:\n{_tail(dead[0])}")
        try:
            if ready():
                return
        except (OSError, ValueError, KeyError):  # not listening yet, or a half-written answer
            pass
        time.sleep(0.25)
    log = daemons[-1][1]
    raise ClusterError(f"{what} did not come up in time; last lines of {log}:\n{_tail(log)}")


def _exited(pid: int) -> bool:
    """Whether the daemon this process launched has exited. ``spark-class`` execs the JVM in the
    launcher's own process, so the child's exit status is the answer, free of races with the
    moments when the launcher is between programs (a scan of the group's command lines, used
    for processes this one did not start, can miss the JVM there on a loaded machine)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:  # not our child (another process started the cluster)
        return not _is_ours(pid)
    return done != 0


def _tail(log: Path, lines: int = 15) -> str:
    return "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]) if log.exists() else ""


def _master_json(webui_url: str, timeout_s: float) -> dict[str, Any]:
    with urllib.request.urlopen(f"{webui_url}/json/", timeout=timeout_s) as response:
        return json.loads(response.read())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _is_spark_daemon(pid: int) -> bool:
    """Whether ``pid`` is still one of our daemons (a recycled pid must never be signalled)."""
    return b"org.apache.spark.deploy." in _command(pid)


def _command(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _members(pgid: int) -> list[int]:
    """The live (non-zombie) processes of group ``pgid``; an exited leader that is our child is reaped first."""
    try:
        os.waitpid(pgid, os.WNOHANG)
    except ChildProcessError:
        pass
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _is_ours(pgid: int) -> bool:
    """A group is ours while a Spark JVM (daemon or executor) is in it."""
    return any(b"org.apache.spark." in _command(pid) for pid in _members(pgid))


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- command line
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.cluster", description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("start", "stop", "status"))
    parser.add_argument(
        "--dir", default=str(DEFAULT_DIR), help="state, logs and work directories (default %(default)s)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores", type=int, default=1, help="cores per worker")
    parser.add_argument(
        "--memory", default="1g", help="memory per worker (an executor needs spark.executor.memory, 1g)"
    )
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for the workers to register")
    args = parser.parse_args(argv)
    try:
        if args.command == "start":
            cluster = start(args.dir, args.workers, args.cores, args.memory, args.timeout)
            print(cluster.master_url)
            print(f"web UI {cluster.webui_url}, logs and work directories in {cluster.directory}", file=sys.stderr)
        elif args.command == "stop":
            running(args.dir).stop()
        else:
            cluster = running(args.dir)
            state = cluster.state()
            print(
                json.dumps(
                    {
                        "master": cluster.master_url,
                        "webui": cluster.webui_url,
                        "workers": [
                            {k: w[k] for k in ("id", "state", "cores", "coresused", "memory")} for w in state["workers"]
                        ],
                        "activeapps": [app["name"] for app in state["activeapps"]],
                    },
                    indent=2,
                )
            )
    except (ClusterError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
