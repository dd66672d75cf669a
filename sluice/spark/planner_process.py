"""Sluice's planner as a process beside a driver that has no Python (spark-sql, the Thrift or Connect server).

The JVM layer (``io.sluice.spark.ProcessPlanner``) starts ``python -m sluice.spark.planner_process``
on a Sluice catalog's first request when no PySpark driver registered a py4j planner, and speaks
the same JSON messages to it as to that callback (:data:`sluice.spark.bridge.METHODS`): one request
a line on stdin, ``METHOD<TAB>REQUEST-JSON``, one answer a line on stdout, the answer's JSON. JSON
as both sides write it holds no raw line break, so a line is a message. Requests come one at a
time (the JVM side holds a lock while one is answered).

The process lives as long as its stdin: the JVM that started it closing the pipe (it exited,
or was killed) ends it. Anything printed goes to stderr (the driver's log), never into the
answers' pipe.
"""

from __future__ import annotations

import sys

from sluice.spark.bridge import CALLBACK, PlannerCallback

#: a request line: the method's name, this separator, the request's JSON
SEPARATOR = "\t"


def serve(callback: PlannerCallback) -> None:
    """Answer request lines on stdin until it closes."""
    requests, answers = sys.stdin, sys.stdout
    sys.stdout = sys.stderr  # a stray print must not reach the answers' pipe
    for line in requests:
        method, _, request = line.rstrip("\n").partition(SEPARATOR)
        answers.write(callback.call(method, request) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve(CALLBACK)
