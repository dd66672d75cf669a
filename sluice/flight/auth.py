"""Who may call the server: a bearer token or a user and password, checked on every call.

The secrets come from the environment (``SLUICE_FLIGHT_TOKEN``; ``SLUICE_FLIGHT_USER`` with
``SLUICE_FLIGHT_PASSWORD``) or from the embedding program, never from a file or the
command line. A server middleware refuses any call whose ``authorization`` header does
not match, before a handler runs; comparisons are constant-time, and no message or log
line ever contains a presented or expected secret.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass

import pyarrow.flight as flight

from sluice.errors import ConfigError

TOKEN_ENV = "SLUICE_FLIGHT_TOKEN"
USER_ENV = "SLUICE_FLIGHT_USER"
PASSWORD_ENV = "SLUICE_FLIGHT_PASSWORD"


@dataclass(frozen=True, repr=False)
class Credentials:
    """What a client must present: a bearer token, a user and password, or either."""

    token: str | None = None
    user: str | None = None
    password: str | None = None

    def __post_init__(self) -> None:
        if (self.user is None) != (self.password is None):
            raise ConfigError("basic authentication needs both a user and a password")
        if self.token is None and self.user is None:
            raise ConfigError("credentials need a token, or a user and a password")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Credentials | None:
        """Credentials from the environment, or None when none are set."""
        token, user, password = (
            environ.get(TOKEN_ENV) or None,
            environ.get(USER_ENV) or None,
            environ.get(PASSWORD_ENV) or None,
        )
        if token is None and user is None and password is None:
            return None
        if (user is None) != (password is None):
            raise ConfigError(f"set both {USER_ENV} and {PASSWORD_ENV} for basic authentication, or neither")
        return cls(token, user, password)

    def accepts(self, authorization: str) -> bool:
        scheme, _, value = authorization.partition(" ")
        scheme = scheme.lower()
        if scheme == "bearer" and self.token is not None:
            return hmac.compare_digest(value.strip().encode(), self.token.encode())
        if scheme == "basic" and self.user is not None and self.password is not None:
            try:
                user, _, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
            except (binascii.Error, UnicodeDecodeError, ValueError):
                return False
            same_user = hmac.compare_digest(user.encode(), self.user.encode())
            return hmac.compare_digest(password.encode(), self.password.encode()) and same_user
        return False

    def __repr__(self) -> str:
        kinds = [k for k, v in (("token", self.token), ("basic", self.user)) if v is not None]
        return f"Credentials({'+'.join(kinds)})"


def authorization_header(user: str | None, secret: str) -> tuple[bytes, bytes]:
    """The header a client sends: basic when it has a user name, bearer otherwise."""
    if user:
        encoded = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
        return b"authorization", f"Basic {encoded}".encode()
    return b"authorization", f"Bearer {secret}".encode()


class AuthMiddlewareFactory(flight.ServerMiddlewareFactory):
    """Refuses every call that does not carry accepted credentials."""

    def __init__(self, credentials: Credentials) -> None:
        super().__init__()
        self.credentials = credentials

    def start_call(self, info: flight.CallInfo, headers: dict[str, list[str]]) -> None:
        presented = headers.get("authorization") or headers.get("Authorization") or []
        if not any(self.credentials.accepts(value) for value in presented):
            reason = "no authorization header" if not presented else "the credentials were refused"
            raise flight.FlightUnauthenticatedError(
                f"unauthenticated: {reason} (send 'authorization: Bearer <token>' or 'Basic <user:password>')"
            )
        return None
