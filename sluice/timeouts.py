"""How long a source may take to answer a new connection: ``connect_timeout_s``.

A server that accepts the TCP connection and then says nothing (a hung server, a proxy
whose backend is gone, a firewall that drops the replies) would otherwise hold an attach
for as long as the driver's read timeout, which for MySQL was the statement timeout
(600 s). Every source bounds connecting, logging in and its first answer by this one
setting, and a message about a wait that ran out names it with its value, so the user
knows what to raise.

It comes from ``attach(..., connect_timeout_s=...)``, the catalog key of the same name, or
the URL option ``?connect_timeout_s=``, in that order; 10 s if none gives it.
"""

from __future__ import annotations

import math

from sluice.errors import ConfigError
from sluice.urls import SourceUrl

DEFAULT_CONNECT_TIMEOUT_S = 10.0
#: the URL query option every source reads (and removes before handing the URL to a driver)
URL_OPTION = "connect_timeout_s"


def connect_timeout(name: str, url: SourceUrl, given: float | None) -> float:
    """The source's connect timeout in seconds: ``given``, else the URL's option, else the default."""
    if given is None:
        text = url.options.get(URL_OPTION)
        if text is None:
            return DEFAULT_CONNECT_TIMEOUT_S
        try:
            given = float(text)
        except ValueError:
            raise ConfigError(
                f"source {name!r}: the URL option {URL_OPTION} must be a number of seconds, not {text[:40]!r}"
            ) from None
    if isinstance(given, bool) or not isinstance(given, (int, float)) or not 0 < given < math.inf:
        raise ConfigError(f"source {name!r}: {URL_OPTION} must be a positive number of seconds")
    return float(given)


def waited(what: str, seconds: float) -> str:
    """The clause a timeout message ends with: what ran out, named as the user sets it."""
    return f"no answer within {URL_OPTION}={seconds:g} ({what})"
