"""A protocol method: its request and answer messages and the function that answers it.

The table of methods is :data:`sluice.spark.bridge.METHODS` (it holds the handlers, which live
above this package). Adding a method is a request/answer dataclass pair and one line there;
``python -m tools.protocol_schema`` then rewrites ``schema.json`` and ``Protocol.java``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Req = TypeVar("Req")
Ans = TypeVar("Ans")


@dataclass(frozen=True)
class Method(Generic[Req, Ans]):
    request: type[Req]
    answer: type[Ans]
    #: (the driver's planner, the decoded request) -> the answer; the planner is typed by the
    #: table's owner (sluice/spark/bridge.py): this package sits below the planner
    handler: Callable[[Any, Req], Ans]
