"""Tickets: what one stream needs, signed so that no client can forge one.

A ticket carries the remote request of its partition (SQL for a SQL source). A client
that could edit it could make the server run any query, so every ticket is signed with
HMAC-SHA256 under a key only the server holds; a ticket that does not verify is refused
before anything is read. The key is random per server process unless one is given (all
replicas behind one address must share it): tickets die with the process that issued them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from typing import Any

from sluice.flight.protocol import RequestError, check_size


class TicketSigner:
    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def issue(self, payload: dict[str, Any]) -> bytes:
        body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        return self._mac(body).encode("ascii") + b"." + body

    def redeem(self, ticket: bytes) -> dict[str, Any]:
        """The payload of a ticket this server issued; anything else is a :class:`RequestError`."""
        check_size(ticket, "the ticket")
        mac, dot, body = ticket.partition(b".")
        if not dot or not hmac.compare_digest(mac, self._mac(body).encode("ascii")):
            raise RequestError(
                "the ticket was not issued by this server (or the server has restarted since): "
                "ask for the flight's endpoints again"
            )
        return json.loads(body)

    def _mac(self, body: bytes) -> str:
        return hmac.new(self._key, body, hashlib.sha256).hexdigest()
