"""One INSERT OVERWRITE into a SQLite or DuckDB file, in a process of its own for a test to kill.

Run by ``tests/integration/test_writes_killed_files.py``: SQLite and DuckDB are written by the
Spark driver itself (sluice/write/sqlite.py, duckdb.py), so what a killed write leaves is what a
killed driver leaves. The test SIGKILLs this process's group (the Python driver, its JVM and
workers) while the driver holds the file's write transaction; prints ``written`` if it got to
the end first.

    python tests/killed_file_write.py --url sqlite:///tmp/k.db --table w_killed --rows 1000000
"""

from __future__ import annotations

import argparse


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--table", required=True, help="a table of the file's main schema: (id bigint, pad text)")
    parser.add_argument("--rows", type=int, required=True)
    args = parser.parse_args()

    from sluice import Federation
    from sluice.spark.session import build_session

    spark = build_session("local[1]", app_name="sluice-killed-file-write")
    fed = Federation(spark=spark)
    fed.attach("f", args.url, writable=True)
    fed.sql(f"INSERT OVERWRITE f.main.{args.table} SELECT id, repeat('x', 100) FROM range({args.rows})")
    print("written", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
