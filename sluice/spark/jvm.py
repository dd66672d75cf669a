"""Sluice's JVM classes: compiled from ``java/`` with ``javac`` against the pyspark wheel's jars.

The catalog layer (``io.sluice.spark``) is the only Java in Sluice: Spark's connector API
is Java and PySpark has no Python catalog. No jar is committed and nothing is fetched:
set-up (``python -m sluice.spark.jvm``, run by ``scripts/setup.sh``) compiles the sources
into ``build/sluice-spark.jar``, and a session built by Sluice puts that jar on the
driver's class path. Executors need none of it: reads run in the Python data source.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pyspark

from sluice.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "java"
#: where the jar is built; SLUICE_JAR names another (a jar built elsewhere)
JAR = Path(os.environ.get("SLUICE_JAR", ROOT / "build" / "sluice-spark.jar"))


def spark_jars() -> Path:
    return Path(pyspark.__file__).resolve().parent / "jars"


def _fingerprint() -> str:
    """What the jar depends on: every source file and the Spark version compiled against."""
    digest = hashlib.sha256(pyspark.__version__.encode())
    for path in sorted(SOURCES.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(SOURCES)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _stamp() -> Path:
    return JAR.with_suffix(".sha256")


def ensure_jar() -> Path:
    """The catalog jar, compiled first if it is missing or older than its sources."""
    if "SLUICE_JAR" in os.environ or not SOURCES.is_dir():
        if not JAR.is_file():
            raise ConfigError(f"Sluice's catalog jar {JAR} is missing (run `make setup` in the Sluice checkout)")
        return JAR
    fingerprint = _fingerprint()
    if JAR.is_file() and _stamp().is_file() and _stamp().read_text().strip() == fingerprint:
        return JAR
    _compile()
    _stamp().write_text(fingerprint + "\n")
    return JAR


def _compile() -> None:
    javac = shutil.which("javac")
    if javac is None:
        raise ConfigError(
            "javac is not installed: Sluice compiles its Spark catalog classes at set-up "
            "(scripts/setup.sh installs a JDK; or install openjdk-17-jdk-headless)"
        )
    JAR.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sluice-javac-") as work:
        classes = Path(work) / "classes"
        sources = [str(p) for p in sorted(SOURCES.rglob("*.java"))]
        command = [
            javac,
            "-nowarn",
            "-encoding",
            "UTF-8",
            "--release",
            "17",
            "-d",
            str(classes),
            "-cp",
            str(spark_jars() / "*"),
            *sources,
        ]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise ConfigError(f"compiling Sluice's catalog classes failed:\n{result.stderr.strip()}")
        partial = JAR.with_suffix(".tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as jar:
            jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: sluice\n")
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, str(path.relative_to(classes)))
            for path in sorted((SOURCES / "META-INF").rglob("*")):
                if path.is_file():
                    jar.write(path, str(path.relative_to(SOURCES)))
        partial.replace(JAR)


if __name__ == "__main__":
    try:
        print(ensure_jar())
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(1)
