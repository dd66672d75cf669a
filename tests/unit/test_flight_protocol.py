"""The request format, signed tickets and credentials: every mistake named, no secret shown."""

from __future__ import annotations

import base64
import json

import pytest

from sluice.errors import ConfigError
from sluice.flight.auth import Credentials, authorization_header
from sluice.flight.protocol import MAX_REQUEST_BYTES, FilterSpec, Request, RequestError, parse_request
from sluice.serve.tickets import TicketSigner


def test_a_request_round_trips() -> None:
    request = Request(
        ("lite", "edge"),
        ("id", "t"),
        FilterSpec("sluice", {"version": 1, "conjuncts": [{"column": "flag"}]}),
        limit=5,
        partitions=4,
        session_zone="America/New_York",
    )
    assert parse_request(request.to_json()) == request
    substrait = Request(("lite", "edge"), filter=FilterSpec("substrait", b"\x1a\x00"))
    assert parse_request(substrait.to_json()) == substrait


@pytest.mark.parametrize(
    "payload,message",
    [
        (b"{not json", "not valid JSON"),
        (b"[1]", "must be a JSON object"),
        (b'{"table": ["a"], "colums": ["x"]}', "unknown key\\(s\\) colums"),
        (b'{"table": "lite.edge"}', "table must be a Flight path"),
        (b'{"table": ["a"], "limit": -1}', "limit must be an integer at least 0"),
        (b'{"table": ["a"], "limit": true}', "limit must be an integer"),
        (b'{"table": ["a"], "partitions": 1000}', "partitions must be an integer between 1 and 64"),
        (b'{"table": ["a"], "session_zone": "Mars/Olympus"}', "session_zone 'Mars/Olympus'"),
        (b'{"table": ["a"], "version": 2}', "version 2"),
        (b'{"table": ["a"], "filter": {"format": "sql"}}', "format is one of sluice, airport, substrait"),
        (b'{"table": ["a"], "filter": {"format": "substrait", "base64": "***"}}', "base64 text does not decode"),
        (b'{"table": ["\xc3\x28"]}', "not UTF-8"),
    ],
)
def test_malformed_requests_say_what_is_wrong(payload: bytes, message: str) -> None:
    with pytest.raises(RequestError, match=message):
        parse_request(payload)


def test_every_zone_this_machine_knows_passes_the_zone_name_check() -> None:
    """The shape check before ZoneInfo (no thousand-part names) refuses no real zone."""
    import zoneinfo

    for zone in sorted(zoneinfo.available_timezones()):
        assert parse_request(json.dumps({"table": ["a"], "session_zone": zone}).encode()).session_zone == zone


def test_an_oversized_request_is_refused_unread() -> None:
    payload = json.dumps({"table": ["a"], "columns": ["x" * 100] * (MAX_REQUEST_BYTES // 100)}).encode()
    with pytest.raises(RequestError, match="the server accepts at most 1,048,576"):
        parse_request(payload)


def test_tickets_are_signed() -> None:
    signer = TicketSigner()
    ticket = signer.issue({"request": "SELECT 1", "partition": 0})
    assert signer.redeem(ticket) == {"request": "SELECT 1", "partition": 0}
    forged = ticket.replace(b"SELECT 1", b"SELECT 2")
    with pytest.raises(RequestError, match="not issued by this server"):
        signer.redeem(forged)
    with pytest.raises(RequestError, match="not issued by this server"):
        TicketSigner().redeem(ticket)  # another server (or this one after a restart)


def test_credentials_accept_bearer_and_basic_and_nothing_else() -> None:
    both = Credentials(token="s3cr3t", user="ada", password="pw-9")
    assert both.accepts("Bearer s3cr3t") and both.accepts(authorization_header(None, "s3cr3t")[1].decode())
    assert both.accepts(authorization_header("ada", "pw-9")[1].decode())
    for refused in ("Bearer wrong", "Basic " + base64.b64encode(b"ada:nope").decode(), "Basic ***", "tok", ""):
        assert not both.accepts(refused), refused
    assert "s3cr3t" not in repr(both) and "pw-9" not in repr(both)


def test_credentials_from_the_environment() -> None:
    assert Credentials.from_environment({}) is None
    assert Credentials.from_environment({"SLUICE_FLIGHT_TOKEN": "t"}) == Credentials(token="t")
    with pytest.raises(ConfigError, match="set both SLUICE_FLIGHT_USER and SLUICE_FLIGHT_PASSWORD"):
        Credentials.from_environment({"SLUICE_FLIGHT_USER": "ada"})
